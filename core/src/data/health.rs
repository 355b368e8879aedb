//! `mem_health`: how a resource's long-term memory is doing, as a panel shows it — the current
//! memories counted (active, needing review, stale), one score with its formula, how much of
//! the code graph the memories cover by folder, and what needs attention first.

use super::stats::int_at;
use crate::db::row::Fields;
use crate::ids::check_id;
use crate::json_opts::Opts;
use crate::{Conn, Result, Value};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashSet};

const OPTIONS: &[&str] = &["window_days", "limit", "now"];

const DAY_MS: i64 = 86_400_000;

/// The score's formula, as the answer states it.
const FORMULA: &str =
    "round(40 × (1 − needs_review/total) + 30 × (1 − stale/total) + 30 × active/total)";

/// A current memory: neither deprecated nor superseded.
const CURRENT: &str = "resource_id = ?1 AND deprecated = 0 AND superseded_by IS NULL";

/// `mem_health(resource_id [, options])` → JSON: `memories` (`total` current ones, `active`
/// — written or used within `window_days` —, `needs_review`, `stale`, `pinned`, `verified`),
/// `score` (0–100, null without memories) and its `formula`, `modules` (the code graph's
/// folders, most files first: `files`, `covered` by a current memory's related files,
/// `coverage`), and `attention` (`stale` and `review` memories, oldest first, and the open
/// `blocked_tasks` untouched longest). Options: `window_days` (30), `limit` (10 per list), `now`.
pub(crate) fn health(conn: &mut dyn Conn, resource: &str, options: Option<&str>) -> Result<String> {
    check_id("resource_id", resource)?;
    let o = Opts::parse("options", options, OPTIONS)?;
    let window = o.int("window_days", 30, 1, 36_500)?;
    let limit = o.int("limit", 10, 0, 1000)?;
    let now = conn.now_or(o.opt_int("now")?)?;
    let since = now - window * DAY_MS;
    let r = conn
        .query(
            &format!(
                "SELECT count(*), \
                   CAST(coalesce(sum(CASE WHEN created_at >= ?2 OR last_accessed_at >= ?2 \
                     THEN 1 ELSE 0 END), 0) AS BIGINT), \
                   CAST(coalesce(sum(CASE WHEN needs_review <> 0 THEN 1 ELSE 0 END), 0) AS BIGINT), \
                   CAST(coalesce(sum(CASE WHEN stale_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS BIGINT), \
                   CAST(coalesce(sum(CASE WHEN pinned <> 0 THEN 1 ELSE 0 END), 0) AS BIGINT), \
                   CAST(coalesce(sum(CASE WHEN user_verified <> 0 THEN 1 ELSE 0 END), 0) AS BIGINT) \
                 FROM mem_memories WHERE {CURRENT}"
            ),
            &[resource.into(), Value::Int(since)],
        )?
        .into_iter()
        .next()
        .unwrap_or_default();
    let (total, active, review, stale) = (int_at(&r, 0), int_at(&r, 1), int_at(&r, 2), int_at(&r, 3));
    let score = (total > 0).then(|| {
        let share = |n: i64| n as f64 / total as f64;
        (40.0 * (1.0 - share(review)) + 30.0 * (1.0 - share(stale)) + 30.0 * share(active)).round()
            as i64
    });
    let out = json!({
        "resource_id": resource,
        "memories": {
            "total": total,
            "active": active,
            "needs_review": review,
            "stale": stale,
            "pinned": int_at(&r, 4),
            "verified": int_at(&r, 5),
        },
        "window_days": window,
        "score": score,
        "formula": FORMULA,
        "modules": modules(conn, resource, limit)?,
        "attention": {
            "stale": listed(conn, "SELECT id, content, stale_at FROM mem_memories \
                WHERE {CURRENT} AND stale_at IS NOT NULL ORDER BY stale_at, id", resource, limit,
                &["id", "content", "stale_at"])?,
            "review": listed(conn, "SELECT id, content, created_at FROM mem_memories \
                WHERE {CURRENT} AND needs_review <> 0 ORDER BY created_at, id", resource, limit,
                &["id", "content", "created_at"])?,
            "blocked_tasks": listed(conn, "SELECT id, title, updated_at FROM mem_tasks \
                WHERE resource_id = ?1 AND is_blocked <> 0 AND status <> 'closed' \
                ORDER BY updated_at, id", resource, limit, &["id", "title", "updated_at"])?,
        },
    });
    Ok(out.to_string())
}

/// The first `limit` rows of `sql` (its `{CURRENT}` filled, `?1` the resource) as objects.
fn listed(conn: &mut dyn Conn, sql: &str, resource: &str, limit: i64, keys: &[&str]) -> Result<Json> {
    let sql = format!("{} LIMIT {limit}", sql.replace("{CURRENT}", CURRENT));
    let rows = conn.query(&sql, &[resource.into()])?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut f = Fields::new(r);
            let obj: serde_json::Map<String, Json> = keys
                .iter()
                .map(|k| {
                    let v = match f.value() {
                        Value::Int(i) => Json::from(i),
                        Value::Text(t) => Json::from(t),
                        _ => Json::Null,
                    };
                    ((*k).to_owned(), v)
                })
                .collect();
            Json::Object(obj)
        })
        .collect())
}

/// The code graph's folders with their files, and how many of those a current memory names,
/// most files first (ties by folder).
fn modules(conn: &mut dyn Conn, resource: &str, limit: i64) -> Result<Json> {
    let files = conn.query(
        "SELECT file_path FROM mem_graph_nodes WHERE resource_id = ?1 AND type = 'file' \
         AND file_path IS NOT NULL AND stale_at IS NULL",
        &[resource.into()],
    )?;
    if files.is_empty() {
        return Ok(Json::Array(Vec::new()));
    }
    let mut named = HashSet::new();
    for r in conn.query(
        &format!("SELECT related_files FROM mem_memories WHERE {CURRENT}"),
        &[resource.into()],
    )? {
        if let Some(Value::Text(t)) = r.into_iter().next() {
            named.extend(serde_json::from_str::<Vec<String>>(&t).unwrap_or_default());
        }
    }
    let mut by_folder: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for r in files {
        let Some(Value::Text(path)) = r.into_iter().next() else { continue };
        let folder = path.rsplit_once('/').map_or(".", |(dir, _)| dir).to_owned();
        let e = by_folder.entry(folder).or_default();
        e.0 += 1;
        e.1 += i64::from(named.contains(&path));
    }
    let mut folders: Vec<(String, (i64, i64))> = by_folder.into_iter().collect();
    folders.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    Ok(folders
        .into_iter()
        .take(limit as usize)
        .map(|(module, (files, covered))| {
            json!({
                "module": module,
                "files": files,
                "covered": covered,
                "coverage": covered as f64 / files as f64,
            })
        })
        .collect())
}
