//! Multi-row statements: many rows per `INSERT`, many keys per `IN (…)` — the statement
//! counts that bulk paths save.

use crate::{Conn, Result, Row, Value};

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
