//! Searching the rows of a table: the path every searcher takes.
//!
//! Messages, observations and tasks are each one namespace of the engine whose documents are
//! rows of one table keyed by `seq`. A search over them is always the same three steps:
//! **filter** (the caller's SQL picks the keys a search may return, or none when nothing is
//! filtered), **search** (block-max WAND asks the filter only about documents that could
//! enter the top k) and **hydrate** (one `SELECT … WHERE seq IN (…)` for the kept hits).

use super::{search_indexes, SearchParams, SearchResult};
use crate::{Conn, Result, Row, Value};
use std::collections::{HashMap, HashSet};

/// The keys a search may return.
pub(crate) enum Allowed {
    /// Nothing is filtered.
    All,
    /// Only these keys.
    Only(HashSet<i64>),
    /// The keys `sql` (as [`Allowed::query`] takes it) selects: too many to list up front, so
    /// the ranking's best keys are checked against it a batch at a time (see [`first_passing`]).
    Where { sql: String, params: Vec<Value> },
}

/// A ranking's best `n` items among some keys (all when `None`).
pub(crate) type Ranking<'a, T> =
    dyn FnMut(&mut dyn Conn, usize, Option<&HashSet<i64>>) -> Result<Vec<T>> + 'a;

/// Up to this many keys a filter is listed up front; beyond, it is checked lazily.
pub(crate) const LISTED: usize = 4096;

/// The longest prefix of a ranking a lazy filter is applied to before it is listed.
const LAZY_PREFIX: usize = 32_768;

impl Allowed {
    /// The keys `sql` selects — `SELECT <key> FROM … WHERE <conditions joined by AND>` — listed
    /// when they are few
    /// (a thread's messages), checked lazily when they are many (a whole resource), because
    /// listing 100 000 keys costs more than the search itself. Which one is first counted (up
    /// to [`LISTED`]): a count is one row, where fetching the first [`LISTED`] keys of a
    /// filter that passes many only to drop them cost a call 1–3 ms.
    pub(crate) fn query(conn: &mut dyn Conn, sql: &str, params: &[Value]) -> Result<Allowed> {
        let counted = conn.query(
            &format!("SELECT count(*) FROM ({sql} LIMIT {LISTED}) listed"),
            params,
        )?;
        let many = counted
            .first()
            .and_then(|r| r.first())
            .and_then(Value::as_i64)
            .is_some_and(|n| n as usize >= LISTED);
        if many {
            return Ok(Allowed::Where {
                sql: sql.to_owned(),
                params: params.to_vec(),
            });
        }
        Ok(Allowed::Only(keys(&conn.query(sql, params)?)))
    }

    /// Every row of `table` the current user may see: all, unless row-level security hides
    /// some (then each key the ranking offers is checked against the table, as a lazy filter
    /// is, so the best `k` are the best `k` the user may see).
    pub(crate) fn every(conn: &mut dyn Conn, table: &str) -> Result<Allowed> {
        Ok(if conn.row_security(table)? {
            Allowed::Where {
                sql: format!("SELECT seq FROM {table} WHERE 1 = 1"),
                params: Vec::new(),
            }
        } else {
            Allowed::All
        })
    }

    /// The rows of `table` of one resource. A database partitioned by resource searches that
    /// resource's own index, whose documents are all the resource's: no filter then, beyond
    /// row-level security ([`Allowed::every`]).
    pub(crate) fn of_resource(conn: &mut dyn Conn, table: &str, resource: &str) -> Result<Allowed> {
        if super::layout::by_resource(conn)? {
            return Allowed::every(conn, table);
        }
        Allowed::query(
            conn,
            &format!("SELECT seq FROM {table} WHERE resource_id = ?1"),
            &[resource.into()],
        )
    }

    /// A filter checked lazily without probing: for a caller that counted its keys cheaper
    /// than listing them would (`sql` as [`Allowed::query`] takes it).
    pub(crate) fn lazy(sql: String, params: Vec<Value>) -> Allowed {
        Allowed::Where { sql, params }
    }

    /// Every allowed key, listed.
    fn listed(&self, conn: &mut dyn Conn) -> Result<Option<HashSet<i64>>> {
        match self {
            Allowed::All => Ok(None),
            Allowed::Only(set) => Ok(Some(set.clone())),
            Allowed::Where { sql, params } => Ok(Some(keys(&conn.query(sql, params)?))),
        }
    }

    /// Which of `seqs` are allowed, in one statement: the filter's own statement driven by
    /// the keys (`WITH wanted … FROM wanted CROSS JOIN <its tables> WHERE <its conditions>
    /// AND <key> = wanted.want_seq`), so that each key is one primary-key lookup whatever the
    /// planner thinks of the filter's own indexes.
    pub(crate) fn check(&self, conn: &mut dyn Conn, seqs: &[i64]) -> Result<Vec<bool>> {
        let passing = match self {
            Allowed::All => return Ok(vec![true; seqs.len()]),
            Allowed::Only(set) => return Ok(seqs.iter().map(|s| set.contains(s)).collect()),
            Allowed::Where { sql, params } => {
                if seqs.is_empty() {
                    return Ok(Vec::new());
                }
                let (key, rest) = sql
                    .strip_prefix("SELECT ")
                    .and_then(|s| s.split_once(" FROM "))
                    .ok_or_else(|| {
                        crate::Error::internal("a lazy filter is not SELECT … FROM …")
                    })?;
                let rows =
                    crate::db::batch::values("(CAST(# AS BIGINT))", seqs.len(), params.len() + 1);
                let mut all = params.clone();
                all.extend(seqs.iter().map(|&s| Value::Int(s)));
                let sql = format!(
                    "WITH wanted (want_seq) AS (VALUES {rows}) \
                     SELECT {key} FROM wanted CROSS JOIN {rest} AND {key} = wanted.want_seq"
                );
                keys(&conn.query(&sql, &all)?)
            }
        };
        Ok(seqs.iter().map(|s| passing.contains(s)).collect())
    }

    /// The `k` best allowed items of a ranking: `rank(conn, n, keys)` returns the best `n`
    /// among `keys` (all when `None`) and `key` names an item's key. A listed filter is handed
    /// to the ranking; a lazy one is applied to its best items, a few times `k` of them, as
    /// eight times as many each round while too few pass, and past a bound listed after all. Either
    /// way the answer is the same: the best `k` allowed items, in the ranking's order.
    pub(crate) fn first_passing<T>(
        &self,
        conn: &mut dyn Conn,
        k: usize,
        rank: &mut Ranking<T>,
        key: fn(&T) -> i64,
    ) -> Result<Vec<T>> {
        if !matches!(self, Allowed::Where { .. }) || k == 0 {
            let listed = self.listed(conn)?;
            return rank(conn, k, listed.as_ref());
        }
        let mut n = (k * 4).max(64);
        while n <= LAZY_PREFIX {
            let best = rank(conn, n, None)?;
            let exhausted = best.len() < n;
            let pass = self.check(conn, &best.iter().map(key).collect::<Vec<_>>())?;
            let kept: Vec<T> = best
                .into_iter()
                .zip(pass)
                .filter_map(|(t, ok)| ok.then_some(t))
                .take(k)
                .collect();
            if kept.len() == k || exhausted {
                return Ok(kept);
            }
            n *= 8;
        }
        let listed = self.listed(conn)?;
        rank(conn, k, listed.as_ref())
    }
}

fn keys(rows: &[Row]) -> HashSet<i64> {
    rows.iter()
        .filter_map(|r| r.first().and_then(Value::as_i64))
        .collect()
}

/// Runs the engine over namespace `ns` (within `resource` when given: only its index in a
/// database partitioned by resource, whose documents `allowed` then need not name the
/// resource again), returning only allowed documents.
pub(crate) fn search_allowed(
    conn: &mut dyn Conn,
    ns: &str,
    resource: Option<&str>,
    query: &str,
    params: &SearchParams,
    allowed: &Allowed,
) -> Result<SearchResult> {
    let indexes = super::partition::searched(conn, ns, resource)?;
    let mut stats = Default::default();
    let hits = allowed.first_passing(
        conn,
        params.limit,
        &mut |conn, n, keys| {
            let p = SearchParams {
                limit: n,
                ..params.clone()
            };
            let r = match keys {
                None => search_indexes(conn, &indexes, query, &p, None)?,
                Some(set) => {
                    search_indexes(conn, &indexes, query, &p, Some(&|doc| set.contains(&doc)))?
                }
            };
            stats = r.stats;
            Ok(r.hits)
        },
        |h| h.doc,
    )?;
    Ok(SearchResult { hits, stats })
}

/// `columns` of the rows of `table` whose `seq` is in `seqs`, by seq (one statement), of
/// `resource` when the search was within one (the hits are its rows: naming it keeps the
/// statement on the resource's shard of a sharded database). `table` and `columns` are the
/// caller's constants, never user text.
pub(crate) fn hydrate(
    conn: &mut dyn Conn,
    table: &str,
    columns: &str,
    seqs: &[i64],
    resource: Option<&str>,
) -> Result<HashMap<i64, Row>> {
    if seqs.is_empty() {
        return Ok(HashMap::new());
    }
    let marks: Vec<String> = (1..=seqs.len()).map(|i| format!("?{i}")).collect();
    let mut params: Vec<Value> = seqs.iter().map(|&s| Value::Int(s)).collect();
    let of_resource = match resource {
        Some(r) => {
            params.push(r.into());
            format!(" AND resource_id = ?{}", params.len())
        }
        None => String::new(),
    };
    let hint = conn.dialect().key_lookup_hint();
    let sql = format!(
        "SELECT seq, {columns} FROM {table}{hint} WHERE seq IN ({}){of_resource}",
        marks.join(", ")
    );
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
