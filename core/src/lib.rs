//! The database-agnostic core of agentmem.
//!
//! Every rule of the product lives here: the schema and its migrations, message memory,
//! the search engine, and the options and errors that the SQL functions expose. The two
//! adapters (`sqlite-ext`, `pg-ext`) implement [`Conn`] for their database and translate SQL
//! arguments to calls into this crate, so SQLite and Postgres run the same code and the same
//! statements and therefore give the same answers.

pub mod compaction;
pub mod conn;
pub mod error;
pub mod ids;
pub mod json_opts;
pub mod memory_tool;
pub mod message_search;
pub mod messages;
pub mod om;
pub mod recall;
pub mod schema;
pub mod search;
pub mod tasks;
pub mod threads;
pub mod tokens;
pub mod value;
pub mod working_memory;

pub use conn::{Conn, Dialect};
pub use error::{Error, Result};
pub use value::{Row, Value};

/// The extension's version, as `mem_version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
