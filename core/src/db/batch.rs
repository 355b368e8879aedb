//! Multi-row statements: many rows per `INSERT`, the statement count that bulk paths save.

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
