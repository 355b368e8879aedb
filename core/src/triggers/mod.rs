//! Row triggers as data: every trigger agentmem keeps on its tables, declared once — its
//! table, when it fires, the columns it reads and the core function that handles it
//! ([`catalog`]) — and rendered as each database's `CREATE TRIGGER` ([`render`]).
//!
//! Each backend has one entry point that runs any of them, as `mem__call` runs any function
//! of the function catalog. SQLite registers one SQL function per trigger over one dispatch
//! ([`fire_sqlite`]): its triggers pass the declared columns as arguments. Postgres binds
//! every trigger function to one C symbol, which reads the declared columns from the rows it
//! was given. Either way the handler sees a [`Fired`]. Adding a trigger is one declaration and
//! one handler; neither adapter changes.

mod catalog;
pub mod render;
mod sqlite;
mod trigger;

pub use catalog::{find, TRIGGERS};
pub(crate) use sqlite::refuse_nul_in;
pub use sqlite::{fire_sqlite, may_hold_nul, sqlite_functions, MAY_HOLD_NUL};
pub use trigger::{Event, Fired, Hosts, Rows, Timing, Trigger};

use crate::db::session::Session;
use crate::Conn;

/// Whether `mem_message_add` is inserting the message `id` itself, booked and to be indexed
/// by it: Postgres' message insert trigger lets such a row pass (`mem__adding(id)`, in its
/// condition), which costs less than calling it.
pub fn adding(conn: &mut dyn Conn, id: &str) -> bool {
    crate::threads::messages::adding(conn, id)
}

/// The SQL name of [`adding_booked`], which SQLite registers.
pub const ADDING_BOOKED: &str = "mem__adding_booked";

/// Whether `mem_message_add` is inserting the message `id`, booked already: SQLite's look for
/// the rows an `INSERT OR REPLACE` would remove, and its type check of a new message, pass over
/// it (`mem__adding_booked(id)`).
pub fn adding_booked(session: &mut Session, id: &str) -> bool {
    crate::threads::messages::adding_booked(session, id)
}
