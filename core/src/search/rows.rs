//! Searching the rows of a table: the path every searcher takes.
//!
//! Messages, observations and tasks are each one namespace of the engine whose documents are
//! rows of one table keyed by `seq`. A search over them is always the same three steps:
//! **filter** (the caller's SQL picks the keys a search may return, or none when nothing is
//! filtered), **search** (block-max WAND asks the filter only about documents that could
//! enter the top k) and **hydrate** (one `SELECT … WHERE seq IN (…)` for the kept hits).

use super::{search, SearchParams, SearchResult};
use crate::{Conn, Result, Row, Value};
use std::collections::{HashMap, HashSet};

/// The keys a search may return.
pub enum Allowed {
    /// Nothing is filtered.
    All,
    /// Only these keys.
    Only(HashSet<i64>),
}

impl Allowed {
    /// The keys in the first column of `sql`'s rows.
    pub fn query(conn: &mut dyn Conn, sql: &str, params: &[Value]) -> Result<Allowed> {
        Ok(Allowed::Only(
            conn.query(sql, params)?
                .iter()
                .filter_map(|r| r.first().and_then(Value::as_i64))
                .collect(),
        ))
    }
}

/// Runs the engine over namespace `ns`, returning only allowed documents.
pub fn search_allowed(
    conn: &mut dyn Conn,
    ns: &str,
    query: &str,
    params: &SearchParams,
    allowed: &Allowed,
) -> Result<SearchResult> {
    match allowed {
        Allowed::All => search(conn, ns, query, params, None),
        Allowed::Only(set) => search(conn, ns, query, params, Some(&|doc| set.contains(&doc))),
    }
}

/// `columns` of the rows of `table` whose `seq` is in `seqs`, by seq (one statement).
/// `table` and `columns` are the caller's constants, never user text.
pub fn hydrate(
    conn: &mut dyn Conn,
    table: &str,
    columns: &str,
    seqs: &[i64],
) -> Result<HashMap<i64, Row>> {
    if seqs.is_empty() {
        return Ok(HashMap::new());
    }
    let marks: Vec<String> = (1..=seqs.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "SELECT seq, {columns} FROM {table} WHERE seq IN ({})",
        marks.join(", ")
    );
    let params: Vec<Value> = seqs.iter().map(|&s| Value::Int(s)).collect();
    Ok(conn
        .query(&sql, &params)?
        .into_iter()
        .filter_map(|mut r| {
            if r.is_empty() {
                return None;
            }
            let seq = r.remove(0).as_i64()?;
            Some((seq, r))
        })
        .collect())
}
