//! Task memory: the Postgres functions.
