//! agentmem as a PostgreSQL extension: `CREATE EXTENSION agentmem;`.
//!
//! This crate only translates: SQL values to core arguments and back, and the core's [`Conn`]
//! onto SPI. Every rule lives in `agentmem-core`.
//!
//! [`Conn`]: agentmem_core::Conn

// Internal SQL functions (trigger handlers, bootstrap) are spelled `mem__name`, like the
// SQLite ones, so that users can tell them from the public API.
#![allow(non_snake_case)]

use pgrx::prelude::*;

mod conn;
mod functions;
mod triggers;

pgrx::pg_module_magic!();

// The schema comes from the same migration scripts as SQLite's `mem_init()`. Running them
// from the extension script makes every table, index and trigger a member of the extension.
extension_sql!(
    "SELECT mem__bootstrap();",
    name = "bootstrap_schema",
    finalize
);

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
