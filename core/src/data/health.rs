//! `mem_health`: how a resource's long-term memory is doing, as a panel shows it — the current
//! memories counted (active, needing review, stale), one score with its formula, how much of
//! the code graph the memories cover by folder, and what needs attention first.

use super::stats::int_at;
use crate::db::row::Fields;
use crate::ids::check_id;
use crate::json_opts::Opts;
use crate::{Conn, Result, Value};
use serde_json::{json, Value as Json};
use crate::db::batch::query_in;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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
                WHERE {CURRENT} AND needs_review = 1 ORDER BY created_at, id", resource, limit,
                &["id", "content", "created_at"])?,
            "blocked_tasks": listed(conn, "SELECT id, title, updated_at FROM mem_tasks \
                WHERE resource_id = ?1 AND is_blocked <> 0 AND status <> 'closed' \
                ORDER BY updated_at, id", resource, limit, &["id", "title", "updated_at"])?,
        },
    });
    Ok(out.to_string())
}

/// Which of the memories `seqs` are the caller's current memories of `resource`.
fn current_of(conn: &mut dyn Conn, resource: &str, seqs: BTreeSet<i64>) -> Result<HashSet<i64>> {
    let keys: Vec<Value> = seqs.into_iter().map(Value::Int).collect();
    let by_key = conn.dialect().key_lookup_hint();
    Ok(query_in(
        conn,
        &format!("SELECT seq FROM mem_memories{by_key} WHERE seq IN ({{keys}}) AND {CURRENT}"),
        &[resource.into()],
        &keys,
    )?
    .iter()
    .filter_map(|r| r.first().and_then(Value::as_i64))
    .collect())
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
/// most files first (ties by folder). Only the folders shown are looked up: their files'
/// memories through the files index (derived data, read apart: `db::privilege`), then which of
/// those are the caller's current memories of the resource, so the work follows the answer
/// rather than the number of memories.
fn modules(conn: &mut dyn Conn, resource: &str, limit: i64) -> Result<Json> {
    let files = conn.query(
        "SELECT file_path FROM mem_graph_nodes WHERE resource_id = ?1 AND type = 'file' \
         AND file_path IS NOT NULL AND stale_at IS NULL",
        &[resource.into()],
    )?;
    let mut by_folder: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in files {
        let Some(Value::Text(path)) = r.into_iter().next() else { continue };
        let folder = path.rsplit_once('/').map_or(".", |(dir, _)| dir).to_owned();
        by_folder.entry(folder).or_default().push(path);
    }
    let mut folders: Vec<(String, Vec<String>)> = by_folder.into_iter().collect();
    folders.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    folders.truncate(limit as usize);
    let shown: Vec<Value> = folders.iter().flat_map(|(_, f)| f.iter().map(|p| p.as_str().into())).collect();
    let pairs = query_in(
        conn,
        "SELECT memory_seq, file_path FROM mem_memory_files WHERE file_path IN ({keys}){home}",
        &[],
        &shown,
    )?;
    // A file is covered by any one current memory: first ask about one memory per file (a
    // file named by a hundred memories costs one lookup), then about all the others of the
    // files still uncovered at once — so memories of other resources or tenants naming the
    // same paths add keys to look up, never rounds of statements.
    let mut naming: HashMap<&str, Vec<i64>> = HashMap::new();
    for r in &pairs {
        if let (Some(seq), Some(path)) = (r.first().and_then(Value::as_i64), r.get(1).and_then(|v| v.as_str())) {
            naming.entry(path).or_default().push(seq);
        }
    }
    let first: BTreeSet<i64> = naming.values().filter_map(|seqs| seqs.first().copied()).collect();
    let mut current = current_of(conn, resource, first)?;
    let rest: BTreeSet<i64> = naming
        .values()
        .filter(|seqs| !current.contains(&seqs[0]))
        .flat_map(|seqs| seqs[1..].iter().copied())
        .collect();
    current.extend(current_of(conn, resource, rest)?);
    let named: HashSet<&str> = naming
        .iter()
        .filter(|(_, seqs)| seqs.iter().any(|s| current.contains(s)))
        .map(|(path, _)| *path)
        .collect();
    let folders: Vec<(String, (i64, i64))> = folders
        .iter()
        .map(|(folder, files)| {
            let covered = files.iter().filter(|f| named.contains(f.as_str())).count();
            (folder.clone(), (files.len() as i64, covered as i64))
        })
        .collect();
    Ok(folders
        .into_iter()
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
