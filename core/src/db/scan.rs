//! Reads of an index's rows: without a statement where the host can (see [`super::direct`]),
//! else by the statements that name the same rows.

use super::direct::Scan;
use super::home;
use crate::{Conn, Result, Value, ValueRef};

/// A reader of rows: shown each row, it says whether to go on.
pub(crate) type RowFn<'f> = dyn FnMut(&[ValueRef<'_>]) -> Result<bool> + 'f;

/// Shows `f` the rows `scan` names, read without a statement where the host can
/// ([`Conn::scan_directly`]), else the rows of `sql` — which names the same rows, in
/// an order the index's is one of, with the same columns — until `f` returns `false`.
pub(crate) fn scan_or_query(
    conn: &mut dyn Conn,
    scan: &Scan<'_>,
    sql: &str,
    params: &[Value],
    f: &mut RowFn<'_>,
) -> Result<()> {
    scan_or_else(conn, scan, f, |conn, f| {
        let mut more = true;
        home::for_each_row(conn, sql, params, &mut |row| {
            if more {
                more = f(row)?;
            }
            Ok(())
        })
    })
}

/// [`scan_or_query`] with the statements left to `otherwise`, which shows `f` the same rows:
/// for statements whose parameters cost something to make, made only when they run.
pub(crate) fn scan_or_else(
    conn: &mut dyn Conn,
    scan: &Scan<'_>,
    f: &mut RowFn<'_>,
    otherwise: impl FnOnce(&mut dyn Conn, &mut RowFn<'_>) -> Result<()>,
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
    otherwise(conn, f)
}
