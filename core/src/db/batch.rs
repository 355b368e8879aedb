//! Multi-row statements: many rows per `INSERT`, many keys per `IN (…)` — the statement
//! counts that bulk paths save.

use crate::{Conn, Dialect, Result, Row, Value};

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

/// The rows of `sql` for all of `keys`: `sql` writes the list as `IN ({keys})`, and its own
/// parameters `fixed` are `?1…` before the keys. On Postgres the keys travel as one array
/// (`= ANY(…)`), so any number of them is one statement with one plan; on SQLite, a few
/// hundred keys per statement.
pub(crate) fn query_in(
    conn: &mut dyn Conn,
    sql: &str,
    fixed: &[Value],
    keys: &[Value],
) -> Result<Vec<Row>> {
    debug_assert!(sql.contains("IN ({keys})"));
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    if conn.dialect() == Dialect::Postgres {
        if let Some((array, ty)) = postgres_array(keys) {
            let any = format!("= ANY(?{}::{ty}[])", fixed.len() + 1);
            let mut params = fixed.to_vec();
            params.push(Value::Text(array));
            return conn.query(&sql.replace("IN ({keys})", &any), &params);
        }
    }
    let mut out = Vec::new();
    for chunk in shaped(keys, KEYS_PER_STATEMENT) {
        let marks = values("#", chunk.len(), fixed.len() + 1);
        let mut params = fixed.to_vec();
        params.extend_from_slice(chunk);
        out.extend(conn.query(&sql.replace("{keys}", &marks), &params)?);
    }
    Ok(out)
}

/// `keys` as the text of a Postgres array and its element type, when they are all integers or
/// all text (each text element quoted, its `"` and `\` escaped, as `array_in` reads them).
fn postgres_array(keys: &[Value]) -> Option<(String, &'static str)> {
    use std::fmt::Write;
    let ty = match keys.first()? {
        Value::Int(_) => "bigint",
        Value::Text(_) => "text",
        _ => return None,
    };
    let mut out = String::with_capacity(keys.len() * 12 + 2);
    out.push('{');
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match (k, ty) {
            (Value::Int(n), "bigint") => {
                let _ = write!(out, "{n}");
            }
            (Value::Text(t), "text") => {
                out.push('"');
                for c in t.chars() {
                    if matches!(c, '"' | '\\') {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push('"');
            }
            _ => return None,
        }
    }
    out.push('}');
    Some((out, ty))
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
    #[test]
    fn postgres_arrays_quote_every_text_element() {
        use crate::Value;
        let text = |v: &[&str]| {
            v.iter()
                .map(|s| Value::Text((*s).into()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            super::postgres_array(&text(&[r#"q"1"#, r"b\2", "{c,3}", "NULL", ""])),
            Some((r#"{"q\"1","b\\2","{c,3}","NULL",""}"#.to_owned(), "text"))
        );
        assert_eq!(
            super::postgres_array(&[Value::Int(-3), Value::Int(7)]),
            Some(("{-3,7}".to_owned(), "bigint"))
        );
        for mixed in [
            vec![Value::Int(1), Value::Text("a".into())],
            vec![Value::Text("a".into()), Value::Int(1)],
            vec![Value::Real(1.0)],
            vec![Value::Null],
        ] {
            assert_eq!(super::postgres_array(&mixed), None, "{mixed:?}");
        }
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
