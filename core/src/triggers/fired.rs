//! One firing of a trigger, as its handler sees it, whichever database fired it.

use super::{Timing, Trigger};
use crate::db::row::{self, Completed, Stored};
use crate::{Conn, Error, Result, Row, Value};

/// The rows a firing hands over, read through the host that fired it.
pub trait Rows {
    /// The value of column `col` of `NEW` (`new`) or `OLD`; NULL when the event has no such
    /// row.
    fn value(&mut self, new: bool, col: &str) -> Result<Value>;

    /// The whole `NEW` row as `R` (Postgres: the row it is about to write; SQLite: the stored
    /// row, by `seq`).
    fn new_row(
        &mut self,
        conn: &mut dyn Conn,
        table: &str,
        noun: &'static str,
        columns: &[&str],
    ) -> Result<Row>;

    /// A completing handler's row is complete: Postgres writes the filled columns into `NEW`;
    /// SQLite writes those that changed back to the stored row.
    fn complete(
        &mut self,
        conn: &mut dyn Conn,
        seq: i64,
        table: &str,
        changed: Vec<(&'static str, Value)>,
    ) -> Result<()>;

    /// Whether a completing handler runs after the row was written (SQLite, whose triggers
    /// cannot change `NEW`) rather than before (Postgres).
    fn completes_after_write(&self) -> bool;

    /// A statement trigger's next inserted row (its columns those the trigger reads of `NEW`).
    fn next_inserted(&mut self) -> Option<Row> {
        None
    }

    /// Whether the trigger's table has the enabled trigger `name` (Postgres: the message
    /// triggers work out their timing from the triggers their table has).
    fn table_has(&self, _name: &str) -> bool {
        false
    }

    /// The arguments the trigger was created with (Postgres' `TG_ARGV`).
    fn arguments(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A firing: the trigger, its rows, and what the host allows.
pub struct Fired<'a> {
    pub trigger: &'static Trigger,
    rows: &'a mut dyn Rows,
    /// The host writes documents held in memory before the transaction commits (SQLite's
    /// table hooks, Postgres' deferred trigger), so the handler may hold them.
    pub hold: bool,
}

impl<'a> Fired<'a> {
    pub fn of(trigger: &'static Trigger, rows: &'a mut dyn Rows, hold: bool) -> Fired<'a> {
        Fired {
            trigger,
            rows,
            hold,
        }
    }

    /// Column `col` of `NEW`.
    pub fn new(&mut self, col: &str) -> Result<Value> {
        self.rows.value(true, col)
    }

    /// Column `col` of `OLD`.
    pub fn old(&mut self, col: &str) -> Result<Value> {
        self.rows.value(false, col)
    }

    /// `NEW`'s `seq`.
    pub fn seq(&mut self) -> Result<i64> {
        self.new("seq")?
            .as_i64()
            .ok_or_else(|| Error::invalid("seq", "must be an integer"))
    }

    /// A text column of `NEW` (`new`) or `OLD`, empty when NULL.
    pub fn text(&mut self, new: bool, col: &str) -> Result<String> {
        Ok(self.rows.value(new, col)?.into_string().unwrap_or_default())
    }

    /// The whole `NEW` row, read as `R`.
    pub fn new_row<R: Stored>(&mut self, conn: &mut dyn Conn) -> Result<R> {
        R::from_values(self.rows.new_row(conn, R::TABLE, R::NOUN, R::COLUMNS)?)
    }

    /// The `OLD` row, read as `R` from the columns the trigger reads of it (the trigger
    /// declares `R::COLUMNS` as its `old`).
    pub fn old_row<R: Stored>(&mut self) -> Result<R> {
        let values = R::COLUMNS
            .iter()
            .map(|c| self.old(c))
            .collect::<Result<Row>>()?;
        R::from_values(values)
    }

    /// The completed row `after` of a completing handler, `before` as it was read: what
    /// changed is written into the row (see [`Rows::complete`]).
    pub fn complete<R: Completed>(
        &mut self,
        conn: &mut dyn Conn,
        before: &R,
        after: &R,
    ) -> Result<()> {
        let changed: Vec<(&'static str, Value)> = after
            .filled()
            .into_iter()
            .zip(before.filled())
            .filter(|((_, new), (_, old))| new != old)
            .map(|(new, _)| new)
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        self.rows.complete(conn, after.seq(), R::TABLE, changed)
    }

    /// Whether the handler runs after the row was written (SQLite's completing triggers) or
    /// before (Postgres').
    pub fn after_write(&self) -> bool {
        self.trigger.timing != Timing::Completing || self.rows.completes_after_write()
    }

    /// A statement trigger's next inserted row.
    pub fn next_inserted(&mut self) -> Option<Row> {
        self.rows.next_inserted()
    }

    /// Whether the trigger's table has the enabled trigger `name`.
    pub fn table_has(&self, name: &str) -> bool {
        self.rows.table_has(name)
    }

    /// The arguments the trigger was created with.
    pub fn arguments(&self) -> Vec<String> {
        self.rows.arguments()
    }
}

/// The rows of a SQLite firing: the arguments its trigger passed, `NEW`'s declared columns
/// then `OLD`'s.
pub struct SqliteRows {
    trigger: &'static Trigger,
    args: Vec<Value>,
}

impl SqliteRows {
    pub fn new(trigger: &'static Trigger, args: Vec<Value>) -> Result<SqliteRows> {
        let expected = trigger.new.len() + trigger.old.len();
        if args.len() != expected {
            return Err(Error::Database(format!(
                "{} takes {expected} arguments from its trigger, got {}: the database's \
                 triggers are older than the library (run SELECT mem_init())",
                trigger.function,
                args.len()
            )));
        }
        Ok(SqliteRows { trigger, args })
    }
}

impl Rows for SqliteRows {
    fn value(&mut self, new: bool, col: &str) -> Result<Value> {
        let (cols, offset) = if new {
            (self.trigger.new, 0)
        } else {
            (self.trigger.old, self.trigger.new.len())
        };
        let i = cols.iter().position(|c| *c == col).ok_or_else(|| {
            Error::internal(format!(
                "trigger {} reads {}.{col}, which it does not declare",
                self.trigger.name,
                if new { "NEW" } else { "OLD" }
            ))
        })?;
        Ok(self.args[offset + i].clone())
    }

    fn new_row(
        &mut self,
        conn: &mut dyn Conn,
        table: &str,
        noun: &'static str,
        columns: &[&str],
    ) -> Result<Row> {
        let seq = self
            .value(true, "seq")?
            .as_i64()
            .ok_or_else(|| Error::invalid("seq", "must be an integer"))?;
        row::load_columns(conn, table, noun, columns, seq)
    }

    fn complete(
        &mut self,
        conn: &mut dyn Conn,
        seq: i64,
        table: &str,
        changed: Vec<(&'static str, Value)>,
    ) -> Result<()> {
        row::store_columns(conn, table, seq, changed)
    }

    fn completes_after_write(&self) -> bool {
        true
    }
}

/// The function the schema's type checks call for text that holds U+0000, or JSON text that
/// may (`\u0000`) — SQLite only; see [`refuse_nul`].
pub const REFUSE_NUL: &str = "mem__refuse_nul";

/// `mem__refuse_nul(column, value)`: fails with the rule's error, naming the column and the
/// character (or the JSON path); passes JSON whose `\u0000` was an escaped backslash.
pub fn refuse_nul(args: &[Value]) -> Result<()> {
    let column = args.first().and_then(Value::as_str).unwrap_or_default();
    let Some(Value::Text(s)) = args.get(1) else {
        return Ok(());
    };
    crate::args::no_nul(column, s)?;
    match serde_json::from_str::<serde_json::Value>(s) {
        Ok(v) => crate::json_input::check(column, &v),
        Err(_) => Ok(()),
    }
}
