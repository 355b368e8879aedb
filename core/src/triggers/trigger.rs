//! A trigger's declaration — its table, the changes and the moment it fires on, the columns
//! its handler reads, the handler — and one firing of it, as the handler sees it, whichever
//! database fired it.

use crate::db::row::{Completed, Completion, Shape, Stored};
use crate::{Conn, Error, Result, Row, Value};

/// A change a trigger fires on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Insert,
    Update,
    Delete,
}

impl Event {
    /// The SQL keyword.
    pub(crate) fn sql(self) -> &'static str {
        match self {
            Event::Insert => "INSERT",
            Event::Update => "UPDATE",
            Event::Delete => "DELETE",
        }
    }
}

/// When a trigger's handler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// After the row is written, or gone.
    After,
    /// Completes a new or changed row: Postgres before it is written (the columns the handler
    /// fills go into `NEW`), SQLite, whose triggers cannot change `NEW`, after it (they are
    /// written back to the stored row).
    Completing,
    /// Before the row is written, on both (a check).
    Before,
    /// Postgres only: when the transaction commits (a deferred constraint trigger).
    AtCommit,
    /// Postgres only: once per statement, after it, with the rows it inserted (a transition
    /// table, `mem__inserted`).
    StatementEnd,
}

/// The databases a trigger exists in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosts {
    Both,
    Sqlite,
    Postgres,
}

/// One trigger.
pub struct Trigger {
    /// The trigger's name without `_trg` (SQLite, which takes one event per trigger, names a
    /// trigger of several events `{name}_{event}_trg`).
    pub name: &'static str,
    /// The function it calls: the SQL name both databases know it by.
    pub function: &'static str,
    pub table: &'static str,
    pub timing: Timing,
    pub events: &'static [Event],
    /// `UPDATE OF` these columns (every column when empty).
    pub update_of: &'static [&'static str],
    /// The condition that makes it fire, in SQL both databases read (`IS DISTINCT FROM` is
    /// written for SQLite's `IS NOT`).
    pub when: Option<&'static str>,
    /// A further condition on Postgres only, for a row that another write of agentmem's
    /// handles itself.
    pub postgres_when: Option<&'static str>,
    /// The columns of `NEW` the handler reads; SQLite passes them as arguments (a completing
    /// handler reads the whole row by `seq`, which comes first).
    pub new: &'static [&'static str],
    /// The columns of `OLD` the handler reads (SQLite passes them after `new`'s).
    pub old: &'static [&'static str],
    pub hosts: Hosts,
    /// SQLite: a body other than the call (the message insert writes to a table whose
    /// transaction hooks run the handler).
    pub sqlite_body: Option<&'static str>,
    /// On Postgres its function's statements keep generic plans, as the functions of its
    /// domain do ([`crate::api::Function::generic_plans`]).
    pub generic_plans: bool,
    /// The schema version whose migration creates its table: a migration's `@triggers` makes
    /// the triggers of the tables it knows.
    pub since: i64,
    pub run: fn(&mut dyn Conn, &mut Fired) -> Result<()>,
}

impl Trigger {
    /// Whether the trigger exists in a database of this kind.
    pub(crate) fn in_sqlite(&self) -> bool {
        self.hosts != Hosts::Postgres
    }

    pub fn in_postgres(&self) -> bool {
        self.hosts != Hosts::Sqlite
    }
}

/// The rows a firing hands over, read through the host that fired it.
pub trait Rows {
    /// The value of column `col` of `NEW` (`new`) or `OLD`; NULL when the event has no such
    /// row.
    fn value(&mut self, new: bool, col: &str) -> Result<Value>;

    /// The whole `NEW` row as `R` (Postgres: the row it is about to write; SQLite: the stored
    /// row, by `seq`).
    fn new_row(&mut self, conn: &mut dyn Conn, shape: Shape) -> Result<Row>;

    /// A completing handler's row is complete: Postgres writes the filled columns into `NEW`;
    /// SQLite writes those that changed back to the stored row.
    fn complete(&mut self, conn: &mut dyn Conn, done: Completion) -> Result<()>;

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
    pub(crate) fn new(&mut self, col: &str) -> Result<Value> {
        self.rows.value(true, col)
    }

    /// Column `col` of `OLD`.
    pub(crate) fn old(&mut self, col: &str) -> Result<Value> {
        self.rows.value(false, col)
    }

    /// `NEW`'s `seq`.
    pub(crate) fn seq(&mut self) -> Result<i64> {
        self.new("seq")?
            .as_i64()
            .ok_or_else(|| Error::invalid("seq", "must be an integer"))
    }

    /// A text column of `NEW` (`new`) or `OLD`, empty when NULL.
    pub(crate) fn text(&mut self, new: bool, col: &str) -> Result<String> {
        Ok(self.rows.value(new, col)?.into_string().unwrap_or_default())
    }

    /// The whole `NEW` row, read as `R`.
    pub(crate) fn new_row<R: Stored>(&mut self, conn: &mut dyn Conn) -> Result<R> {
        R::from_values(self.rows.new_row(conn, R::SHAPE)?)
    }

    /// The completed row `after` of a completing handler, `before` as it was read: what
    /// changed is written into the row (see [`Rows::complete`]).
    pub(crate) fn complete<R: Completed>(
        &mut self,
        conn: &mut dyn Conn,
        before: &R,
        after: &R,
    ) -> Result<()> {
        let done = Completion::of(before, after);
        if done.changed.is_empty() {
            return Ok(());
        }
        self.rows.complete(conn, done)
    }

    /// Whether the handler runs after the row was written (SQLite's completing triggers) or
    /// before (Postgres').
    pub(crate) fn after_write(&self) -> bool {
        self.trigger.timing != Timing::Completing || self.rows.completes_after_write()
    }

    /// A statement trigger's next inserted row.
    pub(crate) fn next_inserted(&mut self) -> Option<Row> {
        self.rows.next_inserted()
    }

    /// Whether the trigger's table has the enabled trigger `name`.
    pub(crate) fn table_has(&self, name: &str) -> bool {
        self.rows.table_has(name)
    }

    /// The arguments the trigger was created with.
    pub(crate) fn arguments(&self) -> Vec<String> {
        self.rows.arguments()
    }
}
