//! What a host tells the core about its transactions. A transaction that writes messages
//! holds their search documents in the connection's session until it commits, so the host
//! calls in at its transaction's moments: SQLite from the virtual table whose transaction
//! hooks it has, Postgres from its transaction callbacks and a deferred trigger.

use crate::db::session::Session;
use crate::search::{self, held::Held, store};
use crate::{Conn, Result};

/// A transaction begins: what the connection kept of an earlier one that ended without
/// telling the core (its held documents, the keys it stored) goes.
pub fn begin(conn: &mut dyn Conn) {
    *search::held::of(conn) = Held::default();
    store::forget_fresh(conn);
}

/// A savepoint begins: when the level it nests in holds a lot, that is written first, so
/// that a transaction of many small statements holds a bounded amount.
pub fn savepoint(conn: &mut dyn Conn, id: u64) -> Result<()> {
    if search::held::of(conn).top_bytes() >= search::HELD_BYTES {
        search::write_held_top(conn)?;
    }
    conn.session().savepoint(id);
    Ok(())
}

/// The transaction is about to commit: the documents it holds are written into the index.
pub fn before_commit(conn: &mut dyn Conn) -> Result<()> {
    search::write_held(conn)
}

/// Whether the session still holds documents that were never written (a commit now would
/// lose them).
pub fn holds_unwritten(session: &mut Session) -> bool {
    session.part::<Held>().any()
}
