//! Every place the core's runtime SQL differs between SQLite and Postgres.
//!
//! Core statements are written once in the common subset of the two dialects; what cannot be
//! shared is asked of [`Dialect`] here, so a reader sees every difference in one file. (The
//! schema's DDL is rendered from the migration scripts by `schema::render`.)

/// Which SQL dialect a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A row lock a statement takes (`SELECT … FOR …`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowLock {
    /// Waits for, then excludes, every other lock on the rows.
    Update,
    /// As `Update`, but skips rows another transaction holds.
    UpdateSkipLocked,
    /// Shared with other `Share` locks, excludes `Update`.
    Share,
    /// What an update of non-key columns takes: excludes other updates, not the key-share
    /// locks of foreign-key checks.
    NoKeyUpdate,
    /// The weakest: excludes only deletes and key changes. Like every row lock in Postgres it
    /// needs the table's update privilege and passes its update policies, which is what
    /// [`crate::db::access`] asks it to prove.
    KeyShare,
}

impl Dialect {
    /// SQL for the text of `key` in the JSON object column `column` (NULL when absent). Keys
    /// are the core's own constants, never user text.
    pub(crate) fn json_text(self, column: &str, key: &str) -> String {
        match self {
            Dialect::Sqlite => format!("CAST(json_extract({column}, '$.{key}') AS TEXT)"),
            Dialect::Postgres => format!("({column} ->> '{key}')"),
        }
    }

    /// SQL for the JSON object column `column` without `key` (a core constant).
    pub(crate) fn json_without(self, column: &str, key: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_remove({column}, '$.{key}')"),
            Dialect::Postgres => format!("{column} - '{key}'"),
        }
    }

    /// A query for the database's clock in Unix epoch milliseconds.
    pub(crate) fn clock_ms_sql(self) -> &'static str {
        match self {
            Dialect::Sqlite => "SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
            Dialect::Postgres => "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint",
        }
    }

    /// Whether concurrent writers make explicit locks necessary. SQLite serialises writers
    /// (one write transaction per database), so its row locks and advisory locks are no-ops;
    /// Postgres runs writers side by side under READ COMMITTED.
    pub(crate) fn has_concurrent_writers(self) -> bool {
        self == Dialect::Postgres
    }

    /// The clause that takes `lock` on the rows a `SELECT` reads; empty in SQLite.
    pub(crate) fn row_lock(self, lock: RowLock) -> &'static str {
        match (self, lock) {
            (Dialect::Sqlite, _) => "",
            (Dialect::Postgres, RowLock::Update) => " FOR UPDATE",
            (Dialect::Postgres, RowLock::UpdateSkipLocked) => " FOR UPDATE SKIP LOCKED",
            (Dialect::Postgres, RowLock::Share) => " FOR SHARE",
            (Dialect::Postgres, RowLock::NoKeyUpdate) => " FOR NO KEY UPDATE",
            (Dialect::Postgres, RowLock::KeyShare) => " FOR KEY SHARE",
        }
    }

    /// An index hint after a table name: SQLite's planner, without statistics, may prefer a
    /// worse index; Postgres has statistics and no hints.
    pub(crate) fn index_hint(self, index: &str) -> String {
        match self {
            Dialect::Sqlite => format!(" INDEXED BY {index}"),
            Dialect::Postgres => String::new(),
        }
    }

    /// After a table name, for a lookup by its `seq` (SQLite's rowid): SQLite's planner,
    /// without statistics, may take an index on another condition of the statement for
    /// fewer rows than a list of keys; Postgres has statistics and no hints.
    pub(crate) fn key_lookup_hint(self) -> &'static str {
        match self {
            Dialect::Sqlite => " NOT INDEXED",
            Dialect::Postgres => "",
        }
    }

    /// The conflict clause, after `INSERT`, of a statement of many derived rows the core runs
    /// inside a call or a trigger, whose failure the call or the firing statement undoes whole.
    /// SQLite's default (`ABORT`) undoes the failing statement alone, so a statement that may
    /// fail after its first row first copies every page it changes into a journal of its own;
    /// `OR FAIL` still refuses a key that exists but keeps the rows written before it, with no
    /// journal. Postgres keeps no such journal.
    pub(crate) fn or_fail(self) -> &'static str {
        match self {
            Dialect::Sqlite => " OR FAIL",
            Dialect::Postgres => "",
        }
    }

    /// The statement that says whether row-level security applies to the table `?1` for the
    /// current user; `None` where there is none.
    pub(crate) fn row_security_sql(self) -> Option<&'static str> {
        match self {
            Dialect::Sqlite => None,
            Dialect::Postgres => Some("SELECT row_security_active(CAST(?1 AS regclass))"),
        }
    }

    /// Whether one statement can update one table and insert into another (a data-modifying
    /// `WITH`): Postgres, where a statement's fixed cost outweighs a one-row write; SQLite's
    /// `WITH` only reads.
    pub(crate) fn writes_in_with(self) -> bool {
        self == Dialect::Postgres
    }

    /// Whether a statement's `RETURNING` rows are collected before the first is returned, in
    /// a temporary table made at each run (SQLite): an update of one row hands its values
    /// over through its `SET` list instead ([`crate::db::seen`]).
    pub(crate) fn buffers_returning(self) -> bool {
        self == Dialect::Sqlite
    }

    /// The search index's merge bound: no merge writes more than this share of the index
    /// (see [`crate::search::merge`]). Postgres keeps the room a merge needs in its files for
    /// good, so it bounds merges to an eighth; SQLite merges without a bound (one segment per
    /// level, one after `optimize`), for the smallest index and the fastest searches.
    pub(crate) fn merge_share(self) -> Option<i64> {
        match self {
            Dialect::Sqlite => None,
            Dialect::Postgres => Some(8),
        }
    }

    /// What a `DELETE … RETURNING` of index pages returns for the host to reuse their space
    /// ([`crate::Conn::pages_freed`]): on Postgres each row's table and heap block, as
    /// `table oid << 32 | block`; `None` on SQLite, whose free list reuses pages as soon as
    /// the transaction no longer needs them.
    pub(crate) fn freed_place_sql(self) -> Option<&'static str> {
        match self {
            Dialect::Sqlite => None,
            Dialect::Postgres => {
                Some("(tableoid::oid::bigint << 32) | (ctid::text::point)[0]::bigint")
            }
        }
    }

    /// [`Dialect::statement`] for a statement the core runs (not a schema script): refused
    /// when it names both derived data and the application's rows, on every database, so that
    /// the tests of either catch a statement that could not run with one set of rights
    /// ([`crate::db::privilege`]).
    pub fn prepare(self, sql: &str) -> crate::Result<String> {
        crate::db::privilege::of(sql)?;
        Ok(self.statement(sql))
    }

    /// A core statement in this dialect: type markers expanded and, for Postgres, `?N`
    /// placeholders rewritten as `$N`.
    pub fn statement(self, sql: &str) -> String {
        let sql = self.markers(sql);
        match self {
            Dialect::Sqlite => sql,
            Dialect::Postgres => to_postgres_placeholders(&sql),
        }
    }

    /// Expands the type markers (`@ROWID`, `@BLOB`, `@JSON`, `@DOUBLE`, `@FILLED`) of one
    /// statement; the schema's scripts and runtime SQL share them.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn markers(self, line: &str) -> String {
        let pairs: &[(&str, &str)] = match self {
            Dialect::Sqlite => &[
                ("@ROWID", "INTEGER PRIMARY KEY"),
                ("@BLOB", "BLOB"),
                ("@JSON", "TEXT"),
                ("@DOUBLE", "REAL"),
                (" @FILLED", ""),
            ],
            Dialect::Postgres => &[
                (
                    "@ROWID",
                    "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                ),
                ("@BLOB", "BYTEA"),
                ("@JSON", "JSONB"),
                ("@DOUBLE", "DOUBLE PRECISION"),
                ("@FILLED", "NOT NULL"),
            ],
        };
        pairs
            .iter()
            .fold(line.to_owned(), |acc, (from, to)| acc.replace(from, to))
    }
}

/// Rewrites `?N` placeholders as Postgres `$N`. Question marks inside string literals are
/// left alone; core statements never contain other question marks.
pub(crate) fn to_postgres_placeholders(sql: &str) -> String {
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
