//! The one interface the core needs from a database.
//!
//! Core code writes its statements once, in the common subset of SQLite and Postgres SQL,
//! with numbered placeholders `?1`, `?2`, … . Each adapter runs them inside the caller's
//! transaction (the SQL function's own statement), so a rollback undoes everything the core did.

use crate::{Result, Row, Value};

/// Which SQL dialect a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// SQL for the text of `key` in the JSON object column `column` (NULL when absent). Keys
    /// are the core's own constants, never user text.
    pub fn json_text(self, column: &str, key: &str) -> String {
        match self {
            Dialect::Sqlite => format!("CAST(json_extract({column}, '$.{key}') AS TEXT)"),
            Dialect::Postgres => format!("({column} ->> '{key}')"),
        }
    }
}

/// A connection inside the current transaction.
pub trait Conn {
    fn dialect(&self) -> Dialect;

    /// Runs a statement and returns every row it yields.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>>;

    /// Runs a statement that yields no rows; returns the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;

    /// Runs several `;`-separated statements without parameters (schema scripts).
    fn execute_batch(&mut self, sql: &str) -> Result<()>;

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
    /// reached (see [`crate::failpoint`]); `None`, the default, disables them.
    fn failpoint(&mut self) -> Option<(String, String)> {
        None
    }

    /// The database's clock in Unix epoch milliseconds: leases and defaults use it so that
    /// every client of one database agrees on the time.
    fn now_ms(&mut self) -> Result<i64> {
        let sql = match self.dialect() {
            Dialect::Sqlite => "SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
            Dialect::Postgres => "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint",
        };
        self.query_value(sql, &[])?
            .and_then(|v| v.as_i64())
            .ok_or_else(|| crate::Error::internal("database clock returned no value"))
    }
}

/// A core statement in the connection's dialect: type markers expanded and, for Postgres,
/// `?N` placeholders rewritten as `$N`.
pub fn dialect_sql(sql: &str, dialect: Dialect) -> String {
    let sql = crate::schema::render_markers(sql, dialect);
    match dialect {
        Dialect::Sqlite => sql,
        Dialect::Postgres => to_postgres_placeholders(&sql),
    }
}

/// Rewrites `?N` placeholders as Postgres `$N`. Question marks inside string literals are
/// left alone; core statements never contain other question marks.
pub fn to_postgres_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut in_str = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_str = !in_str;
                out.push(c);
            }
            '?' if !in_str && chars.peek().is_some_and(|d| d.is_ascii_digit()) => out.push('$'),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_rewritten_outside_literals() {
        assert_eq!(
            to_postgres_placeholders("SELECT ?1, '?2', ?10 WHERE x = '?'"),
            "SELECT $1, '?2', $10 WHERE x = '?'"
        );
    }
}
