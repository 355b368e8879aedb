//! Failpoints for crash tests: named places inside long writes where a test can park the
//! writer so that it can kill it exactly there (SIGKILL of a SQLite process, termination or
//! SIGKILL of a Postgres backend), and then check that nothing was left half written.
//!
//! Off unless the host names one ([`crate::Conn::failpoint`]: the environment of a SQLite
//! process, the `agentmem.failpoint` setting of a Postgres session). When the running write
//! reaches the named place, it creates the marker file the host gave and waits there, asking
//! the host about cancellation, for at most a minute.

use crate::{Conn, Result};

/// Between the new segment and the move of the delta into it.
pub(crate) const FLUSH: &str = "search.flush";
/// Between the merged segment and the removal of its inputs.
pub(crate) const MERGE: &str = "search.merge";
/// In the middle of a blocked-state refresh (some tasks written, their children not yet).
pub(crate) const REFRESH: &str = "tasks.refresh";

/// Parks the write at `name` if the host asked for it.
pub(crate) fn hit(conn: &mut dyn Conn, name: &str) -> Result<()> {
    let Some((wanted, mark)) = conn.failpoint() else {
        return Ok(());
    };
    if wanted != name {
        return Ok(());
    }
    std::fs::write(&mark, name).ok();
    for _ in 0..6000 {
        conn.check_interrupt()?;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(())
}
