//! Observational memory and working memory: the Postgres functions.
