//! The database-agnostic core of agentmem.
//!
//! Every rule of the product lives here: the schema and its migrations, message memory,
//! the search engine, and the options and errors that the SQL functions expose. The two
//! adapters (`sqlite-ext`, `pg-ext`) implement [`Conn`] for their database and translate SQL
//! arguments to calls into this crate, so SQLite and Postgres run the same code and the same
//! statements and therefore give the same answers.

pub mod api;
pub mod compaction;
pub mod conn;
pub mod error;
pub mod failpoint;
pub mod ids;
pub mod json_opts;
pub mod memory_tool;
pub mod message_search;
pub mod messages;
pub mod om;
pub mod recall;
pub mod row;
pub mod schema;
pub mod search;
pub mod sqlite_triggers;
pub mod tasks;
pub mod thread_context;
pub mod threads;
pub mod tokens;
pub mod value;
pub mod working_memory;

pub use conn::{Conn, Dialect};
pub use error::{Error, Result};
pub use value::{Row, Value};

/// A tool argument's text. Tools answer every bad call with `{"success":false,…}` instead
/// of an SQL error, so their arguments arrive as bytes and are checked here.
pub(crate) fn tool_text<'a>(arg: &str, bytes: Option<&'a [u8]>) -> Result<Option<&'a str>, String> {
    bytes
        .map(|b| std::str::from_utf8(b).map_err(|_| format!("{arg} must be valid UTF-8 text")))
        .transpose()
}

/// The extension's version, as `mem_version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
