//! The search engine (issue 3).
