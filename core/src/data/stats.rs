//! `mem_stats`: how much the memory holds, from counters and indexes.
//!
//! Message and token totals come from the counters every thread carries (kept exact by the
//! message triggers), so the totals and the per-resource or per-agent breakdown cost one
//! pass over the threads, not over the messages. The per-day breakdown reads the messages of
//! its window (default: the last 30 days) through the `(resource_id, created_at,
//! token_count)` or `(created_at)` index. Tasks carry no resource: they are counted when the
//! call is not limited to a resource or an agent.

use crate::json_opts::Opts;
use crate::threads::lifecycle::State;
use crate::{Conn, Dialect, Error, Result, Row, Value, ValueRef};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;

const OPTIONS: &[&str] = &[
    "resource_id",
    "agent_id",
    "by",
    "since",
    "until",
    "now",
    "limit",
];

/// Milliseconds in a day (days are UTC).
const DAY_MS: i64 = 86_400_000;
/// The per-day window when `since` is not given.
pub(crate) const DEFAULT_DAYS: i64 = 30;
/// Default and largest number of breakdown rows.
pub(crate) const DEFAULT_LIMIT: i64 = 100;
pub(crate) const MAX_LIMIT: i64 = 10_000;

/// The threads a call is limited to.
struct Scope {
    resource_id: Option<String>,
    agent_id: Option<String>,
}

impl Scope {
    /// The conditions on `mem_threads` (or, with `on_messages`, on `mem_messages`) as fixed
    /// SQL, their values appended to `params`.
    fn conditions(&self, params: &mut Vec<Value>, on_messages: bool) -> Vec<String> {
        let mut c = Vec::new();
        if let Some(r) = &self.resource_id {
            params.push(r.as_str().into());
            c.push(format!("resource_id = ?{}", params.len()));
        }
        if let Some(a) = &self.agent_id {
            params.push(a.as_str().into());
            c.push(if on_messages {
                format!(
                    "thread_id IN (SELECT id FROM mem_threads WHERE agent_id = ?{})",
                    params.len()
                )
            } else {
                format!("agent_id = ?{}", params.len())
            });
        }
        c
    }

    /// `WHERE …` over the threads, or nothing.
    fn threads_where(&self, params: &mut Vec<Value>) -> String {
        let c = self.conditions(params, false);
        if c.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", c.join(" AND "))
        }
    }

    fn limited(&self) -> bool {
        self.resource_id.is_some() || self.agent_id.is_some()
    }
}

pub(super) fn int_at(row: &Row, i: usize) -> i64 {
    row.get(i).and_then(Value::as_i64).unwrap_or(0)
}

/// `mem_stats([options])` → JSON: `threads` by state, `messages`, `tokens`, `tasks` by status,
/// `observations`, `memories`, `averages` and, with `by` (`resource`, `agent` or `day`), a
/// `breakdown`. Options `resource_id` and `agent_id` limit it to some threads.
pub(crate) fn stats(conn: &mut dyn Conn, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, OPTIONS)?;
    let resource_id = o.opt_str("resource_id")?;
    let agent_id = o.opt_str("agent_id")?;
    let by = o.opt_str("by")?;
    let limit = o.int("limit", DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    if let Some(b) = &by {
        if !["resource", "agent", "day"].contains(&b.as_str()) {
            return Err(Error::invalid(
                "options.by",
                "must be one of resource, agent, day",
            ));
        }
    }
    let scope = Scope {
        resource_id: resource_id.clone(),
        agent_id: agent_id.clone(),
    };

    // One pass over the threads gives the totals and, by resource or agent, the breakdown.
    // Postgres groups them by hashing and sends the few groups; SQLite would sort every
    // thread to group them, so it sends each thread as a group of one and the core sums the
    // rows as they stream by.
    let group = match by.as_deref() {
        Some("resource") => Some("resource_id"),
        Some("agent") => Some("agent_id"),
        _ => None,
    };
    let key = group.unwrap_or("NULL");
    let mut by_state: BTreeMap<String, i64> = State::ALL
        .iter()
        .map(|s| (s.as_str().to_owned(), 0))
        .collect();
    // Threads, messages and tokens per key; threads without one (no agent) apart, listed
    // first on both databases.
    let mut by_key: BTreeMap<String, [i64; 3]> = BTreeMap::new();
    let mut no_key: Option<[i64; 3]> = None;
    let (mut total_threads, mut messages, mut tokens) = (0i64, 0i64, 0i64);
    let mut params = Vec::new();
    let filter = scope.threads_where(&mut params);
    let sql = match conn.dialect() {
        Dialect::Sqlite => {
            format!("SELECT state, {key}, 1, message_count, token_count FROM mem_threads {filter}")
        }
        Dialect::Postgres => format!(
            "SELECT state, {key}, count(*), CAST(coalesce(sum(message_count), 0) AS BIGINT), \
               CAST(coalesce(sum(token_count), 0) AS BIGINT) \
             FROM mem_threads {filter} GROUP BY state{}",
            group.map(|k| format!(", {k}")).unwrap_or_default()
        ),
    };
    conn.for_each_row(&sql, &params, &mut |r| {
        let int = |i: usize| r.get(i).and_then(ValueRef::as_i64).unwrap_or(0);
        let (n, m, t) = (int(2), int(3), int(4));
        let state = r.first().and_then(ValueRef::as_str).unwrap_or_default();
        match by_state.get_mut(state) {
            Some(c) => *c += n,
            None => {
                by_state.insert(state.to_owned(), n);
            }
        }
        let e = match r.get(1).and_then(ValueRef::as_str) {
            None => no_key.get_or_insert_default(),
            Some(k) => match by_key.get_mut(k) {
                Some(e) => e,
                None => by_key.entry(k.to_owned()).or_default(),
            },
        };
        e[0] += n;
        e[1] += m;
        e[2] += t;
        total_threads += n;
        messages += m;
        tokens += t;
        Ok(())
    })?;
    let mut threads: Map<String, Json> = by_state.into_iter().map(|(k, v)| (k, json!(v))).collect();
    threads.insert("total".into(), json!(total_threads));

    let mut out = Map::new();
    out.insert("threads".into(), Json::Object(threads));
    out.insert("messages".into(), json!(messages));
    out.insert("tokens".into(), json!(tokens));
    out.insert(
        "tasks".into(),
        if scope.limited() {
            Json::Null
        } else {
            tasks(conn)?
        },
    );
    out.insert(
        "observations".into(),
        observations(conn, resource_id.as_deref(), agent_id.is_some())?,
    );
    out.insert(
        "memories".into(),
        memories(conn, resource_id.as_deref(), agent_id.is_some())?,
    );
    let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    out.insert(
        "averages".into(),
        json!({
            "messages_per_thread": ratio(messages, total_threads),
            "tokens_per_thread": ratio(tokens, total_threads),
            "tokens_per_message": ratio(tokens, messages),
        }),
    );
    if let Some(b) = by {
        let rows = if b == "day" {
            let now = conn.now_or(o.opt_int("now")?)?;
            let until = o.opt_int("until")?.unwrap_or(now);
            let since = o.opt_int("since")?.unwrap_or(until - DEFAULT_DAYS * DAY_MS);
            by_day(conn, &scope, since, until, limit)?
        } else {
            no_key
                .map(|e| (None, e))
                .into_iter()
                .chain(by_key.into_iter().map(|(k, e)| (Some(k), e)))
                .take(limit as usize)
                .map(|(k, [n, m, t])| json!({"key": k, "threads": n, "messages": m, "tokens": t}))
                .collect()
        };
        out.insert("breakdown".into(), Json::Array(rows));
        out.insert("by".into(), json!(b));
    }
    Ok(Json::Object(out).to_string())
}

/// Messages and tokens per UTC day of `created_at` within [since, until], oldest first. A
/// resource scope reads its messages through the `(resource_id, created_at, token_count)`
/// index, an agent scope its threads' through `(thread_id, created_at, token_count)`; the
/// whole database is scanned (no index on `created_at` alone: it would cost every message).
fn by_day(
    conn: &mut dyn Conn,
    scope: &Scope,
    since: i64,
    until: i64,
    limit: i64,
) -> Result<Vec<Json>> {
    let mut params = vec![Value::Int(since), Value::Int(until)];
    let mut conds = vec!["created_at >= ?1".to_owned(), "created_at <= ?2".to_owned()];
    conds.extend(scope.conditions(&mut params, true));
    // Integer division truncates on both databases; days before 1970 are moved to the floor.
    let rows = conn.query(
        &format!(
            "SELECT day, count(*), CAST(coalesce(sum(token_count), 0) AS BIGINT) FROM ( \
               SELECT CASE WHEN created_at >= 0 THEN created_at / {DAY_MS} \
                 ELSE (created_at + 1) / {DAY_MS} - 1 END AS day, token_count \
               FROM mem_messages WHERE {}) d \
             GROUP BY day ORDER BY day LIMIT {limit}",
            conds.join(" AND ")
        ),
        &params,
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            let day = int_at(r, 0);
            json!({
                "key": day_name(day),
                "messages": int_at(r, 1),
                "tokens": int_at(r, 2),
            })
        })
        .collect())
}

/// `YYYY-MM-DD` of a day number since 1970-01-01 (proleptic Gregorian, UTC).
pub(crate) fn day_name(day: i64) -> String {
    let (y, m, d, _, _) = crate::time::parts(day * DAY_MS);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Tasks by status, and their total.
fn tasks(conn: &mut dyn Conn) -> Result<Json> {
    let mut m = Map::new();
    let mut total = 0;
    for r in conn.query(
        "SELECT status, count(*) FROM mem_tasks GROUP BY status ORDER BY status",
        &[],
    )? {
        let n = int_at(&r, 1);
        total += n;
        let status = r.first().and_then(|v| v.as_str()).unwrap_or_default();
        m.insert(status.to_owned(), json!(n));
    }
    m.insert("total".into(), json!(total));
    Ok(Json::Object(m))
}

/// Active observational records and the tokens of their observations. Records belong to a
/// resource, not an agent: `null` under an agent scope.
fn observations(conn: &mut dyn Conn, resource: Option<&str>, by_agent: bool) -> Result<Json> {
    if by_agent {
        return Ok(Json::Null);
    }
    let r = conn
        .query(
            "SELECT count(*), CAST(coalesce(sum(observation_tokens), 0) AS BIGINT) \
             FROM mem_om_records WHERE is_active = 1 \
             AND (CAST(?1 AS TEXT) IS NULL OR resource_id = ?1)",
            &[resource.into()],
        )?
        .into_iter()
        .next()
        .unwrap_or_default();
    Ok(json!({"records": int_at(&r, 0), "tokens": int_at(&r, 1)}))
}

/// Long-term memories: all, and the current ones (not deprecated or superseded). `null`
/// under an agent scope (memories belong to a resource).
fn memories(conn: &mut dyn Conn, resource: Option<&str>, by_agent: bool) -> Result<Json> {
    if by_agent {
        return Ok(Json::Null);
    }
    let r = conn
        .query(
            "SELECT count(*), \
               CAST(coalesce(sum(CASE WHEN deprecated = 0 AND superseded_by IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT) \
             FROM mem_memories WHERE (CAST(?1 AS TEXT) IS NULL OR resource_id = ?1)",
            &[resource.into()],
        )?
        .into_iter()
        .next()
        .unwrap_or_default();
    Ok(json!({"total": int_at(&r, 0), "current": int_at(&r, 1)}))
}

#[cfg(test)]
mod tests {
    use super::day_name;

    #[test]
    fn day_names_are_civil_dates() {
        assert_eq!(day_name(0), "1970-01-01");
        assert_eq!(day_name(-1), "1969-12-31");
        assert_eq!(day_name(59), "1970-03-01");
        assert_eq!(day_name(11_016), "2000-02-29");
        assert_eq!(day_name(20_781), "2026-11-24");
    }
}
