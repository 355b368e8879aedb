//! The database-agnostic core of agentmem.
//!
//! Every rule of the product lives here: the schema and its migrations, message memory,
//! the search engine, and the options and errors that the SQL functions expose. The two
//! adapters (`sqlite-ext`, `pg-ext`) implement [`Conn`] for their database and translate SQL
//! arguments to calls into this crate, so SQLite and Postgres run the same code and the same
//! statements and therefore give the same answers.

pub mod api;
pub mod args;
pub mod columns;
pub mod data;
pub mod db;
pub mod error;
pub mod graph;
pub mod ids;
pub mod json_input;
pub mod json_opts;
pub mod memo;
pub mod memories;
pub mod om;
pub mod recall;
pub mod schema;
pub mod search;
pub mod tasks;
pub mod threads;
pub mod tokens;
pub mod tools;
pub mod triggers;
pub mod vectors;

pub use db::conn::Conn;
pub use db::dialect::Dialect;
pub use db::value::{Row, Value, ValueRef};
pub use error::{Error, Result};

/// The extension's version, as `mem_version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
