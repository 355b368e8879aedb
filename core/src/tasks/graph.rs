//! The blocked state, kept by the row triggers of `mem_tasks` and `mem_task_deps` inside the
//! writing transaction.
//!
//! Every task row carries two counters and their result:
//!
//! * `open_blockers` — how many of its `blocks` targets are not closed;
//! * `blocked_parents` — how many of its parents (`parent-child` targets) are blocked;
//! * `is_blocked = open_blockers > 0 OR blocked_parents > 0`.
//!
//! A write *refreshes* the tasks it can affect: their counters are recounted from their own
//! dependency rows (an index range each), and only the tasks whose `is_blocked` flipped pass
//! the refresh on to their children. So a write costs O(edges of the tasks whose state it
//! touches), `task_ready` reads an index without walking the graph, and every handler is
//! idempotent: running one again, or calling its SQL function by hand, recounts the same truth
//! instead of counting twice. Blocked-ness does not depend on the task's own status (as in
//! beads): closing a task changes its dependents, not
//! itself.
//!
//! Postgres (READ COMMITTED): a refresh locks the task row it recounts (`FOR UPDATE`) and
//! counts in a later statement, so it sees every concurrent change that committed before it
//! got the lock; a change to a task's status holds that row's lock while it refreshes the
//! dependents, and a new dependency locks its target before the refresh counts it, so a
//! concurrent edge insert and close cannot both miss each other. Blocking edge inserts also
//! take one transaction advisory lock so two concurrent inserts cannot close a cycle that
//! neither saw. SQLite has one writer at a time.

use super::{DEP_TYPES, STATUS_CLOSED};
use crate::db::dialect::RowLock;
use crate::db::row::Cells;
use crate::db::row::Fields;
use crate::error::{echo_bare, echo_list};
use crate::cluster::route::{self, HomeParam};
use crate::search;
use crate::{Conn, Error, Result, Value};
use std::collections::{HashMap, HashSet};

/// The search namespace of task documents (keyed by `mem_tasks.seq`).
pub(crate) const NS_TASKS: &str = "task";

/// Advisory lock key serialising blocking-edge inserts in Postgres ("agmt").
const DEP_LOCK_KEY: i64 = 0x6167_6d74;

/// The dependency types that block: `blocks` directly, `parent-child` through the parent.
pub(crate) fn is_blocking(dep_type: &str) -> bool {
    dep_type == "blocks" || dep_type == "parent-child"
}

/// The columns of a task row the triggers read and may complete.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TaskRow {
    pub seq: i64,
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub summary: Option<String>,
    pub status: String,
    pub close_reason: Option<String>,
    pub closed_at: Option<i64>,
    pub created_at: i64,
    pub open_blockers: i64,
    pub blocked_parents: i64,
    pub is_blocked: i64,
    /// Whose index holds the task's text in a database partitioned by resource.
    pub resource_id: Option<String>,
}

impl TaskRow {
    /// The `mem_tasks` columns a row is read from, in field order.
    pub(crate) const COLUMNS: [&'static str; 16] = [
        "seq",
        "id",
        "title",
        "description",
        "summary",
        "status",
        "close_reason",
        "closed_at",
        "created_at",
        "open_blockers",
        "blocked_parents",
        "is_blocked",
        "updated_at",
        "defer_until",
        "metadata",
        "resource_id",
    ];

    /// What the search index holds for the task: title, description and summary.
    pub(crate) fn search_text(&self) -> String {
        search_text(
            &self.title,
            self.description.as_deref(),
            self.summary.as_deref(),
        )
    }
}

impl crate::db::row::Stored for TaskRow {
    const SHAPE: crate::db::row::Shape = crate::db::row::Shape {
        table: "mem_tasks",
        noun: "task",
        columns: &TaskRow::COLUMNS,
    };

    /// Reads values in [`TaskRow::COLUMNS`] order, strictly typed (see [`crate::db::row`]).
    fn from_values(v: Vec<Value>) -> Result<Self> {
        let mut c = Cells::new("mem_tasks", &TaskRow::COLUMNS, v);
        let row = TaskRow {
            seq: c.int()?,
            id: c.text()?,
            title: c.text()?,
            description: c.opt_text()?,
            summary: c.opt_text()?,
            status: c.text()?,
            close_reason: c.opt_text()?,
            closed_at: c.opt_int()?,
            created_at: c.int()?,
            open_blockers: c.int()?,
            blocked_parents: c.int()?,
            is_blocked: c.int()?,
            resource_id: None,
        };
        // Read for their types only: nothing derived depends on them.
        c.int()?; // updated_at
        c.opt_int()?; // defer_until
        c.json_object()?; // metadata
        Ok(TaskRow {
            resource_id: c.opt_text()?,
            ..row
        })
    }
}

impl crate::db::row::Completed for TaskRow {
    fn seq(&self) -> i64 {
        self.seq
    }

    fn filled(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("closed_at", self.closed_at.into()),
            ("close_reason", self.close_reason.clone().into()),
            ("open_blockers", Value::Int(self.open_blockers)),
            ("blocked_parents", Value::Int(self.blocked_parents)),
            ("is_blocked", Value::Int(self.is_blocked)),
        ]
    }
}

/// A task's indexed text from its title, description and summary.
pub(crate) fn search_text(title: &str, description: Option<&str>, summary: Option<&str>) -> String {
    let mut s = title.to_owned();
    for part in [description, summary].into_iter().flatten() {
        s.push('\n');
        s.push_str(part);
    }
    s
}

/// A dependency row as the triggers see it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DepRow {
    pub seq: i64,
    pub task_id: String,
    pub depends_on_id: String,
    pub dep_type: String,
}

impl DepRow {
    pub(crate) const COLUMNS: [&'static str; 4] = ["seq", "task_id", "depends_on_id", "type"];
}

impl crate::db::row::Stored for DepRow {
    const SHAPE: crate::db::row::Shape = crate::db::row::Shape {
        table: "mem_task_deps",
        noun: "dependency",
        columns: &DepRow::COLUMNS,
    };

    fn from_values(v: Vec<Value>) -> Result<Self> {
        let mut c = Cells::new("mem_task_deps", &DepRow::COLUMNS, v);
        Ok(DepRow {
            seq: c.int()?,
            task_id: c.text()?,
            depends_on_id: c.text()?,
            dep_type: c.text()?,
        })
    }
}

fn lock_suffix(conn: &dyn Conn) -> &'static str {
    conn.dialect().row_lock(RowLock::Update)
}

/// Tasks per recount statement.
const CHUNK: usize = 500;

fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn text_params(ids: &[String]) -> Vec<Value> {
    ids.iter().map(|i| i.as_str().into()).collect()
}

/// Recounts the blocked state of `tasks` from their dependency rows, writes what changed, and
/// refreshes the children of every task whose `is_blocked` flipped, until nothing flips.
/// Idempotent. Unknown ids are skipped.
fn refresh(conn: &mut dyn Conn, tasks: Vec<String>) -> Result<()> {
    let mut work = tasks;
    let mut rounds = 0usize;
    while !work.is_empty() {
        rounds += work.len();
        if rounds > 100_000_000 {
            return Err(Error::internal("blocked-state refresh did not converge"));
        }
        work.sort();
        work.dedup();
        let mut flipped = Vec::new();
        for chunk in work.chunks(CHUNK) {
            flipped.extend(recount(conn, chunk)?);
        }
        if !flipped.is_empty() {
            crate::db::failpoint::hit(conn, crate::db::failpoint::REFRESH)?;
        }
        work = children(conn, &flipped)?;
    }
    Ok(())
}

/// One chunk of [`refresh`]: returns the tasks whose blocked state flipped.
fn recount(conn: &mut dyn Conn, ids: &[String]) -> Result<Vec<String>> {
    let mut params = text_params(ids);
    let home = HomeParam::push(conn, &mut params);
    let listed = placeholders(1, ids.len());
    if conn.dialect().has_concurrent_writers() {
        // Lock first, count in the next statement: its snapshot sees every change committed
        // by a transaction that held one of these rows.
        conn.query(
            &format!(
                "SELECT id FROM mem_tasks WHERE id IN ({listed}){} ORDER BY id FOR UPDATE",
                home.and("resource_id")
            ),
            &params,
        )?;
    }
    let (d, b, p, t) = (
        home.and("d.resource_id"),
        home.and("b.resource_id"),
        home.and("p.resource_id"),
        home.and("t.resource_id"),
    );
    let rows = conn.query(
        &format!(
            "SELECT t.id, t.is_blocked, t.open_blockers, t.blocked_parents, \
               (SELECT count(*) FROM mem_task_deps d JOIN mem_tasks b ON b.id = d.depends_on_id \
                 WHERE d.task_id = t.id AND d.type = 'blocks' AND b.status <> 'closed'{d}{b}), \
               (SELECT count(*) FROM mem_task_deps d JOIN mem_tasks p ON p.id = d.depends_on_id \
                 WHERE d.task_id = t.id AND d.type = 'parent-child' AND p.is_blocked = 1{d}{p}) \
             FROM mem_tasks t WHERE t.id IN ({listed}){t}"
        ),
        &params,
    )?;
    let mut flipped = Vec::new();
    for r in rows {
        let mut f = Fields::new(r);
        let id = f.text().unwrap_or_default();
        let mut int = || f.int().unwrap_or(0);
        let (was, ob, bp, new_ob, new_bp) = (int() != 0, int(), int(), int(), int());
        if (ob, bp) == (new_ob, new_bp) {
            continue;
        }
        let now = new_ob > 0 || new_bp > 0;
        let mut params = vec![
            id.as_str().into(),
            Value::Int(new_ob),
            Value::Int(new_bp),
            Value::Int(i64::from(now)),
        ];
        let home = route::and_home(conn, "resource_id", &mut params);
        conn.execute(
            &format!(
                "UPDATE mem_tasks SET open_blockers = ?2, blocked_parents = ?3, is_blocked = ?4 \
                 WHERE id = ?1{home}"
            ),
            &params,
        )?;
        if now != was {
            flipped.push(id);
        }
    }
    Ok(flipped)
}

/// The `parent-child` dependents (children) of `tasks`.
fn children(conn: &mut dyn Conn, tasks: &[String]) -> Result<Vec<String>> {
    dependents(conn, tasks, "parent-child")
}

/// The tasks with a dependency of `dep_type` on one of `tasks`.
fn dependents(conn: &mut dyn Conn, tasks: &[String], dep_type: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for chunk in tasks.chunks(CHUNK) {
        let mut params = vec![Value::from(dep_type)];
        params.extend(text_params(chunk));
        let home = route::and_home(conn, "resource_id", &mut params);
        let sql = format!(
            "SELECT task_id FROM mem_task_deps WHERE type = ?1 AND depends_on_id IN ({}){home}",
            placeholders(2, chunk.len())
        );
        for r in conn.query(&sql, &params)? {
            if let Some(id) = r.into_iter().next().and_then(Value::into_string) {
                out.push(id);
            }
        }
    }
    Ok(out)
}

/// Locks a task row in Postgres (a dependency's target, before its state is counted);
/// `false` when it does not exist.
fn lock_task(conn: &mut dyn Conn, id: &str) -> Result<bool> {
    let mut params = vec![id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let sql = format!("SELECT 1 FROM mem_tasks WHERE id = ?1{home}{}", lock_suffix(conn));
    Ok(conn.query_value(&sql, &params)?.is_some())
}

pub(crate) fn task_exists(conn: &mut dyn Conn, id: &str) -> Result<bool> {
    let mut params = vec![id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let sql = format!("SELECT 1 FROM mem_tasks WHERE id = ?1{home}");
    Ok(conn.query_value(&sql, &params)?.is_some())
}

/// A path `from → … → to` along blocking dependencies (task → what it depends on), if any.
/// Depth-first over the tasks reachable from `from`; each visited task costs one indexed query.
pub(crate) fn blocking_path(conn: &mut dyn Conn, from: &str, to: &str) -> Result<Option<Vec<String>>> {
    if from == to {
        return Ok(Some(vec![from.to_owned()]));
    }
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::from([from.to_owned()]);
    let mut stack = vec![from.to_owned()];
    while let Some(node) = stack.pop() {
        let mut params = vec![node.as_str().into()];
        let home = route::and_home(conn, "resource_id", &mut params);
        let next = conn.query(
            &format!(
                "SELECT depends_on_id FROM mem_task_deps \
                 WHERE task_id = ?1 AND type IN ('blocks', 'parent-child'){home} ORDER BY depends_on_id"
            ),
            &params,
        )?;
        for r in next {
            let Some(n) = r.into_iter().next().and_then(Value::into_string) else {
                continue;
            };
            if !seen.insert(n.clone()) {
                continue;
            }
            parent.insert(n.clone(), node.clone());
            if n == to {
                let mut path = vec![n];
                while let Some(p) = parent.get(path.last().unwrap()) {
                    path.push(p.clone());
                }
                path.reverse();
                return Ok(Some(path));
            }
            stack.push(n);
        }
    }
    Ok(None)
}

/// Refuses a blocking dependency `task_id → depends_on_id` that would close a cycle, naming
/// it: `dependency cycle: A → B → C → A`.
pub(crate) fn check_cycle(conn: &mut dyn Conn, task_id: &str, depends_on_id: &str) -> Result<()> {
    if task_id == depends_on_id {
        return Err(Error::invalid(
            "depends_on_id",
            format!(
                "a task cannot depend on itself (dependency cycle: {0} → {0})",
                echo_bare(task_id)
            ),
        ));
    }
    if let Some(path) = blocking_path(conn, depends_on_id, task_id)? {
        let mut names = vec![task_id.to_owned()];
        names.extend(path);
        return Err(Error::invalid(
            "depends_on_id",
            format!("dependency cycle: {}", echo_list(&names, " → ")),
        ));
    }
    Ok(())
}

/// Checks a dependency type against [`DEP_TYPES`].
pub(crate) fn check_dep_type(arg: &str, t: &str) -> Result<()> {
    super::check_one_of(arg, t, DEP_TYPES)
}

// ------------------------------------------------------------------ trigger handlers

/// A new task row (no dependency can name it yet, and the schema keeps its counters at 0): a
/// closed row gets its `closed_at`; the search index takes its text. Returns whether the row
/// changed.
pub(crate) fn on_task_insert(conn: &mut dyn Conn, row: &mut TaskRow) -> Result<bool> {
    super::check_id_text("id", &row.id)?;
    let before = row.clone();
    if row.status == STATUS_CLOSED && row.closed_at.is_none() {
        row.closed_at = Some(conn.now_ms()?);
    }
    index(conn, row, None)?;
    Ok(*row != before)
}

/// A task crossed the closed line (closing or reopening), before the row is written: closing
/// fills `closed_at` and clears the threads' active-task pointers, reopening clears
/// `closed_at` and `close_reason`. Returns whether the row changed. The dependents are
/// refreshed by [`after_task_status`] once the new status is visible.
pub(crate) fn on_task_status(conn: &mut dyn Conn, row: &mut TaskRow) -> Result<bool> {
    let before = row.clone();
    if row.status == STATUS_CLOSED {
        if row.closed_at.is_none() {
            row.closed_at = Some(conn.now_ms()?);
        }
        super::clear_active_pointers(conn, &row.id)?;
    } else {
        row.closed_at = None;
        row.close_reason = None;
    }
    Ok(*row != before)
}

/// After a task's status crossed the closed line: its `blocks` dependents gain or lose an open
/// blocker.
pub(crate) fn after_task_status(conn: &mut dyn Conn, id: &str) -> Result<()> {
    let deps = dependents(conn, &[id.to_owned()], "blocks")?;
    refresh(conn, deps)
}

/// Title, description or summary changed: the search index takes the new text (`old` is the
/// text it held).
pub(crate) fn on_task_text(conn: &mut dyn Conn, row: &TaskRow, old: &str) -> Result<()> {
    index(conn, row, Some(old))
}

/// Puts the task's text in the search index (`old`: the text it held, if any).
fn index(conn: &mut dyn Conn, row: &TaskRow, old: Option<&str>) -> Result<()> {
    let index = search::partition::index_of(conn, NS_TASKS, row.resource_id.as_deref().unwrap_or(""))?;
    search::index_doc(
        conn,
        &index,
        row.seq,
        &row.search_text(),
        row.created_at,
        old,
    )
}

/// A task's id is what dependencies, labels and links refer to: it cannot change.
pub(crate) fn on_task_id_change() -> Result<()> {
    Err(Error::invalid(
        "id",
        "a task's id cannot change (create a new task and close this one as duplicate)",
    ))
}

/// After a task row is deleted: its dependencies (in both directions), labels, links and
/// search document go; deleting the dependency rows refreshes the dependents. Refused while
/// the task still exists, so a call by hand cannot strip a live task.
pub(crate) fn on_task_delete(
    conn: &mut dyn Conn,
    seq: i64,
    id: &str,
    resource: &str,
    old_text: &str,
) -> Result<()> {
    let mut params = vec![Value::Int(seq), id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let live = conn.query_value(
        &format!(
            "SELECT 1 FROM mem_tasks WHERE seq = ?1{home} UNION ALL SELECT 1 FROM mem_tasks WHERE id = ?2{home}"
        ),
        &params,
    )?;
    if live.is_some() {
        return Err(Error::invalid(
            "mem__task_delete",
            "runs after a task row is deleted; the task still exists",
        ));
    }
    // Two statements, each an index probe (an OR can keep a scanning plan in Postgres).
    let mut params = vec![id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    for sql in [
        "DELETE FROM mem_task_deps WHERE task_id = ?1",
        "DELETE FROM mem_task_deps WHERE depends_on_id = ?1",
        "DELETE FROM mem_task_labels WHERE task_id = ?1",
        "DELETE FROM mem_task_messages WHERE task_id = ?1",
    ] {
        conn.execute(&format!("{sql}{home}"), &params)?;
    }
    let index = search::partition::index_of(conn, NS_TASKS, resource)?;
    search::remove_doc(conn, &index, seq, Some(old_text)).map(|_| ())
}

/// After a dependency row is inserted: both tasks must exist, a blocking one must not close a
/// cycle; then the task is refreshed (its target locked first, so a concurrent status change
/// of the target is seen).
pub(crate) fn on_dep_insert(conn: &mut dyn Conn, dep: &DepRow) -> Result<()> {
    check_dep_type("type", &dep.dep_type)?;
    if dep.task_id == dep.depends_on_id {
        return check_cycle(conn, &dep.task_id, &dep.depends_on_id);
    }
    if !task_exists(conn, &dep.task_id)? {
        return Err(Error::not_found("task", &dep.task_id));
    }
    if !is_blocking(&dep.dep_type) {
        if !task_exists(conn, &dep.depends_on_id)? {
            return Err(Error::not_found("task", &dep.depends_on_id));
        }
        return same_resource(conn, dep);
    }
    if conn.dialect().has_concurrent_writers() {
        conn.execute(
            "SELECT pg_advisory_xact_lock(?1)",
            &[Value::Int(DEP_LOCK_KEY)],
        )?;
    }
    if !lock_task(conn, &dep.depends_on_id)? {
        return Err(Error::not_found("task", &dep.depends_on_id));
    }
    same_resource(conn, dep)?;
    // The new row is in the table already, but a path from its target back to its task
    // cannot use it (it would have to pass the task first).
    check_cycle(conn, &dep.task_id, &dep.depends_on_id)?;
    refresh(conn, vec![dep.task_id.clone()])
}

/// A dependency stays within a resource: a blocked state kept across two would be written
/// by one resource's writes into the other's rows.
fn same_resource(conn: &mut dyn Conn, dep: &DepRow) -> Result<()> {
    let mut params = vec![dep.task_id.as_str().into(), dep.depends_on_id.as_str().into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let resources: Vec<String> = conn
        .query(
            &format!(
                "SELECT DISTINCT resource_id FROM mem_tasks \
                 WHERE id IN (?1, ?2) AND resource_id IS NOT NULL{home}"
            ),
            &params,
        )?
        .into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Value::into_string))
        .collect();
    if resources.len() > 1 {
        return Err(Error::invalid(
            "depends_on_id",
            format!(
                "task {} belongs to another resource than task {}",
                crate::error::echo(&dep.depends_on_id),
                crate::error::echo(&dep.task_id)
            ),
        ));
    }
    Ok(())
}

/// After a dependency row is deleted: the task is refreshed (a no-op when the task is gone).
pub(crate) fn on_dep_delete(conn: &mut dyn Conn, task_id: &str) -> Result<()> {
    refresh(conn, vec![task_id.to_owned()])
}

/// Dependency rows are not updated in place: the old edge's effect would have to be undone
/// with values SQLite's triggers cannot see.
pub(crate) fn on_dep_update() -> Result<()> {
    Err(Error::invalid(
        "mem_task_deps",
        "dependencies cannot be updated; delete the row and insert the new one",
    ))
}
