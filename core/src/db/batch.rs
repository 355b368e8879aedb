//! Multi-row statements: many rows per `INSERT`, many keys per `IN (…)` — the statement
//! counts that bulk paths save.

use crate::db::dialect::Dialect;
use crate::{Conn, Result, Row, Value, ValueRef};

/// Keys per `IN (…)` list: far below every backend's parameter limit.
const KEYS_PER_STATEMENT: usize = 512;

/// `items` in chunks whose lengths are powers of two, at most `max` (the largest first), so
/// that a statement written for a chunk comes in at most log2(`max`) + 1 shapes. Both
/// backends keep prepared statements by their text: a list of any other length would be
/// parsed and planned again on every call.
pub(crate) fn shaped<T>(items: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    debug_assert!(max.is_power_of_two());
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = max.min(1 << rest.len().ilog2());
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        Some(chunk)
    })
}

/// The rows of `sql` for all of `keys`, a few hundred keys per statement: `sql` writes the
/// list as `IN ({keys})`, and its own parameters `fixed` are `?1…` before the keys; its marks
/// of the call's resource are filled ([`super::home::homed`]). A list shorter than a power of
/// two is padded to one by repeating its last key (an `IN` list is a set): one statement per
/// list, in few shapes, where chunks of power-of-two lengths took one per set bit of its length.
pub(crate) fn query_in(
    conn: &mut dyn Conn,
    sql: &str,
    fixed: &[Value],
    keys: &[Value],
) -> Result<Vec<Row>> {
    let mut fixed = fixed.to_vec();
    let sql = super::home::homed(conn, sql, &mut fixed);
    let mut out = Vec::new();
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let shape = chunk.len().next_power_of_two();
        let first = fixed.len() + 1;
        // Writing a list of hundreds of marks cost an edge add more than reading the few
        // rows it asked for: each list is written once per template and length.
        let text = super::sql_text::templated(&sql, (shape, first), || {
            sql.replace("{keys}", &values("#", shape, first))
        });
        let mut params = Vec::with_capacity(fixed.len() + shape);
        params.extend_from_slice(&fixed);
        params.extend_from_slice(chunk);
        params.resize(fixed.len() + shape, chunk[chunk.len() - 1].clone());
        out.extend(conn.query(&text, &params)?);
    }
    Ok(out)
}

/// A lookup of rows by a list of keys, written for each backend's cheapest form of it.
///
/// SQLite reads the keys from one JSON list: `json_each(?1) AS k`, joined on its `value`
/// column. An `IN` list that drives an index is first copied into a temporary B-tree, which
/// cost a lookup of a few keys more than the lookups themselves (three keys: 48 thousand
/// instructions in the statement against 20 thousand; the list is worth it only for one).
/// Postgres takes an `IN ({keys})` list ([`query_in`]): its planner sees the list's length,
/// which an array parameter would hide from a plan kept from when the table was small.
pub(crate) struct Lookup {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// The rows of `lookup` for `keys`, none of them twice (the SQLite form joins them, so a
/// repeated key repeats its rows).
pub(crate) fn query_lookup(
    conn: &mut dyn Conn,
    lookup: &Lookup,
    keys: &[Value],
) -> Result<Vec<Row>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    match conn.dialect() {
        Dialect::Sqlite => super::home::query(conn, lookup.sqlite, &[json_keys(keys)]),
        Dialect::Postgres => query_in(conn, lookup.postgres, &[], keys),
    }
}

/// [`query_lookup`], each row shown to `f`: borrowed from the statement where the host
/// allows (SQLite), so that reading a few rows allocates only what `f` keeps.
pub(crate) fn for_each_lookup(
    conn: &mut dyn Conn,
    lookup: &Lookup,
    keys: &[Value],
    f: &mut dyn FnMut(&[ValueRef<'_>]) -> Result<()>,
) -> Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    match conn.dialect() {
        Dialect::Sqlite => super::home::for_each_row(conn, lookup.sqlite, &[json_keys(keys)], f),
        Dialect::Postgres => query_in(conn, lookup.postgres, &[], keys)?
            .iter()
            .try_for_each(|row| f(&row.iter().map(Value::as_ref).collect::<Vec<_>>())),
    }
}

/// `keys` as one JSON list, for a statement that reads them with `json_each` (SQLite): the
/// integers and texts as themselves, anything else as `null`, which joins nothing.
pub(crate) fn json_keys(keys: &[Value]) -> Value {
    use std::fmt::Write;
    let mut out = String::with_capacity(2 + keys.len() * 12);
    out.push('[');
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match k {
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Text(t) => out.push_str(&serde_json::Value::from(t.as_str()).to_string()),
            _ => out.push_str("null"),
        }
    }
    out.push(']');
    Value::Text(out)
}

/// The `VALUES` list of a multi-row insert: `rows` copies of `template`, in which each `#`
/// stands for the row's next parameter, numbered on from `?first` (parameters before `first`
/// are shared by every row, as `?1` in the template).
pub(crate) fn values(template: &str, rows: usize, first: usize) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(rows * (template.len() + 16));
    let mut n = first;
    for r in 0..rows {
        if r > 0 {
            out.push_str(", ");
        }
        for piece in template.split_inclusive('#') {
            match piece.strip_suffix('#') {
                Some(text) => {
                    let _ = write!(out, "{text}?{n}");
                    n += 1;
                }
                None => out.push_str(piece),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Value;

    #[test]
    fn json_keys_read_back_as_the_keys() {
        let keys = [
            Value::Int(-7),
            Value::Int(i64::MAX),
            Value::Text("a\"b\\c\u{1}é".into()),
            Value::Null,
        ];
        let Value::Text(text) = super::json_keys(&keys) else {
            panic!("not text")
        };
        let back: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(
            back,
            vec![
                serde_json::json!(-7),
                serde_json::json!(i64::MAX),
                serde_json::json!("a\"b\\c\u{1}é"),
                serde_json::Value::Null
            ]
        );
        assert_eq!(super::json_keys(&[]), Value::Text("[]".into()));
    }

    #[test]
    fn shaped_chunks_are_powers_of_two_and_cover_the_items() {
        for n in 0..300usize {
            let items: Vec<usize> = (0..n).collect();
            let chunks: Vec<&[usize]> = super::shaped(&items, 64).collect();
            assert!(chunks
                .iter()
                .all(|c| c.len().is_power_of_two() && c.len() <= 64));
            assert_eq!(chunks.concat(), items);
        }
    }

    #[test]
    fn numbers_each_row_on() {
        assert_eq!(
            super::values("(#, ?1, CAST(# AS BIGINT))", 2, 2),
            "(?2, ?1, CAST(?3 AS BIGINT)), (?4, ?1, CAST(?5 AS BIGINT))"
        );
    }
}
