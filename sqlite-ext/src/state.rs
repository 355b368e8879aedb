//! What agentmem keeps per SQLite connection: the core's [`Session`], the connection's
//! prepared statements, and how deep the connection is inside agentmem's own calls.
//!
//! One is made when the extension is loaded into (or registered for) a connection and handed
//! to everything registered there — each function's user data, each virtual table module's
//! client data — so a call finds its connection's state without a process-wide map. The
//! statement cache's module owns it: SQLite destroys a connection's modules when it closes
//! the connection, and that frees it; its statements are finalized earlier, when the
//! connection disconnects its virtual tables, before `sqlite3_close` checks for busy
//! statements (see [`crate::conn`]).

use agentmem_core::db::session::Session;
use agentmem_core::memo::FastState;
use sqlite_loadable::ext::sqlite3_stmt;
use std::collections::HashMap;

/// One connection's state.
#[derive(Default)]
pub struct State {
    pub session: Session,
    /// Prepared statements by the core's SQL text.
    pub statements: HashMap<String, *mut sqlite3_stmt, FastState>,
    /// Whether the statement cache's table is connected, so that its disconnect will
    /// finalize the statements: nothing is cached until it is.
    pub caching: bool,
    /// How deep the connection is inside agentmem's calls (`mem__internal()`).
    pub depth: u32,
}

/// A connection's [`State`], as its functions and tables hold it.
#[derive(Clone, Copy)]
pub struct Shared(pub *mut State);

impl Shared {
    /// A new state, for a connection the extension is being registered on.
    pub fn new() -> Shared {
        Shared(Box::into_raw(Box::default()))
    }

    /// The state.
    ///
    /// # Safety
    /// The connection is open (it frees the state when it closes), and the caller holds no
    /// other borrow of it: SQLite runs one call at a time on a connection, and calls borrow
    /// their connection's state only between the statements they run.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get(&self) -> &mut State {
        &mut *self.0
    }

    /// Frees the state (the owning module's destructor, when the connection closes).
    ///
    /// # Safety
    /// Nothing uses the state afterwards.
    pub unsafe fn free(self) {
        drop(Box::from_raw(self.0));
    }
}
