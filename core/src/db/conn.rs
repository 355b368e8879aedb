//! The one interface the core needs from a database.
//!
//! Core code writes its statements once, in the common subset of SQLite and Postgres SQL,
//! with numbered placeholders `?1`, `?2`, … . Each adapter runs them inside the caller's
//! transaction (the SQL function's own statement), so a rollback undoes everything the core did.

use super::dialect::Dialect;
use super::direct::{Scan, Vouch};
use super::session::Session;
use super::value::ValueRef;
use crate::{Result, Row, Value};

/// Work a connection runs on the core's behalf ([`Conn::attempt`], [`Conn::in_context`]).
pub type Work<'a> = dyn FnMut(&mut dyn Conn) -> Result<()> + 'a;

/// What [`Conn::update_directly`] asks about the locked row: given its columns, the new values
/// of the columns to change, or `None` to leave it.
pub type Change<'a> = dyn FnMut(&[Value]) -> Option<Vec<(&'static str, Value)>> + 'a;

/// A connection inside the current transaction.
pub trait Conn {
    fn dialect(&self) -> Dialect;

    /// Runs a statement and returns every row it yields.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>>;

    /// Runs a statement that yields no rows; returns the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;

    /// Runs several `;`-separated statements without parameters (schema scripts).
    fn execute_batch(&mut self, sql: &str) -> Result<()>;

    /// Runs a statement and shows each row to `f`, borrowed from the host's buffers where it
    /// allows (SQLite), so that a scan which only reads its rows allocates nothing per row.
    fn for_each_row(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(&[ValueRef<'_>]) -> Result<()>,
    ) -> Result<()> {
        for row in self.query(sql, params)? {
            let refs: Vec<ValueRef<'_>> = row.iter().map(Value::as_ref).collect();
            f(&refs)?;
        }
        Ok(())
    }

    /// [`Conn::for_each_row`] for a statement whose columns are blobs: `f` sees each row's
    /// blobs (a non-blob column shows as empty).
    fn for_each_blobs(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(&[&[u8]]) -> Result<()>,
    ) -> Result<()> {
        self.for_each_row(sql, params, &mut |row| {
            let blobs: Vec<&[u8]> = row
                .iter()
                .map(|v| match v {
                    ValueRef::Blob(b) => *b,
                    _ => &[][..],
                })
                .collect();
            f(&blobs)
        })
    }

    /// Runs `f` so that its failure — the core's error or the database's (a row policy, a
    /// constraint, a trigger) — comes back as a value, with everything `f` wrote undone: a
    /// savepoint (the default, for hosts whose errors reach the core as values), a
    /// subtransaction in Postgres. This is what lets a tool answer `success:false` instead of ending the
    /// caller's transaction. The outer error says the failure could not be undone on its own
    /// (SQLite inside a writing statement, which opens no savepoint): the call then fails
    /// whole, and the statement's failure undoes it.
    fn attempt(&mut self, f: &mut Work<'_>) -> Result<Result<()>> {
        // Inside a writing statement SQLite opens no savepoint ("SQL statements in
        // progress"): `f` then runs as part of the statement, and its failure is the outer
        // error, which fails the statement and undoes it.
        if self.execute("SAVEPOINT agentmem_attempt", &[]).is_err() {
            return f(self.as_conn()).map(Ok);
        }
        match f(self.as_conn()) {
            Ok(()) => {
                self.execute("RELEASE agentmem_attempt", &[])?;
                Ok(Ok(()))
            }
            Err(e) => {
                self.execute_batch("ROLLBACK TO agentmem_attempt; RELEASE agentmem_attempt")?;
                Ok(Err(e))
            }
        }
    }

    /// Runs `f`, putting `context` before the message of any error it raises
    /// ([`crate::Error::in_context`]), the database's included: Postgres raises those past
    /// the core, so its adapter catches them and raises them again, named. An import names
    /// the row of its document that a trigger refused.
    fn in_context(&mut self, context: &str, f: &mut Work<'_>) -> Result<()> {
        f(self.as_conn()).map_err(|e| e.in_context(context))
    }

    /// Runs `f` with SQLite's defensive mode (`SQLITE_DBCONFIG_DEFENSIVE`, which refuses
    /// `PRAGMA writable_schema`) lifted, and puts the connection's setting back afterwards: a
    /// migration edits `sqlite_schema` as SQLite documents for changing a `CHECK`. No SQL of
    /// the caller's runs meanwhile. The default runs `f` as it is, and the edit then does
    /// what the connection's setting allows.
    fn unguarded_schema(&mut self, f: &mut Work<'_>) -> Result<()> {
        f(self.as_conn())
    }

    /// This connection as the core's work takes it (`self`): what the default [`Conn::attempt`]
    /// and [`Conn::in_context`], which suit a host whose errors reach the core as values, pass
    /// on.
    fn as_conn(&mut self) -> &mut dyn Conn;

    /// What this connection keeps between statements and calls (see [`Session`]): one per
    /// connection, owned by the adapter, which tells it when transactions end.
    fn session(&mut self) -> &mut Session;

    /// The first column of the first row, if any.
    fn query_value(&mut self, sql: &str, params: &[Value]) -> Result<Option<Value>> {
        Ok(self
            .query(sql, params)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next()))
    }

    /// Asks the host whether the running call was cancelled (SQLite: `sqlite3_interrupt` or a
    /// progress handler; Postgres: a cancel request or `statement_timeout`), and returns its
    /// error if so. Long loops in the core call it through [`crate::search::interrupt`].
    fn check_interrupt(&mut self) -> Result<()> {
        Ok(())
    }

    /// The failpoint the host set for crash tests, with the marker file to create when it is
    /// reached (see [`crate::db::failpoint`]); `None`, the default, disables them.
    fn failpoint(&mut self) -> Option<(String, String)> {
        None
    }

    /// Whether row-level security hides rows of `table` from the current user (Postgres
    /// policies; SQLite has none). A search must then ask about every key it returns, as it
    /// does for a filter, instead of taking the index's best keys as they come.
    fn row_security(&mut self, table: &str) -> Result<bool> {
        let Some(sql) = self.dialect().row_security_sql() else {
            return Ok(false);
        };
        Ok(self
            .query_value(sql, &[table.into()])?
            .and_then(|v| v.as_i64())
            .is_some_and(|v| v != 0))
    }

    /// Whether the running statement is its whole transaction (Postgres outside a transaction
    /// block: an autocommit call). The default, `false`, suits hosts where nothing depends on
    /// it.
    fn statement_is_transaction(&mut self) -> bool {
        false
    }

    /// Told where the index pages this transaction deleted were stored (what
    /// [`Dialect::freed_place_sql`] returned for them), the host may hand their space back to
    /// its writers once no snapshot can read them (see [`Conn::reuse_freed_pages`]). The
    /// default forgets them: SQLite reuses freed pages by itself.
    fn pages_freed(&mut self, _places: &[i64]) -> Result<()> {
        Ok(())
    }

    /// Called before a segment's pages are written: the host makes the space of the pages
    /// earlier transactions deleted reusable by the rows that follow. Postgres would otherwise
    /// keep it until `VACUUM`, and every merge of a long load would extend the table's file.
    /// The default does nothing.
    fn reuse_freed_pages(&mut self) -> Result<()> {
        Ok(())
    }

    /// Reads the rows `scan` names without a statement, where the host can (see
    /// [`crate::db::direct`]): each row's columns are shown to `f`, borrowed from the row
    /// where the host allows, until it returns `false`.
    /// They are the rows the statement would read, with its rights and snapshot. `false` when
    /// the host cannot (the default): the caller then runs its statement.
    fn scan_directly(
        &mut self,
        _scan: &Scan<'_>,
        _f: &mut dyn FnMut(&[ValueRef<'_>]) -> bool,
    ) -> Result<bool> {
        Ok(false)
    }

    /// Told that `table`, whose rows [`Scan::kept`] lets the host keep, was written in this
    /// transaction: the rows kept are stale for everyone once it commits. The default keeps
    /// nothing.
    fn table_changed(&mut self, _table: &str) -> Result<()> {
        Ok(())
    }

    /// Whether rules rewrite a statement on `table` into several (Postgres' `CREATE RULE …
    /// DO ALSO`), which refuses to run inside a data-modifying `WITH`. The default, `false`,
    /// suits SQLite, which has no rules.
    fn rewrites(&mut self, _table: &str) -> Result<bool> {
        Ok(false)
    }

    /// Whether the host can write these tables without statements, each as its [`Vouch`]
    /// says (see [`crate::db::direct`]). The default, `false`, suits SQLite, whose statements
    /// cost little more than their writes.
    fn writes_directly(&mut self, _vouches: &[&Vouch]) -> Result<bool> {
        Ok(false)
    }

    /// Inserts a row of `v.table` without a statement: the named columns take these values,
    /// the others their defaults; returns the `returning` columns of the row written. Only
    /// after [`Conn::writes_directly`] said yes for `v` in this call.
    fn insert_directly(
        &mut self,
        v: &Vouch,
        _values: &[(&str, Value)],
        _returning: &[&str],
    ) -> Result<Vec<Value>> {
        Err(crate::Error::internal(format!(
            "{} cannot be written directly",
            v.table
        )))
    }

    /// Inserts rows of `v.table` without a statement: `values` holds them end to end, each
    /// giving `columns` their values in order, the other columns their defaults. Only after
    /// [`Conn::writes_directly`] said yes for `v` in this call.
    fn insert_rows_directly(
        &mut self,
        v: &Vouch,
        _columns: &[&str],
        _values: &[Value],
    ) -> Result<()> {
        Err(crate::Error::internal(format!(
            "{} cannot be written directly",
            v.table
        )))
    }

    /// Updates the row of `v.table` whose primary key (one column) is `key` as an `UPDATE`
    /// would: shows its newest version's `read` columns to `change` and writes the new values
    /// it returns, asking again when a concurrent writer changed the row first. `false` when
    /// there is no such row, or `change` returned `None` (the row is left as it was). Only
    /// after [`Conn::writes_directly`] said yes for `v` in this call.
    fn update_directly(
        &mut self,
        v: &Vouch,
        _key: &Value,
        _read: &[&str],
        _change: &mut Change<'_>,
    ) -> Result<bool> {
        Err(crate::Error::internal(format!(
            "{} cannot be written directly",
            v.table
        )))
    }

    /// The database's clock in Unix epoch milliseconds: leases and defaults use it so that
    /// every client of one database agrees on the time.
    fn now_ms(&mut self) -> Result<i64> {
        let sql = self.dialect().clock_ms_sql();
        self.query_value(sql, &[])?
            .and_then(|v| v.as_i64())
            .ok_or_else(|| crate::Error::internal("database clock returned no value"))
    }

    /// `at` when the caller gave a time (a `now` option), else the database's clock.
    fn now_or(&mut self, at: Option<i64>) -> Result<i64> {
        match at {
            Some(t) => Ok(t),
            None => self.now_ms(),
        }
    }
}
