//! Whether the caller may act on a resource: the proof a statement with the owner's rights
//! needs before it writes, deletes or counts derived rows of that resource.
//!
//! Derived rows keyed by resource (the graph's closure and hubs) are read and written with the
//! extension owner's rights, which see every tenant's rows. Computed from the caller's view
//! of a resource it cannot see, they would come out empty and replace the true ones; counted,
//! they would tell the caller what another tenant has. So before such a statement runs, the
//! caller shows with its own rights that the resource is within its reach: a row of it that
//! it can see (to count) or lock for update (to write; on Postgres `FOR UPDATE` passes the
//! table's update policies as well as its select policies). A caller that cannot is answered
//! as for a resource nobody wrote, and nothing derived is touched.
//!
//! Row-level security is assumed to draw its line around whole resources, as the recipe of
//! docs/security.md does: a caller that sees a row of a resource sees all of them.

use super::dialect::RowLock;
use crate::{Conn, Result};

/// What the caller wants to do with a resource's derived rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// Count them.
    See,
    /// Write or delete them.
    Write,
}

/// Whether the caller can see (or lock, for [`Act::Write`]) a row of `resource` in one of
/// `tables` (documented tables with a `resource_id` column). SQLite has no row security: its
/// callers see every row, so the answer there is yes without a look.
pub(crate) fn may(conn: &mut dyn Conn, act: Act, tables: &[&str], resource: &str) -> Result<bool> {
    let dialect = conn.dialect();
    if dialect.row_security_sql().is_none() {
        return Ok(true);
    }
    let lock = match act {
        Act::See => "",
        Act::Write => dialect.row_lock(RowLock::KeyShare),
    };
    for table in tables {
        let sql = format!("SELECT 1 FROM {table} WHERE resource_id = ?1 LIMIT 1{lock}");
        if conn.query_value(&sql, &[resource.into()])?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}
