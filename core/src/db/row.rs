//! Typed reading of a row the triggers hand over, and writing back what they fill in.
//!
//! SQLite stores whatever a plain `INSERT` gives it (`created_at = 'yesterday'` lands as text
//! in a BIGINT column), so the row triggers read their rows strictly: a value of the wrong
//! storage class is an error naming `table.column` and what it got, and the statement that
//! wrote it fails before any derived structure takes it in. Postgres' column types already
//! refuse such values; there the checks never fire.

use crate::db::sql_text;
use crate::error::echo;
use crate::{Conn, Error, Result, Row, Value};

/// Where a stored row lives and how the triggers read it back.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The table the row belongs to.
    pub table: &'static str,
    /// What a row is called in errors (`message not found: 7`).
    pub noun: &'static str,
    /// The columns the row is read from, in field order.
    pub columns: &'static [&'static str],
}

/// A row type the triggers read: from the row Postgres hands them, or back from the table by
/// `seq` (SQLite's triggers run after the write).
pub(crate) trait Stored: Sized {
    const SHAPE: Shape;
    /// Reads the row from values in the shape's column order, strictly typed.
    fn from_values(v: Row) -> Result<Self>;
}

/// The columns of the row `seq` of the shape's table (names the core declares, never data;
/// JSON columns read as text).
pub(crate) fn load_columns(conn: &mut dyn Conn, shape: Shape, seq: i64) -> Result<Row> {
    // A table has one shape: the table names the text.
    let sql = sql_text::cached("load_columns", shape.table, conn.dialect(), 0, || {
        format!(
            "SELECT {} FROM {} WHERE seq = ?1",
            shape
                .columns
                .join(", ")
                .replace("metadata", "CAST(metadata AS TEXT)"),
            shape.table,
        )
    });
    conn.query(&sql, &[Value::Int(seq)])?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found(shape.noun, seq.to_string()))
}

/// A row the triggers complete. The core alone says which columns it fills in and with what;
/// Postgres writes them into `NEW` before the row is stored, SQLite (whose triggers run after)
/// writes them back ([`store_columns`]). A column added here reaches both.
pub(crate) trait Completed: Stored {
    /// The row's `seq` (its stable key while a trigger runs).
    fn seq(&self) -> i64;
    /// The filled-in columns and their values.
    fn filled(&self) -> Vec<(&'static str, Value)>;
}

/// What a completing handler changed of a row's filled-in columns.
pub struct Completion {
    pub table: &'static str,
    pub seq: i64,
    pub changed: Vec<(&'static str, Value)>,
    /// Which of the row type's filled-in columns changed, one bit each in their order: the
    /// form of the statement that writes them.
    pub columns: u64,
}

impl Completion {
    /// The columns `after` (the completed row) fills in differently from `before` (the row as
    /// it was read).
    pub(crate) fn of<R: Completed>(before: &R, after: &R) -> Completion {
        let mut columns = 0;
        let mut changed = Vec::new();
        for (i, (new, (_, old))) in after.filled().into_iter().zip(before.filled()).enumerate() {
            if new.1 != old {
                columns |= 1 << i;
                changed.push(new);
            }
        }
        Completion {
            table: R::SHAPE.table,
            seq: after.seq(),
            changed,
            columns,
        }
    }
}

/// Writes a completion's changed columns to the stored row (SQLite's after-triggers). Only
/// changed columns are named: every index on a named column is rewritten even when its value
/// stays, and a message's `id` or `task_id` index entry is usually left as it was. The
/// statement is made from the row type's own column names, never from data.
pub(crate) fn store_columns(conn: &mut dyn Conn, c: Completion) -> Result<()> {
    if c.changed.is_empty() {
        return Ok(());
    }
    let sql = sql_text::cached("store_columns", c.table, conn.dialect(), c.columns, || {
        let sets: Vec<String> = c
            .changed
            .iter()
            .enumerate()
            .map(|(i, (name, _))| format!("{name} = ?{}", i + 2))
            .collect();
        format!("UPDATE {} SET {} WHERE seq = ?1", c.table, sets.join(", "))
    });
    let mut params = vec![Value::Int(c.seq)];
    params.extend(c.changed.into_iter().map(|(_, v)| v));
    conn.execute(&sql, &params)?;
    Ok(())
}

/// Reads the columns of a row one of the core's own statements returned, in order; a column
/// past the end reads as NULL. (Trigger rows, whose storage classes SQLite does not enforce,
/// are read by the strict [`Cells`] instead.)
pub(crate) struct Fields(std::vec::IntoIter<Value>);

impl Fields {
    pub(crate) fn new(row: Row) -> Fields {
        Fields(row.into_iter())
    }

    /// The next column.
    pub(crate) fn value(&mut self) -> Value {
        self.0.next().unwrap_or(Value::Null)
    }

    /// The next column as text; `None` for NULL or a value of another type.
    pub(crate) fn text(&mut self) -> Option<String> {
        self.value().into_string()
    }

    /// The next column as an integer; `None` for NULL.
    pub(crate) fn int(&mut self) -> Option<i64> {
        self.value().as_i64()
    }
}

/// The cells of one row, read in column order.
pub(crate) struct Cells {
    table: &'static str,
    cols: &'static [&'static str],
    vals: std::vec::IntoIter<Value>,
    i: usize,
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => format!("the integer {i}"),
        Value::Real(f) => format!("the real {f}"),
        Value::Text(s) => format!("the text {}", echo(s)),
        Value::Blob(b) => format!("a blob of {} bytes", b.len()),
        Value::Json(_) => "a JSON document".into(),
    }
}

impl Cells {
    /// `row` holds the values of `cols` in order; missing trailing values read as NULL.
    pub(crate) fn new(table: &'static str, cols: &'static [&'static str], row: Row) -> Cells {
        Cells {
            table,
            cols,
            vals: row.into_iter(),
            i: 0,
        }
    }

    fn next(&mut self) -> (&'static str, Value) {
        let col = self.cols.get(self.i).copied().unwrap_or("?");
        self.i += 1;
        (col, self.vals.next().unwrap_or(Value::Null))
    }

    fn bad(&self, col: &str, rule: &str, got: &Value) -> Error {
        Error::invalid(
            format!("{}.{col}", self.table),
            format!("{rule} (got {})", describe(got)),
        )
    }

    /// An integer, or NULL.
    pub(crate) fn opt_int(&mut self) -> Result<Option<i64>> {
        match self.next() {
            (_, Value::Null) => Ok(None),
            (_, Value::Int(i)) => Ok(Some(i)),
            (col, other) => Err(self.bad(col, "must be an integer", &other)),
        }
    }

    /// An integer, not NULL.
    pub(crate) fn int(&mut self) -> Result<i64> {
        match self.next() {
            (_, Value::Int(i)) => Ok(i),
            (col, other) => Err(self.bad(col, "must be an integer", &other)),
        }
    }

    /// Text, or NULL. Numbers in a text column are taken in their decimal form (SQLite's text
    /// affinity stores them so); blobs are refused.
    pub(crate) fn opt_text(&mut self) -> Result<Option<String>> {
        match self.next() {
            (_, Value::Null) => Ok(None),
            (_, Value::Text(s)) => Ok(Some(s)),
            (_, Value::Int(i)) => Ok(Some(i.to_string())),
            (_, Value::Real(f)) => Ok(Some(f.to_string())),
            (col, other) => Err(self.bad(col, "must be text", &other)),
        }
    }

    /// Text, not NULL.
    pub(crate) fn text(&mut self) -> Result<String> {
        let col = self.cols.get(self.i).copied().unwrap_or("?");
        self.opt_text()?
            .ok_or_else(|| self.bad(col, "must not be NULL", &Value::Null))
    }

    /// A JSON object given as text (SQLite) or `jsonb` read as text (Postgres).
    pub(crate) fn json_object(&mut self) -> Result<String> {
        match self.next() {
            (col, Value::Text(s)) => match serde_json::from_str::<serde_json::Value>(&s) {
                Ok(serde_json::Value::Object(_)) => Ok(s),
                _ => Err(self.bad(col, "must be a JSON object", &Value::Text(s))),
            },
            (col, other) => Err(self.bad(col, "must be a JSON object", &other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_storage_classes_are_named() {
        const COLS: &[&str] = &["created_at", "raw_content", "metadata"];
        let mut c = Cells::new(
            "mem_messages",
            COLS,
            vec!["yesterday".into(), Value::Blob(vec![1]), "[1]".into()],
        );
        assert_eq!(
            c.int().unwrap_err().to_string(),
            "mem_messages.created_at: must be an integer (got the text \"yesterday\")"
        );
        assert_eq!(
            c.text().unwrap_err().to_string(),
            "mem_messages.raw_content: must be text (got a blob of 1 bytes)"
        );
        assert!(c.json_object().is_err());
        let mut ok = Cells::new("t", COLS, vec![Value::Int(5), "x".into(), "{}".into()]);
        assert_eq!(ok.int().unwrap(), 5);
        assert_eq!(ok.text().unwrap(), "x");
        assert_eq!(ok.json_object().unwrap(), "{}");
    }
}
