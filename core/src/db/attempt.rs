//! [`Conn::attempt`] for SQLite: a savepoint around the work.

use super::conn::{Conn, Work};
use crate::Result;

/// Runs `f` inside a savepoint, rolled back to when `f` fails. Inside a writing statement
/// SQLite opens no savepoint ("SQL statements in progress"): `f` then runs as part of the
/// statement, and its failure is the outer error, which fails the statement and undoes it.
pub fn with_savepoint(conn: &mut dyn Conn, f: &mut Work<'_>) -> Result<Result<()>> {
    if conn.execute("SAVEPOINT agentmem_attempt", &[]).is_err() {
        return f(conn).map(Ok);
    }
    match f(conn) {
        Ok(()) => {
            conn.execute("RELEASE agentmem_attempt", &[])?;
            Ok(Ok(()))
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO agentmem_attempt; RELEASE agentmem_attempt")?;
            Ok(Err(e))
        }
    }
}

/// [`Conn::in_context`] for a host whose errors reach the core as values (SQLite).
pub fn naming_errors(conn: &mut dyn Conn, context: &str, f: &mut Work<'_>) -> Result<()> {
    f(conn).map_err(|e| e.in_context(context))
}
