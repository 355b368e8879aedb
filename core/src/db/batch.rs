//! Multi-row statements: many rows per `INSERT`, many keys per `IN (…)` — the statement
//! counts that bulk paths save.

use crate::{Conn, Result, Row, Value};

/// Keys per `IN (…)` list: far below every backend's parameter limit.
const KEYS_PER_STATEMENT: usize = 500;

/// The rows of `sql` for all of `keys`, a few hundred keys per statement: `sql` writes the
/// list as `IN ({keys})`, and its own parameters `fixed` are `?1…` before the keys.
pub fn query_in(
    conn: &mut dyn Conn,
    sql: &str,
    fixed: &[Value],
    keys: &[Value],
) -> Result<Vec<Row>> {
    let mut out = Vec::new();
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let marks = values("#", chunk.len(), fixed.len() + 1);
        let mut params = fixed.to_vec();
        params.extend_from_slice(chunk);
        out.extend(conn.query(&sql.replace("{keys}", &marks), &params)?);
    }
    Ok(out)
}

/// The `VALUES` list of a multi-row insert: `rows` copies of `template`, in which each `#`
/// stands for the row's next parameter, numbered on from `?first` (parameters before `first`
/// are shared by every row, as `?1` in the template).
pub fn values(template: &str, rows: usize, first: usize) -> String {
    let per_row = template.matches('#').count();
    (0..rows)
        .map(|r| {
            let mut n = first + r * per_row;
            let mut row = String::with_capacity(template.len() + per_row * 4);
            for c in template.chars() {
                if c == '#' {
                    row.push_str(&format!("?{n}"));
                    n += 1;
                } else {
                    row.push(c);
                }
            }
            row
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_each_row_on() {
        assert_eq!(
            super::values("(#, ?1, CAST(# AS BIGINT))", 2, 2),
            "(?2, ?1, CAST(?3 AS BIGINT)), (?4, ?1, CAST(?5 AS BIGINT))"
        );
    }
}
