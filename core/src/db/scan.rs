//! Reads of an index's rows: without a statement where the host can (see [`super::direct`]),
//! else by the statement that names the same rows.

use super::direct::Scan;
use super::home;
use crate::{Conn, Result, Value, ValueRef};

/// Shows `f` the rows `scan` names, read without a statement where the host can
/// ([`Conn::scan_directly`]), else the rows of `sql` — which names the same rows, in
/// an order the index's is one of, with the same columns — until `f` returns `false`.
pub(crate) fn scan_or_query(
    conn: &mut dyn Conn,
    scan: &Scan<'_>,
    sql: &str,
    params: &[Value],
    f: &mut dyn FnMut(&[ValueRef<'_>]) -> Result<bool>,
) -> Result<()> {
    let mut failed = None;
    let read = conn.scan_directly(scan, &mut |row| {
        f(row).unwrap_or_else(|e| {
            failed = Some(e);
            false
        })
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    if read {
        return Ok(());
    }
    let mut more = true;
    home::for_each_row(conn, sql, params, &mut |row| {
        if more {
            more = f(row)?;
        }
        Ok(())
    })
}
