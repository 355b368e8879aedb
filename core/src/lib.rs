//! The database-agnostic core of agentmem.
//!
//! Every rule of the product lives here: the schema and its migrations, message memory,
//! the search engine, and the options and errors that the SQL functions expose. The two
//! adapters (`sqlite-ext`, `pg-ext`) implement [`Conn`] for their database and translate SQL
//! arguments to calls into this crate, so SQLite and Postgres run the same code and the same
//! statements and therefore give the same answers.

// Every item is crate-private unless the adapters need it; `testing` opens the internals to
// the tests, so the visibility lints hold for the product's build.
#![warn(unreachable_pub)]
#![cfg_attr(feature = "testing", allow(unreachable_pub, private_interfaces))]

/// Declares modules the adapters do not need: crate-private, and public under the `testing`
/// feature, for the core's property tests, the fuzz targets and the benches. (Items take
/// `#[cfg_attr(feature = "testing", visibility::make(pub))]` the same way.)
macro_rules! internal {
    ($($m:ident),* $(,)?) => {$(
        #[cfg(feature = "testing")]
        pub mod $m;
        #[cfg(not(feature = "testing"))]
        pub(crate) mod $m;
    )*};
}

// The adapters' surface: the function and trigger catalogs, the connection and its session,
// the schema and the host's transaction moments.
pub mod api;
pub mod cluster;
pub mod db;
pub mod error;
pub mod memo;
pub mod schema;
pub mod time;
pub mod transaction;
pub mod triggers;

internal!(
    tools, args, columns, data, graph, ids, items, json_input, json_opts, memories, observer, om,
    recall, search, tasks, text, threads, tokens, vectors,
);
#[cfg(feature = "code")]
internal!(code);

pub use db::conn::Conn;
pub use db::dialect::Dialect;
pub use db::json_tree::JsonTree;
pub use db::strings::Strings;
pub use db::value::{Row, Value, ValueRef};
pub use error::{Error, Result};
pub use graph::outline::{code_language, code_reads};
pub use tokens::prepare_tables;

/// The extension's version, as `mem_version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
