//! The blocked state, kept incrementally by the row triggers of `mem_tasks` and
//! `mem_task_deps` inside the writing transaction.
//!
//! Every task row carries two counters and their result:
//!
//! * `open_blockers` — how many of its `blocks` targets are not closed;
//! * `blocked_parents` — how many of its parents (`parent-child` targets) are blocked;
//! * `is_blocked = open_blockers > 0 OR blocked_parents > 0`.
//!
//! A write changes the counters of the rows it touches with one `UPDATE … RETURNING`; only
//! the rows whose `is_blocked` actually flipped pass the flip on to their children (a
//! worklist, one statement per flipped task). Nothing is ever recomputed from scratch, so the
//! cost of a write is O(edges of the tasks whose state changes), and `task_ready` reads an
//! index without walking the graph. Blocked-ness does not depend on the task's own status
//! (as in beads and seed 000's `computeBlockedStatus`): closing a task changes its
//! dependents, not itself.
//!
//! Postgres: a dependency's target row is locked (`FOR UPDATE`) before its status or blocked
//! state is read, and the status change of a task holds that row's lock while it updates the
//! dependents, so a concurrent edge insert and close cannot both miss each other; blocking
//! edge inserts also take one transaction advisory lock so two concurrent inserts cannot close
//! a cycle that neither saw. SQLite has one writer at a time.

use super::{DEP_TYPES, STATUS_CLOSED};
use crate::search;
use crate::{Conn, Dialect, Error, Result, Value};
use std::collections::{HashMap, HashSet};

/// The search namespace of task documents (keyed by `mem_tasks.seq`).
pub const NS_TASKS: &str = "task";

/// Advisory lock key serialising blocking-edge inserts in Postgres ("agmt").
const DEP_LOCK_KEY: i64 = 0x6167_6d74;

/// The dependency types that block: `blocks` directly, `parent-child` through the parent.
pub fn is_blocking(dep_type: &str) -> bool {
    dep_type == "blocks" || dep_type == "parent-child"
}

/// The columns of a task row the triggers read and may complete.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
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
}

impl TaskRow {
    /// The `mem_tasks` columns a row is read from, in field order.
    pub const COLUMNS: [&'static str; 12] = [
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
    ];

    pub fn from_values(v: Vec<Value>) -> Result<Self> {
        let mut it = v.into_iter();
        let mut next = || it.next().unwrap_or(Value::Null);
        let text = |v: Value| match v {
            Value::Text(s) => Some(s),
            Value::Blob(b) => String::from_utf8(b).ok(),
            Value::Int(i) => Some(i.to_string()),
            Value::Real(f) => Some(f.to_string()),
            Value::Null => None,
        };
        Ok(TaskRow {
            seq: next().as_i64().unwrap_or(0),
            id: text(next()).ok_or_else(|| Error::invalid("id", "must not be NULL"))?,
            title: text(next()).unwrap_or_default(),
            description: text(next()),
            summary: text(next()),
            status: text(next()).unwrap_or_default(),
            close_reason: text(next()),
            closed_at: next().as_i64(),
            created_at: next().as_i64().unwrap_or(0),
            open_blockers: next().as_i64().unwrap_or(0),
            blocked_parents: next().as_i64().unwrap_or(0),
            is_blocked: next().as_i64().unwrap_or(0),
        })
    }

    /// Reads a stored row by `seq` (SQLite's after-triggers).
    pub fn load(conn: &mut dyn Conn, seq: i64) -> Result<Self> {
        let sql = format!(
            "SELECT {} FROM mem_tasks WHERE seq = ?1",
            TaskRow::COLUMNS.join(", ")
        );
        let row = conn
            .query(&sql, &[Value::Int(seq)])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::not_found("task", seq.to_string()))?;
        TaskRow::from_values(row)
    }

    /// Writes the columns the triggers complete back to a stored row (SQLite's after-triggers).
    pub fn store(&self, conn: &mut dyn Conn) -> Result<()> {
        conn.execute(
            "UPDATE mem_tasks SET closed_at = CAST(?2 AS BIGINT), close_reason = ?3, open_blockers = ?4, \
             blocked_parents = ?5, is_blocked = ?6 WHERE seq = ?1",
            &[
                Value::Int(self.seq),
                self.closed_at.into(),
                self.close_reason.clone().into(),
                Value::Int(self.open_blockers),
                Value::Int(self.blocked_parents),
                Value::Int(self.is_blocked),
            ],
        )?;
        Ok(())
    }

    /// What the search index holds for the task: title, description and summary.
    pub fn search_text(&self) -> String {
        let mut s = self.title.clone();
        for part in [&self.description, &self.summary].into_iter().flatten() {
            s.push('\n');
            s.push_str(part);
        }
        s
    }
}

/// A dependency row as the triggers see it.
#[derive(Clone, Debug, PartialEq)]
pub struct DepRow {
    pub seq: i64,
    pub task_id: String,
    pub depends_on_id: String,
    pub dep_type: String,
}

impl DepRow {
    pub const COLUMNS: [&'static str; 4] = ["seq", "task_id", "depends_on_id", "type"];

    pub fn from_values(v: Vec<Value>) -> Result<Self> {
        let mut it = v.into_iter();
        let mut next = || it.next().unwrap_or(Value::Null);
        let seq = next().as_i64().unwrap_or(0);
        let mut text = |col: &str| {
            next()
                .into_string()
                .ok_or_else(|| Error::invalid(col, "must not be NULL"))
        };
        Ok(DepRow {
            seq,
            task_id: text("task_id")?,
            depends_on_id: text("depends_on_id")?,
            dep_type: text("type")?,
        })
    }

    pub fn load(conn: &mut dyn Conn, seq: i64) -> Result<Self> {
        let row = conn
            .query(
                "SELECT seq, task_id, depends_on_id, type FROM mem_task_deps WHERE seq = ?1",
                &[Value::Int(seq)],
            )?
            .into_iter()
            .next()
            .ok_or_else(|| Error::not_found("dependency", seq.to_string()))?;
        DepRow::from_values(row)
    }
}

fn lock_suffix(conn: &dyn Conn) -> &'static str {
    match conn.dialect() {
        Dialect::Postgres => " FOR UPDATE",
        Dialect::Sqlite => "",
    }
}

/// Which rows a counter change applies to.
enum Rows<'a> {
    /// One task.
    One(&'a str),
    /// The tasks that have a `blocks` dependency on this one.
    BlockedBy(&'a str),
    /// The children (`parent-child` dependents) of this one.
    ChildrenOf(&'a str),
}

/// Adds `d_ob` to `open_blockers` and `d_bp` to `blocked_parents` of the rows, and returns the
/// tasks whose blocked state flipped with their new state.
fn bump(conn: &mut dyn Conn, rows: Rows, d_ob: i64, d_bp: i64) -> Result<Vec<(String, bool)>> {
    let (filter, id) = match rows {
        Rows::One(id) => ("id = ?1", id),
        Rows::BlockedBy(id) => (
            "id IN (SELECT task_id FROM mem_task_deps WHERE depends_on_id = ?1 AND type = 'blocks')",
            id,
        ),
        Rows::ChildrenOf(id) => (
            "id IN (SELECT task_id FROM mem_task_deps WHERE depends_on_id = ?1 AND type = 'parent-child')",
            id,
        ),
    };
    let sql = format!(
        "UPDATE mem_tasks SET open_blockers = open_blockers + ?2, blocked_parents = blocked_parents + ?3, \
         is_blocked = CASE WHEN open_blockers + ?2 > 0 OR blocked_parents + ?3 > 0 THEN 1 ELSE 0 END \
         WHERE {filter} RETURNING id, open_blockers, blocked_parents, is_blocked"
    );
    let out = conn.query(&sql, &[id.into(), Value::Int(d_ob), Value::Int(d_bp)])?;
    let mut flips = Vec::new();
    for r in out {
        let mut it = r.into_iter();
        let id = it.next().and_then(Value::into_string).unwrap_or_default();
        let ob = it.next().and_then(|v| v.as_i64()).unwrap_or(0);
        let bp = it.next().and_then(|v| v.as_i64()).unwrap_or(0);
        let now = it.next().and_then(|v| v.as_i64()).unwrap_or(0) != 0;
        let before = (ob - d_ob) > 0 || (bp - d_bp) > 0;
        if before != now {
            flips.push((id, now));
        }
    }
    Ok(flips)
}

/// Passes blocked-state flips down to children, and theirs to their children, until no state
/// changes. Each flipped task costs one UPDATE over its children.
fn propagate(conn: &mut dyn Conn, mut flips: Vec<(String, bool)>) -> Result<()> {
    let mut guard = 0usize;
    while !flips.is_empty() {
        guard += flips.len();
        if guard > 100_000_000 {
            return Err(Error::internal(
                "blocked-state propagation did not converge",
            ));
        }
        // Most flipped tasks have no children: find the ones that do with one query per 500
        // instead of one UPDATE each.
        let parents = with_children(conn, &flips)?;
        let mut next = Vec::new();
        for (id, blocked) in flips {
            if parents.contains(&id) {
                let d = if blocked { 1 } else { -1 };
                next.extend(bump(conn, Rows::ChildrenOf(&id), 0, d)?);
            }
        }
        flips = next;
    }
    Ok(())
}

/// Which of the tasks have children (parent-child dependents).
fn with_children(conn: &mut dyn Conn, tasks: &[(String, bool)]) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    for chunk in tasks.chunks(500) {
        let ph: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT DISTINCT depends_on_id FROM mem_task_deps WHERE type = 'parent-child' AND depends_on_id IN ({})",
            ph.join(", ")
        );
        let params: Vec<Value> = chunk.iter().map(|(id, _)| id.as_str().into()).collect();
        for r in conn.query(&sql, &params)? {
            if let Some(id) = r.into_iter().next().and_then(Value::into_string) {
                out.insert(id);
            }
        }
    }
    Ok(out)
}

/// The status and blocked state of a task, locked in Postgres; `None` when it does not exist.
fn target_state(conn: &mut dyn Conn, id: &str) -> Result<Option<(String, bool)>> {
    let sql = format!(
        "SELECT status, is_blocked FROM mem_tasks WHERE id = ?1{}",
        lock_suffix(conn)
    );
    Ok(conn.query(&sql, &[id.into()])?.into_iter().next().map(|r| {
        let mut it = r.into_iter();
        let status = it.next().and_then(Value::into_string).unwrap_or_default();
        let blocked = it.next().and_then(|v| v.as_i64()).unwrap_or(0) != 0;
        (status, blocked)
    }))
}

fn task_exists(conn: &mut dyn Conn, id: &str) -> Result<bool> {
    Ok(conn
        .query_value("SELECT 1 FROM mem_tasks WHERE id = ?1", &[id.into()])?
        .is_some())
}

/// A path `from → … → to` along blocking dependencies (task → what it depends on), if any.
/// Depth-first over the tasks reachable from `from`; each visited task costs one indexed query.
pub fn blocking_path(conn: &mut dyn Conn, from: &str, to: &str) -> Result<Option<Vec<String>>> {
    if from == to {
        return Ok(Some(vec![from.to_owned()]));
    }
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::from([from.to_owned()]);
    let mut stack = vec![from.to_owned()];
    while let Some(node) = stack.pop() {
        let next = conn.query(
            "SELECT depends_on_id FROM mem_task_deps WHERE task_id = ?1 AND type IN ('blocks', 'parent-child') \
             ORDER BY depends_on_id",
            &[node.as_str().into()],
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
pub fn check_cycle(conn: &mut dyn Conn, task_id: &str, depends_on_id: &str) -> Result<()> {
    if task_id == depends_on_id {
        return Err(Error::invalid(
            "depends_on_id",
            format!("a task cannot depend on itself (dependency cycle: {task_id} → {task_id})"),
        ));
    }
    if let Some(path) = blocking_path(conn, depends_on_id, task_id)? {
        let mut names = vec![task_id.to_owned()];
        names.extend(path);
        return Err(Error::invalid(
            "depends_on_id",
            format!("dependency cycle: {}", names.join(" → ")),
        ));
    }
    Ok(())
}

/// Checks a dependency type against [`DEP_TYPES`].
pub fn check_dep_type(arg: &str, t: &str) -> Result<()> {
    if DEP_TYPES.contains(&t) {
        Ok(())
    } else {
        Err(Error::invalid(
            arg,
            format!("must be one of {} (got \"{t}\")", DEP_TYPES.join(", ")),
        ))
    }
}

// ------------------------------------------------------------------ trigger handlers

/// A new task row: no dependency can name it yet, so its counters must be zero; a closed
/// row gets its `closed_at`; the search index takes its text. Returns whether the row changed.
pub fn on_task_insert(conn: &mut dyn Conn, row: &mut TaskRow) -> Result<bool> {
    super::check_id_text("id", &row.id)?;
    if row.open_blockers != 0 || row.blocked_parents != 0 || row.is_blocked != 0 {
        // SQLite's CHECK refuses most such rows before the trigger runs; refuse the rest the
        // same way on both backends.
        return Err(Error::invalid(
            "open_blockers, blocked_parents, is_blocked",
            "derived by agentmem: a new task must leave them 0 (constraint of the blocked state)",
        ));
    }
    let before = row.clone();
    if row.status == STATUS_CLOSED && row.closed_at.is_none() {
        row.closed_at = Some(conn.now_ms()?);
    }
    search::index_doc(conn, NS_TASKS, row.seq, &row.search_text(), row.created_at)?;
    Ok(*row != before)
}

/// A task crossed the closed line (closing or reopening): its `blocks` dependents lose or
/// regain an open blocker; closing fills `closed_at` and clears the threads' active-task
/// pointers, reopening clears `closed_at` and `close_reason`. Returns whether the row changed.
pub fn on_task_status(conn: &mut dyn Conn, row: &mut TaskRow) -> Result<bool> {
    let before = row.clone();
    let closing = row.status == STATUS_CLOSED;
    if closing {
        if row.closed_at.is_none() {
            row.closed_at = Some(conn.now_ms()?);
        }
        super::clear_active_pointers(conn, &row.id)?;
    } else {
        row.closed_at = None;
        row.close_reason = None;
    }
    let flips = bump(
        conn,
        Rows::BlockedBy(&row.id),
        if closing { -1 } else { 1 },
        0,
    )?;
    propagate(conn, flips)?;
    Ok(*row != before)
}

/// Title, description or summary changed: the search index takes the new text.
pub fn on_task_text(conn: &mut dyn Conn, row: &TaskRow) -> Result<()> {
    search::index_doc(conn, NS_TASKS, row.seq, &row.search_text(), row.created_at)
}

/// A task's id is what dependencies, labels and links refer to: it cannot change.
pub fn on_task_id_change() -> Result<()> {
    Err(Error::invalid(
        "id",
        "a task's id cannot change (create a new task and close this one as duplicate)",
    ))
}

/// After a task row is deleted (with its old values): its dependents lose a blocker (when it
/// was not closed) or a blocked parent (when it was blocked), then its dependencies, labels,
/// links and search document go.
pub fn on_task_delete(
    conn: &mut dyn Conn,
    seq: i64,
    id: &str,
    status: &str,
    was_blocked: bool,
) -> Result<()> {
    if status != STATUS_CLOSED {
        let flips = bump(conn, Rows::BlockedBy(id), -1, 0)?;
        propagate(conn, flips)?;
    }
    if was_blocked {
        let flips = bump(conn, Rows::ChildrenOf(id), 0, -1)?;
        propagate(conn, flips)?;
    }
    // The dependency triggers see a missing endpoint and leave the counters alone.
    conn.execute(
        "DELETE FROM mem_task_deps WHERE task_id = ?1 OR depends_on_id = ?1",
        &[id.into()],
    )?;
    conn.execute(
        "DELETE FROM mem_task_labels WHERE task_id = ?1",
        &[id.into()],
    )?;
    conn.execute(
        "DELETE FROM mem_task_messages WHERE task_id = ?1",
        &[id.into()],
    )?;
    search::remove_doc(conn, NS_TASKS, seq)
}

/// A new dependency row: both tasks must exist, a blocking one must not close a cycle; the
/// task's counters take the target's state and a flip goes down to its children.
pub fn on_dep_insert(conn: &mut dyn Conn, dep: &DepRow) -> Result<()> {
    check_dep_type("type", &dep.dep_type)?;
    if dep.task_id == dep.depends_on_id {
        return check_cycle(conn, &dep.task_id, &dep.depends_on_id);
    }
    // An identical edge already there (Postgres' BEFORE trigger also fires for rows that
    // ON CONFLICT DO NOTHING then skips): nothing to count.
    let dup = conn.query_value(
        "SELECT 1 FROM mem_task_deps WHERE task_id = ?1 AND depends_on_id = ?2 AND type = ?3 AND seq <> ?4",
        &[
            dep.task_id.as_str().into(),
            dep.depends_on_id.as_str().into(),
            dep.dep_type.as_str().into(),
            Value::Int(dep.seq),
        ],
    )?;
    if dup.is_some() {
        return Ok(());
    }
    if !task_exists(conn, &dep.task_id)? {
        return Err(Error::not_found("task", dep.task_id.clone()));
    }
    if !is_blocking(&dep.dep_type) {
        if !task_exists(conn, &dep.depends_on_id)? {
            return Err(Error::not_found("task", dep.depends_on_id.clone()));
        }
        return Ok(());
    }
    if conn.dialect() == Dialect::Postgres {
        conn.execute(
            "SELECT pg_advisory_xact_lock(?1)",
            &[Value::Int(DEP_LOCK_KEY)],
        )?;
    }
    let Some((status, blocked)) = target_state(conn, &dep.depends_on_id)? else {
        return Err(Error::not_found("task", dep.depends_on_id.clone()));
    };
    check_cycle(conn, &dep.task_id, &dep.depends_on_id)?;
    let (d_ob, d_bp) = match dep.dep_type.as_str() {
        "blocks" if status != STATUS_CLOSED => (1, 0),
        "parent-child" if blocked => (0, 1),
        _ => return Ok(()),
    };
    let flips = bump(conn, Rows::One(&dep.task_id), d_ob, d_bp)?;
    propagate(conn, flips)
}

/// A dependency row goes: the reverse of [`on_dep_insert`]. When either task is already gone
/// (a task delete removing its edges) the counters were settled by [`on_task_delete`].
pub fn on_dep_delete(conn: &mut dyn Conn, dep: &DepRow) -> Result<()> {
    if !is_blocking(&dep.dep_type) || !task_exists(conn, &dep.task_id)? {
        return Ok(());
    }
    let Some((status, blocked)) = target_state(conn, &dep.depends_on_id)? else {
        return Ok(());
    };
    let (d_ob, d_bp) = match dep.dep_type.as_str() {
        "blocks" if status != STATUS_CLOSED => (-1, 0),
        "parent-child" if blocked => (0, -1),
        _ => return Ok(()),
    };
    let flips = bump(conn, Rows::One(&dep.task_id), d_ob, d_bp)?;
    propagate(conn, flips)
}

/// Dependency rows are not updated in place: the old edge's effect would have to be undone
/// with values SQLite's triggers cannot see.
pub fn on_dep_update() -> Result<()> {
    Err(Error::invalid(
        "mem_task_deps",
        "dependencies cannot be updated; delete the row and insert the new one",
    ))
}
