//! The reading task functions and the task JSON the task tools answer with.

use super::graph::NS_TASKS;
use super::{check_one_of, STATUSES, TYPES};
use crate::cluster::route::{self, HomeParam};
use crate::columns::row;
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::search::partition::{self, Doc};
use crate::search::rows::{self, Allowed};
use crate::search::{self, SearchParams, SnippetSettings};
use crate::{Conn, Error, Result, Value};
use serde_json::{json, Map, Value as Json};
use std::collections::{HashMap, HashSet};

const READY_OPTIONS: &[&str] = &[
    "resource_id",
    "limit",
    "labels",
    "assignee",
    "parent",
    "type",
    "include_epics",
    "now",
];
const LIST_OPTIONS: &[&str] = &[
    "resource_id",
    "limit",
    "status",
    "type",
    "assignee",
    "labels",
    "parent",
    "blocked",
];
const SEARCH_OPTIONS: &[&str] = &["resource_id", "limit", "status", "now"];

pub(crate) const MAX_READY_LIMIT: i64 = 1000;
pub(crate) const MAX_LIST_LIMIT: i64 = 10_000;

/// The rows of a task query whose first column is the task id, each as its id, the task's
/// labels (JSON array text) and the row's other columns.
fn labelled_rows(
    conn: &mut dyn Conn,
    sql: &str,
    params: &[Value],
) -> Result<Vec<(String, String, Fields)>> {
    let rows = conn.query(sql, params)?;
    let ids: Vec<String> = rows
        .iter()
        .filter_map(|r| r.first()?.as_str().map(str::to_owned))
        .collect();
    let labels = labels_of(conn, &ids)?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut f = Fields::new(r);
            let id = f.text().unwrap_or_default();
            let l = labels_json(labels.get(&id));
            (id, l, f)
        })
        .collect())
}

/// The labels of the given tasks, as sorted JSON array text per task.
fn labels_of(conn: &mut dyn Conn, ids: &[String]) -> Result<HashMap<String, Vec<String>>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let ph: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
        let mut params: Vec<Value> = chunk.iter().map(|s| s.as_str().into()).collect();
        let home = route::and_home(conn, "resource_id", &mut params);
        let sql = format!(
            "SELECT task_id, label FROM mem_task_labels WHERE task_id IN ({}){home} ORDER BY task_id, label",
            ph.join(", ")
        );
        for r in conn.query(&sql, &params)? {
            let mut f = Fields::new(r);
            if let (Some(t), Some(l)) = (f.text(), f.text()) {
                out.entry(t).or_default().push(l);
            }
        }
    }
    Ok(out)
}

fn labels_json(labels: Option<&Vec<String>>) -> String {
    Json::from(labels.cloned().unwrap_or_default()).to_string()
}

/// SQL conditions and parameters shared by `task_ready` and `task_list`: labels (all of
/// them), parent (every descendant through parent-child), assignee, type.
struct Filter {
    sql: String,
    params: Vec<Value>,
}

impl Filter {
    fn new(params: Vec<Value>) -> Filter {
        Filter {
            sql: String::new(),
            params,
        }
    }

    fn param(&mut self, v: Value) -> String {
        self.params.push(v);
        format!("?{}", self.params.len())
    }

    fn apply(&mut self, conn: &mut dyn Conn, o: &Opts) -> Result<()> {
        let home = HomeParam::push(conn, &mut self.params);
        if let Some(r) = o.opt_str("resource_id")? {
            let p = self.param(r.into());
            self.sql.push_str(&format!(" AND t.resource_id = {p}"));
        }
        if let Some(a) = o.opt_str("assignee")? {
            let p = self.param(a.into());
            self.sql.push_str(&format!(" AND t.assignee = {p}"));
        }
        if let Some(ty) = o.opt_str("type")? {
            check_one_of(&o.name("type"), &ty, TYPES)?;
            let p = self.param(ty.into());
            self.sql.push_str(&format!(" AND t.type = {p}"));
        }
        if let Some(labels) = o.opt_strings("labels")? {
            let labels = super::check_labels(&o.name("labels"), &labels)?;
            if !labels.is_empty() {
                let ps: Vec<String> = labels
                    .iter()
                    .map(|l| self.param(l.as_str().into()))
                    .collect();
                self.sql.push_str(&format!(
                    " AND (SELECT count(*) FROM mem_task_labels l \
                       WHERE l.task_id = t.id AND l.label IN ({}){}) = {}",
                    ps.join(", "),
                    home.and("l.resource_id"),
                    labels.len()
                ));
            }
        }
        if let Some(parent) = o.opt_str("parent")? {
            let p = self.param(parent.into());
            let (first, next) = (home.and("resource_id"), home.and("x.resource_id"));
            self.sql.push_str(&format!(
                " AND t.id IN (WITH RECURSIVE d(id) AS (\
                   SELECT task_id FROM mem_task_deps WHERE depends_on_id = {p} AND type = 'parent-child'{first} \
                   UNION SELECT x.task_id FROM mem_task_deps x JOIN d ON x.depends_on_id = d.id \
                     AND x.type = 'parent-child'{next}) \
                 SELECT id FROM d)"
            ));
        }
        Ok(())
    }
}

row! {
    /// One row of `task_ready`.
    #[derive(Clone, Debug, PartialEq)]
    pub(crate) struct ReadyRow {
        pub id: String,
        pub title: String,
        pub priority: i64,
        pub r#type: String,
        pub status: String,
        pub assignee: Option<String>,
        /// JSON array text.
        pub labels: String,
        pub created_at: i64,
    }
}

row! {
    /// One row of `task_list`.
    pub(crate) struct TaskRow {
        pub id: String,
        pub title: String,
        pub status: String,
        pub priority: i64,
        pub r#type: String,
        pub assignee: Option<String>,
        pub session_id: Option<String>,
        /// JSON array text.
        pub labels: String,
        pub is_blocked: i64,
        pub created_at: i64,
        pub updated_at: i64,
        pub closed_at: Option<i64>,
    }
}

row! {
    /// One row of `task_search`.
    pub(crate) struct TaskHit {
        pub id: String,
        pub title: String,
        pub status: String,
        pub priority: i64,
        pub r#type: String,
        pub score: f64,
        pub snippet: String,
    }
}

/// `task_ready([options])`: open, not blocked, not deferred (`defer_until` in the future),
/// epics only with `include_epics`; by priority, then age, then id. Options: limit (default
/// 10), labels (all must be present), assignee, parent (any descendant), type, include_epics,
/// now. Without filters it reads the first `limit` entries of the partial index
/// `mem_tasks_ready`: O(limit + skipped deferred or epic rows), no graph walk.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn ready(conn: &mut dyn Conn, options: Option<&str>) -> Result<Vec<ReadyRow>> {
    let o = Opts::parse("options", options, READY_OPTIONS)?;
    let limit = o.int("limit", 10, 0, MAX_READY_LIMIT)?;
    let now = conn.now_or(o.opt_int("now")?)?;
    let epics = o.opt_bool("include_epics")?.unwrap_or(false)
        || o.opt_str("type")?.as_deref() == Some("epic");
    let mut f = Filter::new(vec![
        Value::Int(now),
        Value::Int(epics as i64),
        Value::Int(limit),
    ]);
    f.apply(conn, &o)?;
    // SQLite's planner, without statistics, prefers the status index and sorts; the partial
    // index gives the order and stops after `limit` rows.
    let hint = conn.dialect().index_hint("mem_tasks_ready");
    let sql = format!(
        "SELECT t.id, t.title, t.priority, t.type, t.status, t.assignee, t.created_at FROM mem_tasks t{hint} \
         WHERE t.status = 'open' AND t.is_blocked = 0 AND (t.defer_until IS NULL OR t.defer_until <= ?1) \
         AND (?2 = 1 OR t.type <> 'epic'){} ORDER BY t.priority, t.created_at, t.id LIMIT ?3",
        f.sql
    );
    Ok(labelled_rows(conn, &sql, &f.params)?
        .into_iter()
        .map(|(id, labels, mut f)| ReadyRow {
            labels,
            id,
            title: f.text().unwrap_or_default(),
            priority: f.int().unwrap_or(2),
            r#type: f.text().unwrap_or_default(),
            status: f.text().unwrap_or_default(),
            assignee: f.text(),
            created_at: f.int().unwrap_or(0),
        })
        .collect())
}

/// `task_list([options])`: tasks by priority, then age, then id. Options: status, type,
/// assignee, labels, parent, blocked (true/false), limit (default 100).
pub(crate) fn list(conn: &mut dyn Conn, options: Option<&str>) -> Result<Vec<TaskRow>> {
    let o = Opts::parse("options", options, LIST_OPTIONS)?;
    let limit = o.int("limit", 100, 0, MAX_LIST_LIMIT)?;
    let mut f = Filter::new(vec![Value::Int(limit)]);
    if let Some(s) = o.opt_str("status")? {
        check_one_of("options.status", &s, STATUSES)?;
        let p = f.param(s.into());
        f.sql.push_str(&format!(" AND t.status = {p}"));
    }
    if let Some(b) = o.opt_bool("blocked")? {
        f.sql.push_str(if b {
            " AND t.is_blocked = 1"
        } else {
            " AND t.is_blocked = 0"
        });
    }
    f.apply(conn, &o)?;
    let sql = format!(
        "SELECT t.id, t.title, t.status, t.priority, t.type, t.assignee, t.session_id, t.is_blocked, \
         t.created_at, t.updated_at, t.closed_at FROM mem_tasks t WHERE 1 = 1{} \
         ORDER BY t.priority, t.created_at, t.id LIMIT ?1",
        f.sql
    );
    Ok(labelled_rows(conn, &sql, &f.params)?
        .into_iter()
        .map(|(id, labels, mut f)| TaskRow {
            id,
            title: f.text().unwrap_or_default(),
            status: f.text().unwrap_or_default(),
            priority: f.int().unwrap_or_default(),
            r#type: f.text().unwrap_or_default(),
            assignee: f.text(),
            session_id: f.text(),
            labels,
            is_blocked: f.int().unwrap_or_default(),
            created_at: f.int().unwrap_or_default(),
            updated_at: f.int().unwrap_or_default(),
            closed_at: f.int(),
        })
        .collect())
}

/// `task_search(query [, options])`: the search engine over title, description and summary
/// (namespace `task`). Options: limit (default 10), status, now.
pub(crate) fn search_tasks(
    conn: &mut dyn Conn,
    query: Option<&str>,
    options: Option<&str>,
) -> Result<Vec<TaskHit>> {
    let o = Opts::parse("options", options, SEARCH_OPTIONS)?;
    let limit = o.int("limit", 10, 0, MAX_READY_LIMIT)?;
    let status = o.opt_str("status")?;
    if let Some(s) = &status {
        check_one_of("options.status", s, STATUSES)?;
    }
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    let params = SearchParams {
        limit: limit as usize,
        now: o.opt_int("now")?,
        ..SearchParams::default()
    };
    let resource = o.opt_str("resource_id")?;
    let scope = resource.clone();
    let allowed = match (&status, &resource) {
        (None, None) => Allowed::every(conn, "mem_tasks")?,
        _ => Allowed::query(
            conn,
            "SELECT seq FROM mem_tasks WHERE (CAST(?1 AS TEXT) IS NULL OR status = CAST(?1 AS TEXT)) \
               AND (CAST(?2 AS TEXT) IS NULL OR resource_id = CAST(?2 AS TEXT))",
            &[status.clone().into(), resource.into()],
        )?,
    };
    let result = rows::search_allowed(conn, NS_TASKS, scope.as_deref(), query, &params, &allowed)?;
    let seqs: Vec<i64> = result.hits.iter().map(|h| h.doc).collect();
    let mut found = rows::hydrate(
        conn,
        "mem_tasks",
        "id, title, status, priority, type, description, summary",
        &seqs,
        scope.as_deref(),
    )?;
    let snippet = SnippetSettings::default();
    let mut out = Vec::new();
    for h in &result.hits {
        let Some(r) = found.remove(&h.doc) else {
            continue;
        };
        let mut f = Fields::new(r);
        let (id, title) = (f.text().unwrap_or_default(), f.text().unwrap_or_default());
        let (status, priority) = (f.text().unwrap_or_default(), f.int().unwrap_or_default());
        let r#type = f.text().unwrap_or_default();
        let mut full = title.clone();
        for part in [f.text(), f.text()].into_iter().flatten() {
            full.push('\n');
            full.push_str(&part);
        }
        out.push(TaskHit {
            snippet: search::snippet(&full, query, &snippet),
            id,
            title,
            status,
            priority,
            r#type,
            score: h.score,
        });
    }
    Ok(out)
}

/// Rebuilds the task index from `mem_tasks`. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    partition::rebuild(
        conn,
        NS_TASKS,
        "SELECT seq, title, description, summary, created_at, resource_id FROM mem_tasks ORDER BY seq",
        |f| {
            let key = f.int()?;
            let title = f.text().unwrap_or_default();
            let (description, summary) = (f.text(), f.text());
            let created = f.int()?;
            let text =
                super::graph::search_text(&title, description.as_deref(), summary.as_deref());
            Some(Doc {
                key,
                text,
                created,
                resource: f.text().unwrap_or_default(),
            })
        },
    )
}

/// What blocks a task, root causes first: its open `blocks` targets, then (for a task blocked
/// through its parents) the open blockers of its blocked ancestors. O(blocked ancestry).
pub(crate) fn blockers(conn: &mut dyn Conn, task_id: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::from([task_id.to_owned()]);
    let mut queue = vec![task_id.to_owned()];
    let mut i = 0;
    while i < queue.len() {
        let x = queue[i].clone();
        i += 1;
        let mut params = vec![x.as_str().into()];
        let home = HomeParam::push(conn, &mut params);
        let (d, b, p) = (
            home.and("d.resource_id"),
            home.and("b.resource_id"),
            home.and("p.resource_id"),
        );
        for r in conn.query(
            &format!(
                "SELECT d.depends_on_id FROM mem_task_deps d JOIN mem_tasks b ON b.id = d.depends_on_id \
                 WHERE d.task_id = ?1 AND d.type = 'blocks' AND b.status <> 'closed'{d}{b} \
                 ORDER BY b.priority, b.created_at, b.id"
            ),
            &params,
        )? {
            if let Some(id) = Fields::new(r).text() {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        for r in conn.query(
            &format!(
                "SELECT d.depends_on_id FROM mem_task_deps d JOIN mem_tasks p ON p.id = d.depends_on_id \
                 WHERE d.task_id = ?1 AND d.type = 'parent-child' AND p.is_blocked = 1{d}{p} ORDER BY p.id"
            ),
            &params,
        )? {
            if let Some(id) = Fields::new(r).text() {
                if seen.insert(id.clone()) {
                    queue.push(id);
                }
            }
        }
    }
    Ok(out)
}

/// The tasks as the tools' `Task` objects (absent optional fields left out), in the order of
/// `ids`; unknown ids are skipped. A handful of indexed queries for any number of tasks.
pub(crate) fn task_objects(conn: &mut dyn Conn, ids: &[String]) -> Result<Vec<Json>> {
    let mut objs: HashMap<String, Map<String, Json>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let ph: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
        let list = ph.join(", ");
        let mut params: Vec<Value> = chunk.iter().map(|s| s.as_str().into()).collect();
        let home = HomeParam::push(conn, &mut params);
        let sql = format!(
            "SELECT id, title, description, status, priority, type, assignee, session_id, created_at, \
             updated_at, closed_at, close_reason, summary, compaction_level, compacted_at, original_content, \
             CAST(metadata AS TEXT), defer_until FROM mem_tasks WHERE id IN ({list}){}",
            home.and("resource_id")
        );
        for r in conn.query(&sql, &params)? {
            let mut f = Fields::new(r);
            let mut m = Map::new();
            let id = f.text().unwrap_or_default();
            m.insert("id".into(), json!(id));
            let put_text = |m: &mut Map<String, Json>, k: &str, v: Option<String>| {
                if let Some(s) = v {
                    m.insert(k.into(), json!(s));
                }
            };
            put_text(&mut m, "title", f.text());
            put_text(&mut m, "description", f.text());
            put_text(&mut m, "status", f.text());
            m.insert("priority".into(), json!(f.int().unwrap_or(2)));
            put_text(&mut m, "type", f.text());
            put_text(&mut m, "assignee", f.text());
            put_text(&mut m, "sessionId", f.text());
            m.insert("createdAt".into(), json!(f.int().unwrap_or(0)));
            m.insert("updatedAt".into(), json!(f.int().unwrap_or(0)));
            if let Some(c) = f.int() {
                m.insert("closedAt".into(), json!(c));
            }
            put_text(&mut m, "closeReason", f.text());
            put_text(&mut m, "summary", f.text());
            m.insert("compactionLevel".into(), json!(f.int().unwrap_or(0)));
            if let Some(c) = f.int() {
                m.insert("compactedAt".into(), json!(c));
            }
            put_text(&mut m, "originalContent", f.text());
            if let Some(meta) = f.text() {
                if let Ok(v @ Json::Object(_)) = serde_json::from_str::<Json>(&meta) {
                    if v.as_object().is_some_and(|o| !o.is_empty()) {
                        m.insert("metadata".into(), v);
                    }
                }
            }
            if let Some(d) = f.int() {
                m.insert("deferUntil".into(), json!(d));
            }
            m.insert("dependencies".into(), json!([]));
            m.insert("labels".into(), json!([]));
            m.insert("linkedMessageIds".into(), json!([]));
            objs.insert(id, m);
        }
        let sql = format!(
            "SELECT task_id, depends_on_id, type FROM mem_task_deps WHERE task_id IN ({list}){} \
             ORDER BY task_id, created_at, depends_on_id, type",
            home.and("resource_id")
        );
        for r in conn.query(&sql, &params)? {
            let mut f = Fields::new(r);
            let (t, d, ty) = (f.text(), f.text(), f.text());
            if let (Some(t), Some(d), Some(ty)) = (t, d, ty) {
                if let Some(Json::Array(a)) =
                    objs.get_mut(&t).and_then(|m| m.get_mut("dependencies"))
                {
                    a.push(json!({ "taskId": t, "dependsOnId": d, "type": ty }));
                }
            }
        }
        let sql = format!(
            "SELECT task_id, label FROM mem_task_labels WHERE task_id IN ({list}){} ORDER BY task_id, label",
            home.and("resource_id")
        );
        for r in conn.query(&sql, &params)? {
            let mut f = Fields::new(r);
            if let (Some(t), Some(l)) = (f.text(), f.text()) {
                if let Some(Json::Array(a)) = objs.get_mut(&t).and_then(|m| m.get_mut("labels")) {
                    a.push(json!(l));
                }
            }
        }
        let sql = format!(
            "SELECT tm.task_id, tm.message_id FROM mem_task_messages tm JOIN mem_messages m ON m.id = tm.message_id \
             WHERE tm.task_id IN ({list}){}{} ORDER BY tm.task_id, m.created_at, m.message_index, tm.message_id",
            home.and("tm.resource_id"),
            home.and("m.resource_id")
        );
        for r in conn.query(&sql, &params)? {
            let mut f = Fields::new(r);
            if let (Some(t), Some(mid)) = (f.text(), f.text()) {
                if let Some(Json::Array(a)) =
                    objs.get_mut(&t).and_then(|m| m.get_mut("linkedMessageIds"))
                {
                    a.push(json!(mid));
                }
            }
        }
    }
    Ok(ids
        .iter()
        .filter_map(|id| objs.get(id).cloned().map(Json::Object))
        .collect())
}

/// The task, whether it is blocked, and what blocks it (as `Task` objects); `None` for an
/// unknown id.
pub(crate) fn show_value(conn: &mut dyn Conn, task_id: &str) -> Result<Option<Json>> {
    let Some(task) = task_objects(conn, &[task_id.to_owned()])?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let blocked = super::task_columns(conn, task_id, "is_blocked")?
        .int()
        .unwrap_or(0)
        != 0;
    let blocking = if blocked {
        let ids = blockers(conn, task_id)?;
        task_objects(conn, &ids)?
    } else {
        Vec::new()
    };
    Ok(Some(
        json!({ "task": task, "isBlocked": blocked, "blockingTasks": blocking }),
    ))
}

/// `task_show(task_id)` → JSON `{"task": Task, "isBlocked": …, "blockingTasks": [Task]}`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn show(conn: &mut dyn Conn, task_id: &str) -> Result<String> {
    show_value(conn, task_id)?
        .map(|v| v.to_string())
        .ok_or_else(|| Error::not_found("task", task_id))
}

/// Ready tasks (open, unblocked, not deferred, epics excluded) and blocked non-closed tasks,
/// of a resource or of the whole database: the counts of the task-query tool. O(ready +
/// blocked) index entries.
pub(crate) fn counts(conn: &mut dyn Conn, resource: Option<&str>) -> Result<(i64, i64)> {
    let now = conn.now_ms()?;
    let within = "(CAST(?1 AS TEXT) IS NULL OR resource_id = CAST(?1 AS TEXT))";
    let ready = conn
        .query_value(
            &format!(
                "SELECT count(*) FROM mem_tasks WHERE status = 'open' AND is_blocked = 0 \
                 AND (defer_until IS NULL OR defer_until <= ?2) AND type <> 'epic' AND {within}"
            ),
            &[resource.into(), Value::Int(now)],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let blocked = conn
        .query_value(
            &format!(
                "SELECT count(*) FROM mem_tasks WHERE status <> 'closed' AND is_blocked = 1 AND {within}"
            ),
            &[resource.into()],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    Ok((ready, blocked))
}
