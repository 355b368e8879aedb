//! Pages newest first by a table's `seq`, for lists a person scrolls: each row carries a
//! cursor, and the next page starts strictly after it, so a page costs its own rows however
//! deep it is and rows written meanwhile never shift it (as `OFFSET` would).

use crate::json_opts::Opts;
use crate::{Conn, Error, Result, Row, Value};

/// The pages of one table function: its cursors start with `prefix`, and a foreign cursor is
/// refused in the name of `function`; a page holds `default_limit` rows unless the options'
/// `limit` says otherwise (at most `max_limit`).
pub(crate) struct Newest {
    pub prefix: &'static str,
    pub function: &'static str,
    pub default_limit: i64,
    pub max_limit: i64,
}

impl Newest {
    /// The cursor of the row `seq`.
    pub(crate) fn cursor(&self, seq: i64) -> String {
        format!("{}{seq}", self.prefix)
    }

    /// The page of `from` (a table, with any index hint) that the options' `limit` and
    /// `cursor` ask for: rows meeting `conds` (their values in `params`), newest first.
    pub(crate) fn page(
        &self,
        conn: &mut dyn Conn,
        (columns, from): (&str, &str),
        (mut conds, mut params): (Vec<String>, Vec<Value>),
        o: &Opts,
    ) -> Result<Vec<Row>> {
        let limit = o.int("limit", self.default_limit, 1, self.max_limit)?;
        if let Some(c) = o.opt_str("cursor")? {
            let seq = c
                .strip_prefix(self.prefix)
                .and_then(|n| n.parse::<i64>().ok())
                .ok_or_else(|| {
                    Error::invalid(
                        "options.cursor",
                        format!("is not a cursor {} returned", self.function),
                    )
                })?;
            params.push(Value::Int(seq));
            conds.push(format!("seq < ?{}", params.len()));
        }
        params.push(Value::Int(limit));
        let sql = format!(
            "SELECT {columns} FROM {from} WHERE {} ORDER BY seq DESC LIMIT ?{}",
            conds.join(" AND "),
            params.len()
        );
        conn.query(&sql, &params)
    }
}
