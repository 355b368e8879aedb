//! Row triggers as data: every trigger agentmem keeps on its tables, declared once — its
//! table, when it fires, the columns it reads and the core function that handles it
//! ([`catalog`]) — and rendered as each database's `CREATE TRIGGER` ([`render`]).
//!
//! Each backend has one entry point that runs any of them, as `mem__call` runs any function
//! of the function catalog. SQLite registers one SQL function per trigger over one dispatch
//! ([`fire_sqlite`]): its triggers pass the declared columns as arguments. Postgres binds
//! every trigger function to one C symbol, which reads the declared columns from the rows it
//! was given. Either way the handler sees a [`Fired`]. Adding a trigger is one declaration and
//! one handler; neither adapter changes.

mod catalog;
mod fired;
pub mod render;

pub use catalog::TRIGGERS;
pub use fired::{Fired, Rows};

use crate::{Conn, Result};

/// A change a trigger fires on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Insert,
    Update,
    Delete,
}

impl Event {
    /// The SQL keyword.
    pub fn sql(self) -> &'static str {
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
    pub run: fn(&mut dyn Conn, &mut Fired) -> Result<()>,
}

impl Trigger {
    /// Whether the trigger exists in a database of this kind.
    pub fn in_sqlite(&self) -> bool {
        self.hosts != Hosts::Postgres
    }

    pub fn in_postgres(&self) -> bool {
        self.hosts != Hosts::Sqlite
    }
}

/// The trigger whose function is `function`.
pub fn find(function: &str) -> Option<&'static Trigger> {
    TRIGGERS.iter().find(|t| t.function == function)
}

/// The SQL functions SQLite's triggers call, one per trigger function.
pub fn sqlite_functions() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&'static str> = TRIGGERS
        .iter()
        .filter(|t| t.in_sqlite())
        .map(|t| t.function)
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().chain(std::iter::once(fired::REFUSE_NUL))
}

/// Runs the SQLite trigger function `function` with the arguments its trigger passed; with
/// `hold`, the host writes held documents before the transaction commits.
pub fn fire_sqlite(
    conn: &mut dyn Conn,
    function: &str,
    args: Vec<crate::Value>,
    hold: bool,
) -> Result<crate::Value> {
    if function == fired::REFUSE_NUL {
        fired::refuse_nul(&args)?;
        return Ok(crate::Value::Null);
    }
    let trigger = find(function)
        .filter(|t| t.in_sqlite())
        .ok_or_else(|| crate::Error::internal(format!("no trigger function {function}")))?;
    let mut rows = fired::SqliteRows::new(trigger, args)?;
    let mut f = Fired::of(trigger, &mut rows, hold);
    (trigger.run)(conn, &mut f)?;
    Ok(crate::Value::Null)
}
