//! Shared helpers for the test suites: loading the SQLite extension and reaching Postgres.
