//! What the CLI needs of a database connection, whichever the database.

use agentmem_core::api::Type;
use serde_json::Value as Json;

pub type Result<T> = std::result::Result<T, String>;

/// Where [`Db::each`] hands each row.
pub type Sink<'a> = &'a mut dyn FnMut(Vec<Json>) -> Result<()>;

/// A connection the CLI runs statements on.
pub trait Db: Send {
    /// The text of parameter `n` (from 1) in this dialect, read as an argument of type `ty`:
    /// parameters are sent as text, so a number or a boolean is cast from it.
    fn placeholder(&self, n: usize, ty: Type) -> String;

    /// Runs `sql` with text parameters and hands each row to `row`, as JSON values: NULL,
    /// numbers, text, booleans, and JSON where the database has a JSON type.
    fn each(&mut self, sql: &str, params: &[Option<&str>], row: Sink) -> Result<()>;

    /// Whether the database's functions run in this process (SQLite, whose extension the
    /// binary links): what they build at their first use can then be built ahead here.
    fn in_process(&self) -> bool {
        false
    }

    /// Readies the connection for a write of many rows; what that means is the database's.
    fn expect_bulk(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Bytes as lower-case hex (vectors, in JSON output).
pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
