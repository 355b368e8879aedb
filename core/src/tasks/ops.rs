//! The writing task functions. Each validates everything first, then writes with plain
//! statements; the row triggers ([`super::graph`]) keep the blocked state and the index.

use super::graph::{self, is_blocking};
use super::{
    check_labels, check_one_of, check_priority, check_title, status_of, CLOSE_REASONS, RELATIONS,
    STATUS_CLOSED, TYPES,
};
use crate::cluster::route::{self, HomeParam};
use crate::error::{echo_bare, echo_list};
use crate::json_opts::Opts;
use crate::{ids, threads, threads::messages::check_content, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};

const CREATE_OPTIONS: &[&str] = &[
    "resource_id",
    "description",
    "priority",
    "type",
    "labels",
    "assignee",
    "parent",
    "metadata",
    "defer_until",
    "id",
    "created_at",
];

const UPDATE_OPTIONS: &[&str] = &[
    "title",
    "description",
    "priority",
    "type",
    "labels",
    "status",
    "assignee",
    "defer_until",
    "metadata",
];

const MS_PER_DAY: i64 = 86_400_000;
/// Beads' compaction tiers: a task closed this many days ago may be compacted to level 1 / 2.
pub(crate) const TIER1_DAYS: i64 = 30;
pub(crate) const TIER2_DAYS: i64 = 90;

fn must_exist(conn: &mut dyn Conn, id: &str) -> Result<()> {
    if graph::task_exists(conn, id)? {
        Ok(())
    } else {
        Err(Error::not_found("task", id))
    }
}

fn insert_labels(conn: &mut dyn Conn, id: &str, labels: &[String]) -> Result<()> {
    for l in labels {
        let mut params = vec![id.into(), l.as_str().into()];
        let (column, value) = HomeParam::push(conn, &mut params).insert();
        conn.execute(
            &format!("INSERT INTO mem_task_labels (task_id, label{column}) VALUES (?1, ?2{value})"),
            &params,
        )?;
    }
    Ok(())
}

/// `task_create(title [, options])` → id. Options: resource_id (whose task it is),
/// description, priority (0–4, default 2), type (default task), labels, assignee, parent
/// (adds a parent-child dependency), metadata, defer_until, id, created_at. O(log n) plus
/// indexing the text.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn create(conn: &mut dyn Conn, title: &str, options: Option<&str>) -> Result<String> {
    check_title("title", title)?;
    let o = Opts::parse("options", options, CREATE_OPTIONS)?;
    let id = match o.opt_str("id")? {
        Some(id) => {
            ids::check_id("options.id", &id)?;
            if graph::task_exists(conn, &id)? {
                return Err(Error::invalid(
                    "options.id",
                    format!("task {id} already exists"),
                ));
            }
            id
        }
        None => ids::new_id(),
    };
    let description = o.opt_str("description")?;
    if let Some(d) = &description {
        check_content("options.description", d)?;
    }
    let priority = o.opt_int("priority")?.unwrap_or(2);
    check_priority("options.priority", priority)?;
    let ty = o.opt_str("type")?.unwrap_or_else(|| "task".into());
    check_one_of("options.type", &ty, TYPES)?;
    let labels = check_labels(
        "options.labels",
        &o.opt_strings("labels")?.unwrap_or_default(),
    )?;
    let assignee = o.opt_str("assignee")?;
    if let Some(a) = &assignee {
        ids::check_id("options.assignee", a)?;
    }
    let parent = o.opt_str("parent")?;
    if let Some(p) = &parent {
        if !graph::task_exists(conn, p)? {
            return Err(Error::not_found("task", p.clone()));
        }
    }
    let metadata = o.opt_object("metadata")?.unwrap_or_else(|| "{}".into());
    let defer_until = o.opt_int("defer_until")?;
    let resource = o.opt_str("resource_id")?;
    match &resource {
        Some(r) => ids::check_id("options.resource_id", r)?,
        None if route::distributed(conn)? => {
            return Err(Error::invalid(
                "options.resource_id",
                "is required on a distributed database (a task lives on its resource's node)",
            ))
        }
        None => {}
    }
    let now = conn.now_ms()?;
    let created_at = o.opt_int("created_at")?.unwrap_or(now);
    conn.execute(
        "INSERT INTO mem_tasks (id, title, description, priority, type, assignee, metadata, defer_until, \
         created_at, updated_at, resource_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, CAST(?7 AS @JSON), CAST(?8 AS BIGINT), ?9, ?9, ?10)",
        &[
            id.as_str().into(),
            title.into(),
            description.into(),
            Value::Int(priority),
            ty.into(),
            assignee.into(),
            metadata.into(),
            defer_until.into(),
            Value::Int(created_at),
            resource.into(),
        ],
    )?;
    insert_labels(conn, &id, &labels)?;
    if let Some(p) = parent {
        insert_dep(conn, &id, &p, "parent-child", now)?;
    }
    Ok(id)
}

/// Checks a dependency before it is written: both tasks exist, the type is known, no
/// self-dependency, no cycle among blocking types. `Ok(false)` when it already exists.
pub(crate) fn check_dep(
    conn: &mut dyn Conn,
    task_id: &str,
    depends_on_id: &str,
    ty: &str,
) -> Result<bool> {
    graph::check_dep_type("type", ty)?;
    must_exist(conn, task_id)?;
    must_exist(conn, depends_on_id)?;
    if task_id == depends_on_id {
        return graph::check_cycle(conn, task_id, depends_on_id).map(|_| false);
    }
    let mut params = vec![task_id.into(), depends_on_id.into(), ty.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let exists = conn
        .query_value(
            &format!(
                "SELECT 1 FROM mem_task_deps WHERE task_id = ?1 AND depends_on_id = ?2 AND type = ?3{home}"
            ),
            &params,
        )?
        .is_some();
    if exists {
        return Ok(false);
    }
    if is_blocking(ty) {
        graph::check_cycle(conn, task_id, depends_on_id)?;
    }
    Ok(true)
}

/// A dependency as `task_dep_add` and `task_dep_remove` name it: both tasks (required) and
/// the type (optional).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Dep<'a> {
    pub task_id: &'a str,
    pub depends_on_id: &'a str,
    pub ty: Option<&'a str>,
}

impl<'a> Dep<'a> {
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn new(task_id: &'a str, depends_on_id: &'a str, ty: Option<&'a str>) -> Dep<'a> {
        Dep {
            task_id,
            depends_on_id,
            ty,
        }
    }
}

/// `task_dep_add(task_id, depends_on_id [, type])` → 1 when added, 0 when it was there.
/// Type `blocks` by default. O(tasks reachable from depends_on_id) for the cycle check plus
/// O(descendants whose state flips).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn dep_add(conn: &mut dyn Conn, dep: &Dep) -> Result<i64> {
    let Dep {
        task_id,
        depends_on_id,
        ty,
    } = *dep;
    let ty = ty.unwrap_or("blocks");
    if !check_dep(conn, task_id, depends_on_id, ty)? {
        return Ok(0);
    }
    let now = conn.now_ms()?;
    insert_dep(conn, task_id, depends_on_id, ty, now)?;
    Ok(1)
}

/// Writes a dependency row (its triggers keep the blocked state).
fn insert_dep(conn: &mut dyn Conn, task_id: &str, on: &str, ty: &str, now: i64) -> Result<()> {
    let mut params = vec![task_id.into(), on.into(), ty.into(), Value::Int(now)];
    let (column, value) = HomeParam::push(conn, &mut params).insert();
    conn.execute(
        &format!(
            "INSERT INTO mem_task_deps (task_id, depends_on_id, type, created_at{column}) \
             VALUES (?1, ?2, ?3, ?4{value})"
        ),
        &params,
    )
    .map(drop)
}

/// `task_dep_remove(task_id, depends_on_id [, type])` → the number of dependencies removed
/// (every type between the two tasks when type is NULL).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn dep_remove(conn: &mut dyn Conn, dep: &Dep) -> Result<i64> {
    let Dep {
        task_id,
        depends_on_id,
        ty,
    } = *dep;
    if let Some(t) = ty {
        graph::check_dep_type("type", t)?;
    }
    let mut params = vec![task_id.into(), depends_on_id.into(), ty.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    Ok(conn.execute(
        &format!(
            "DELETE FROM mem_task_deps WHERE task_id = ?1 AND depends_on_id = ?2 \
             AND (CAST(?3 AS TEXT) IS NULL OR type = ?3){home}"
        ),
        &params,
    )? as i64)
}

/// Why a claim was refused.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Refusal {
    NotFound,
    ClaimedBy(String),
    Blocked(Vec<String>),
    Closed,
}

impl Refusal {
    pub(crate) fn into_error(self, task_id: &str) -> Error {
        match self {
            Refusal::NotFound => Error::not_found("task", task_id),
            Refusal::ClaimedBy(s) => Error::invalid(
                "task_id",
                format!("already claimed by session {}", echo_bare(&s)),
            ),
            Refusal::Blocked(b) => Error::invalid(
                "task_id",
                format!(
                    "task {} is blocked by open dependencies: {}",
                    echo_bare(task_id),
                    echo_list(&b, ", ")
                ),
            ),
            Refusal::Closed => {
                Error::invalid("task_id", format!("task {} is closed", echo_bare(task_id)))
            }
        }
    }
}

/// `task_claim(task_id, session_id [, thread_id])`. One conditional UPDATE decides: it
/// succeeds only on an open, unblocked task, so of any number of concurrent claimers exactly
/// one changes the row (Postgres re-checks the condition after the row lock; SQLite has one
/// writer). A re-claim by the same session is a no-op success. With a thread, the thread's
/// metadata gets `active_task_id` and `session_id`. O(log n).
pub(crate) fn try_claim(
    conn: &mut dyn Conn,
    task_id: &str,
    session_id: &str,
    thread_id: Option<&str>,
) -> Result<std::result::Result<(), Refusal>> {
    ids::check_id("session_id", session_id)?;
    if let Some(t) = thread_id {
        threads::resource_of(conn, t)?;
    }
    let now = conn.now_ms()?;
    let mut params = vec![task_id.into(), session_id.into(), Value::Int(now)];
    let home = route::and_home(conn, "resource_id", &mut params);
    for _ in 0..4 {
        let won = conn.query(
            &format!(
                "UPDATE mem_tasks SET status = 'in_progress', session_id = ?2, updated_at = ?3 \
                 WHERE id = ?1 AND status = 'open' AND is_blocked = 0{home} RETURNING id"
            ),
            &params,
        )?;
        if won.is_empty() {
            let row = super::task_columns(conn, task_id, "status, session_id, is_blocked");
            let row = match row {
                Ok(f) => f,
                Err(Error::NotFound { .. }) => return Ok(Err(Refusal::NotFound)),
                Err(e) => return Err(e),
            };
            let mut f = row;
            let status = f.text().unwrap_or_default();
            let owner = f.text();
            let blocked = f.int().unwrap_or(0) != 0;
            match status.as_str() {
                "in_progress" if owner.as_deref() == Some(session_id) => {}
                "in_progress" => {
                    return Ok(Err(Refusal::ClaimedBy(
                        owner.unwrap_or_else(|| "(none)".into()),
                    )))
                }
                STATUS_CLOSED => return Ok(Err(Refusal::Closed)),
                _ if blocked => {
                    return Ok(Err(Refusal::Blocked(super::query::blockers(
                        conn, task_id,
                    )?)))
                }
                // The row changed between the two statements (Postgres): decide again.
                _ => continue,
            }
        }
        if let Some(t) = thread_id {
            set_thread_pointers(conn, t, task_id, session_id)?;
        }
        return Ok(Ok(()));
    }
    Err(Error::internal(format!(
        "task {task_id} kept changing while it was claimed; try again"
    )))
}

/// [`try_claim`] with refusals as errors; returns the task id.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn claim(
    conn: &mut dyn Conn,
    task_id: &str,
    session_id: &str,
    thread_id: Option<&str>,
) -> Result<String> {
    match try_claim(conn, task_id, session_id, thread_id)? {
        Ok(()) => Ok(task_id.to_owned()),
        Err(r) => Err(r.into_error(task_id)),
    }
}

/// Sets the thread's `active_task_id` and `session_id`.
fn set_thread_pointers(
    conn: &mut dyn Conn,
    thread_id: &str,
    task_id: &str,
    session_id: &str,
) -> Result<()> {
    let mut params = vec![thread_id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let meta = conn
        .query_value(
            &format!("SELECT CAST(metadata AS TEXT) FROM mem_threads WHERE id = ?1{home}"),
            &params,
        )?
        .and_then(Value::into_string)
        .ok_or_else(|| Error::not_found("thread", thread_id))?;
    let mut m = match serde_json::from_str::<Json>(&meta) {
        Ok(Json::Object(m)) => m,
        _ => Default::default(),
    };
    m.insert("active_task_id".into(), json!(task_id));
    m.insert("session_id".into(), json!(session_id));
    let mut params = vec![thread_id.into(), Json::Object(m).to_string().into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.execute(
        &format!("UPDATE mem_threads SET metadata = CAST(?2 AS @JSON) WHERE id = ?1{home}"),
        &params,
    )?;
    Ok(())
}

/// `task_close(task_id, reason, summary)` → id. Reason completed, wontfix or duplicate; the
/// summary is required. The status trigger unblocks dependents (O(dependents whose state
/// flips, and their descendants)) and clears threads' active-task pointers.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn close(
    conn: &mut dyn Conn,
    task_id: &str,
    reason: &str,
    summary: Option<&str>,
) -> Result<String> {
    check_one_of("reason", reason, CLOSE_REASONS)?;
    let summary = summary.map(str::trim).filter(|s| !s.is_empty());
    let summary = summary.ok_or_else(|| Error::invalid("summary", "must not be empty"))?;
    check_content("summary", summary)?;
    if status_of(conn, task_id)? == STATUS_CLOSED {
        return Err(Error::invalid(
            "task_id",
            format!("task {task_id} is already closed"),
        ));
    }
    let now = conn.now_ms()?;
    let mut params = vec![task_id.into(), reason.into(), summary.into(), Value::Int(now)];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.execute(
        &format!(
            "UPDATE mem_tasks SET status = 'closed', close_reason = ?2, summary = ?3, closed_at = ?4, \
             updated_at = ?4 WHERE id = ?1{home}"
        ),
        &params,
    )?;
    Ok(task_id.to_owned())
}

/// `task_update(task_id, options)` → id. Options: title, description, priority, type,
/// labels (replaces the set), status (only "open": reopens a closed task or releases a
/// claim), assignee, defer_until, metadata; `null` clears an optional field.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn update(conn: &mut dyn Conn, task_id: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, UPDATE_OPTIONS)?;
    status_of(conn, task_id)?;
    let mut sets: Vec<String> = Vec::new();
    let mut params: Vec<Value> = vec![task_id.into()];
    let mut set = |col: &str, cast: Option<&str>, v: Value| {
        params.push(v);
        let p = format!("?{}", params.len());
        sets.push(match cast {
            Some(t) => format!("{col} = CAST({p} AS {t})"),
            None => format!("{col} = {p}"),
        });
    };
    if o.has("title") {
        let t = o
            .opt_str("title")?
            .ok_or_else(|| Error::invalid("options.title", "must not be NULL"))?;
        check_title("options.title", &t)?;
        set("title", None, t.into());
    }
    if o.has("description") {
        let d = o.opt_str("description")?;
        if let Some(d) = &d {
            check_content("options.description", d)?;
        }
        set("description", Some("TEXT"), d.into());
    }
    if o.has("priority") {
        let p = o
            .opt_int("priority")?
            .ok_or_else(|| Error::invalid("options.priority", "must not be NULL"))?;
        check_priority("options.priority", p)?;
        set("priority", None, Value::Int(p));
    }
    if o.has("type") {
        let t = o
            .opt_str("type")?
            .ok_or_else(|| Error::invalid("options.type", "must not be NULL"))?;
        check_one_of("options.type", &t, TYPES)?;
        set("type", None, t.into());
    }
    if o.has("assignee") {
        let a = o.opt_str("assignee")?;
        if let Some(a) = &a {
            ids::check_id("options.assignee", a)?;
        }
        set("assignee", Some("TEXT"), a.into());
    }
    if o.has("defer_until") {
        set(
            "defer_until",
            Some("BIGINT"),
            o.opt_int("defer_until")?.into(),
        );
    }
    if o.has("metadata") {
        let m = o.opt_object("metadata")?.unwrap_or_else(|| "{}".into());
        set("metadata", Some("@JSON"), m.into());
    }
    if o.has("status") {
        let s = o.opt_str("status")?.unwrap_or_default();
        match s.as_str() {
            "open" => {
                set("status", None, "open".into());
                set("session_id", Some("TEXT"), Value::Null);
                set("closed_at", Some("BIGINT"), Value::Null);
                set("close_reason", Some("TEXT"), Value::Null);
            }
            "in_progress" => {
                return Err(Error::invalid(
                    "options.status",
                    "use task_claim to start a task (task_update only reopens: \"open\")",
                ))
            }
            STATUS_CLOSED => {
                return Err(Error::invalid(
                    "options.status",
                    "use task_close to close a task (task_update only reopens: \"open\")",
                ))
            }
            other => {
                return Err(Error::invalid(
                    "options.status",
                    format!("must be \"open\" (got {})", crate::error::echo(other)),
                ))
            }
        }
    }
    let labels = match o.opt_strings("labels")? {
        Some(l) => Some(check_labels("options.labels", &l)?),
        None if o.has("labels") => Some(Vec::new()),
        None => None,
    };
    let now = conn.now_ms()?;
    set("updated_at", None, Value::Int(now));
    let home = route::and_home(conn, "resource_id", &mut params);
    let sql = format!("UPDATE mem_tasks SET {} WHERE id = ?1{home}", sets.join(", "));
    conn.execute(&sql, &params)?;
    if let Some(labels) = labels {
        let mut params = vec![task_id.into()];
        let home = route::and_home(conn, "resource_id", &mut params);
        conn.execute(
            &format!("DELETE FROM mem_task_labels WHERE task_id = ?1{home}"),
            &params,
        )?;
        insert_labels(conn, task_id, &labels)?;
    }
    Ok(task_id.to_owned())
}

/// `task_link(task_id, message_id [, relation])` → 1 for a new link, 0 when the link existed
/// (its relation is updated). Relation output (default) or reference. A message without a
/// task gets this one as its `task_id`.
pub(crate) fn link(
    conn: &mut dyn Conn,
    task_id: &str,
    message_id: &str,
    relation: Option<&str>,
) -> Result<i64> {
    let relation = relation.unwrap_or("output");
    check_one_of("relation", relation, RELATIONS)?;
    must_exist(conn, task_id)?;
    let mut params = vec![message_id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let message = conn.query_value(&format!("SELECT 1 FROM mem_messages WHERE id = ?1{home}"), &params)?;
    if message.is_none() {
        return Err(Error::not_found("message", message_id));
    }
    let mut params = vec![task_id.into(), message_id.into(), relation.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let changed = conn.execute(
        &format!(
            "UPDATE mem_task_messages SET relation = ?3 WHERE task_id = ?1 AND message_id = ?2{home}"
        ),
        &params,
    )?;
    let mut params = vec![task_id.into(), message_id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.execute(
        &format!("UPDATE mem_messages SET task_id = ?1 WHERE id = ?2 AND task_id IS NULL{home}"),
        &params,
    )?;
    if changed > 0 {
        return Ok(0);
    }
    let now = conn.now_ms()?;
    let mut params = vec![task_id.into(), message_id.into(), relation.into(), Value::Int(now)];
    let (column, value) = HomeParam::push(conn, &mut params).insert();
    conn.execute(
        &format!(
            "INSERT INTO mem_task_messages (task_id, message_id, relation, created_at{column}) \
             VALUES (?1, ?2, ?3, ?4{value})"
        ),
        &params,
    )?;
    Ok(1)
}

const COMPACT_OPTIONS: &[&str] = &["level", "force", "now"];

/// `task_compact(task_id, summary [, options])` → the new compaction level. Non-destructive:
/// the first compaction keeps the task's description and summary in `original_content`
/// (JSON), then the description goes and the summary becomes the given text. Only closed
/// tasks; level 1 needs the task closed for 30 days, level 2 for 90 (beads' tiers) unless
/// `force`. Options: level (default: one above the current), force, now.
pub(crate) fn compact(
    conn: &mut dyn Conn,
    task_id: &str,
    summary: Option<&str>,
    options: Option<&str>,
) -> Result<i64> {
    let summary = summary.map(str::trim).filter(|s| !s.is_empty());
    let summary = summary.ok_or_else(|| Error::invalid("summary", "must not be empty"))?;
    check_content("summary", summary)?;
    let o = Opts::parse("options", options, COMPACT_OPTIONS)?;
    let mut f = super::task_columns(
        conn,
        task_id,
        "status, closed_at, compaction_level, description, summary",
    )?;
    let status = f.text().unwrap_or_default();
    let closed_at = f.int();
    let current = f.int().unwrap_or(0);
    let description = f.text();
    let old_summary = f.text();
    if status != STATUS_CLOSED {
        return Err(Error::invalid(
            "task_id",
            format!("only closed tasks can be compacted (task {task_id} is {status})"),
        ));
    }
    let level = o.opt_int("level")?.unwrap_or((current + 1).min(2));
    if !(1..=2).contains(&level) {
        return Err(Error::invalid("options.level", "must be 1 or 2"));
    }
    if level <= current {
        return Err(Error::invalid(
            "options.level",
            format!("task {task_id} is already compacted to level {current}"),
        ));
    }
    let now = conn.now_or(o.opt_int("now")?)?;
    if !o.opt_bool("force")?.unwrap_or(false) {
        let days = if level == 1 { TIER1_DAYS } else { TIER2_DAYS };
        let age = now - closed_at.unwrap_or(now);
        if age < days * MS_PER_DAY {
            return Err(Error::invalid(
                "task_id",
                format!(
                    "task {task_id} was closed {} days ago; level {level} needs {days} days (or \"force\": true)",
                    age / MS_PER_DAY
                ),
            ));
        }
    }
    let original = (current == 0)
        .then(|| json!({ "description": description, "summary": old_summary }).to_string());
    let mut params = vec![
        task_id.into(),
        original.into(),
        summary.into(),
        Value::Int(level),
        Value::Int(now),
    ];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.execute(
        &format!(
            "UPDATE mem_tasks SET original_content = COALESCE(CAST(?2 AS TEXT), original_content), \
             description = NULL, summary = ?3, compaction_level = ?4, compacted_at = ?5 WHERE id = ?1{home}"
        ),
        &params,
    )?;
    Ok(level)
}

/// `task_restore(task_id)` → 1. Puts back the description and summary kept by the first
/// compaction and returns the task to level 0.
pub(crate) fn restore(conn: &mut dyn Conn, task_id: &str) -> Result<i64> {
    let mut f = super::task_columns(conn, task_id, "compaction_level, original_content")?;
    let level = f.int().unwrap_or(0);
    let original = f.text();
    let (Some(original), true) = (original, level > 0) else {
        return Err(Error::invalid(
            "task_id",
            format!("task {task_id} is not compacted"),
        ));
    };
    let o: Json = serde_json::from_str(&original)
        .map_err(|e| Error::internal(format!("original_content: {e}")))?;
    let text = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_owned);
    let mut params = vec![task_id.into(), text("description").into(), text("summary").into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.execute(
        &format!(
            "UPDATE mem_tasks SET description = ?2, summary = ?3, compaction_level = 0, \
             compacted_at = NULL, original_content = NULL WHERE id = ?1{home}"
        ),
        &params,
    )?;
    Ok(1)
}
