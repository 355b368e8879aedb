//! SQLite's entry point: one SQL function per trigger function, over one dispatch; the
//! triggers pass the declared columns as arguments.

use super::catalog::{find, TRIGGERS};
use super::trigger::{Fired, Rows, Trigger};
use crate::db::row::{self, Completion, Shape};
use crate::{Conn, Error, Result, Row, Value};

/// The SQL functions SQLite's triggers call, one per trigger function.
pub fn sqlite_functions() -> impl Iterator<Item = &'static str> {
    let mut names: Vec<&'static str> = TRIGGERS
        .iter()
        .filter(|t| t.in_sqlite())
        .map(|t| t.function)
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().chain(std::iter::once(REFUSE_NUL))
}

/// Runs the SQLite trigger function `function` with the arguments its trigger passed; with
/// `hold`, the host writes held documents before the transaction commits.
pub fn fire_sqlite(
    conn: &mut dyn Conn,
    function: &str,
    args: Vec<crate::Value>,
    hold: bool,
) -> Result<crate::Value> {
    if function == REFUSE_NUL {
        refuse_nul(&args)?;
        return Ok(crate::Value::Null);
    }
    let trigger = find(function)
        .filter(|t| t.in_sqlite())
        .ok_or_else(|| crate::Error::internal(format!("no trigger function {function}")))?;
    let mut rows = SqliteRows::new(trigger, args)?;
    let mut f = Fired::of(trigger, &mut rows, hold);
    (trigger.run)(conn, &mut f)?;
    Ok(crate::Value::Null)
}

/// The rows of a SQLite firing: the arguments its trigger passed, `NEW`'s declared columns
/// then `OLD`'s.
pub(super) struct SqliteRows {
    trigger: &'static Trigger,
    args: Vec<Value>,
}

impl SqliteRows {
    pub(super) fn new(trigger: &'static Trigger, args: Vec<Value>) -> Result<SqliteRows> {
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

    fn new_row(&mut self, conn: &mut dyn Conn, shape: Shape) -> Result<Row> {
        let seq = self
            .value(true, "seq")?
            .as_i64()
            .ok_or_else(|| Error::invalid("seq", "must be an integer"))?;
        row::load_columns(conn, shape, seq)
    }

    fn complete(&mut self, conn: &mut dyn Conn, done: Completion) -> Result<()> {
        row::store_columns(conn, done)
    }

    fn completes_after_write(&self) -> bool {
        true
    }
}

/// The function the schema's type checks call for text that holds U+0000, or JSON text that
/// may (`\u0000`) — SQLite only; see [`refuse_nul`].
pub(super) const REFUSE_NUL: &str = "mem__refuse_nul";

/// The function that finds such text for them (`mem__may_hold_nul(text [, json])`, a pure
/// function the host registers over [`may_hold_nul`]).
pub const MAY_HOLD_NUL: &str = "mem__may_hold_nul";

/// Whether stored text may hold what [`refuse_nul`] refuses: U+0000 itself, or, for JSON text
/// (`json`), the escape `\u0000`, which [`refuse_nul`] then reads (an escaped backslash
/// passes). The type checks ask this of every text a row stores; SQLite's `instr` compares at
/// each byte, where this scans for one.
pub fn may_hold_nul(bytes: &[u8], json: bool) -> bool {
    if json {
        bytes
            .split(|&b| b == b'\\')
            .skip(1)
            .any(|after| after.starts_with(b"u0000"))
    } else {
        bytes.contains(&0)
    }
}

/// `mem__refuse_nul(column, value)`: fails with the rule's error, naming the column and the
/// character (or the JSON path); passes JSON whose `\u0000` was an escaped backslash.
pub(super) fn refuse_nul(args: &[Value]) -> Result<()> {
    let column = args.first().and_then(Value::as_str).unwrap_or_default();
    match args.get(1) {
        Some(Value::Text(s)) => refuse_nul_in(column, s),
        _ => Ok(()),
    }
}

/// [`refuse_nul`] of the text `s` stored in `column`.
pub(crate) fn refuse_nul_in(column: &str, s: &str) -> Result<()> {
    crate::args::no_nul(column, s)?;
    match serde_json::from_str::<serde_json::Value>(s) {
        Ok(v) => crate::json_input::check(column, &v),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::may_hold_nul;

    #[test]
    fn nul_in_text_and_its_escape_in_json() {
        assert!(!may_hold_nul(b"", false));
        assert!(!may_hold_nul("plain é text".as_bytes(), false));
        assert!(may_hold_nul(b"a\0b", false));
        assert!(may_hold_nul(b"\0", false));
        assert!(!may_hold_nul(br#"{"k":"\u0000"}"#, false));
        assert!(may_hold_nul(br#"{"k":"\u0000"}"#, true));
        // An escaped backslash before `u0000` is no NUL, but the scan only says "may":
        // `mem__refuse_nul` parses the JSON and lets it pass.
        assert!(may_hold_nul(br#"{"k":"\\u0000"}"#, true));
        assert!(!may_hold_nul(br#"{"k":"\u0001","u0000":1}"#, true));
        assert!(!may_hold_nul(b"\\", true));
    }
}
