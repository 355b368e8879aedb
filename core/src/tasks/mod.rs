//! Task memory (docs/tasks.md).
//!
//! * [`graph`] — the blocked state, kept incrementally by the row triggers, and the
//!   dependency rules (types, cycles).
//! * [`ops`] — the writing functions: create, update, claim, close, dependencies, links,
//!   compaction.
//! * [`query`] — `task_ready`, `task_list`, `task_search`, `task_show` and the task JSON.
//! * [`tool`] — the agent tools `task_query(json)` and `task_mutate(json)`.
//! * [`link`] — implicit linking of new messages to the thread's active task.
//!
//! Every write goes through plain `INSERT`/`UPDATE`/`DELETE` on the documented tables; the
//! triggers call [`graph`], so rows written by an ORM get exactly the same bookkeeping.

pub(crate) mod graph;
internal!(ops);
internal!(query);

use crate::cluster::route;
use crate::db::row::Fields;
use crate::{ids, Conn, Error, Result, Value};

pub(crate) const STATUSES: &[&str] = &["open", "in_progress", "closed"];
pub(crate) const STATUS_CLOSED: &str = "closed";
pub(crate) const TYPES: &[&str] = &["bug", "feature", "task", "epic", "chore"];
pub(crate) const DEP_TYPES: &[&str] = &["blocks", "parent-child", "related", "discovered-from"];
pub(crate) const CLOSE_REASONS: &[&str] = &["completed", "wontfix", "duplicate"];
pub(crate) const RELATIONS: &[&str] = &["output", "reference"];

/// Longest title accepted, in characters (max 500).
pub(crate) const MAX_TITLE_CHARS: usize = 500;
/// Longest label accepted, in characters.
pub(crate) const MAX_LABEL_CHARS: usize = 100;

/// Checks an id given as text.
pub(crate) fn check_id_text(arg: &str, id: &str) -> Result<()> {
    ids::check_id(arg, id)
}

pub(crate) use crate::args::check_one_of;

/// A title: 1 to 500 characters, not only whitespace, no NUL.
pub(crate) fn check_title(arg: &str, title: &str) -> Result<()> {
    if title.trim().is_empty() {
        return Err(Error::invalid(arg, "must not be empty"));
    }
    let n = title.chars().count();
    if n > MAX_TITLE_CHARS {
        return Err(Error::invalid(
            arg,
            format!("must be at most {MAX_TITLE_CHARS} characters (got {n})"),
        ));
    }
    crate::threads::messages::check_content(arg, title)
}

/// A priority 0 (highest) to 4.
pub(crate) fn check_priority(arg: &str, p: i64) -> Result<()> {
    if (0..=4).contains(&p) {
        Ok(())
    } else {
        Err(Error::invalid(arg, "must be between 0 and 4"))
    }
}

/// Labels: 1 to 100 characters each, no control characters; duplicates are dropped.
pub(crate) fn check_labels(arg: &str, labels: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(labels.len());
    for l in labels {
        let n = l.chars().count();
        if n == 0 || n > MAX_LABEL_CHARS || l.chars().any(char::is_control) {
            return Err(Error::invalid(
                arg,
                format!("each label must be 1 to {MAX_LABEL_CHARS} characters without control characters"),
            ));
        }
        if !out.contains(l) {
            out.push(l.clone());
        }
    }
    out.sort();
    Ok(out)
}

/// `columns` (the caller's constant list) of the task `id`, or `task not found: <id>`.
pub(crate) fn task_columns(conn: &mut dyn Conn, id: &str, columns: &str) -> Result<Fields> {
    let mut params = vec![id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let row = conn
        .query(
            &format!("SELECT {columns} FROM mem_tasks WHERE id = ?1{home}"),
            &params,
        )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("task", id))?;
    Ok(Fields::new(row))
}

/// The task's status, or `task not found: <id>`.
pub(crate) fn status_of(conn: &mut dyn Conn, id: &str) -> Result<String> {
    let mut params = vec![id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.query_value(&format!("SELECT status FROM mem_tasks WHERE id = ?1{home}"), &params)?
        .and_then(Value::into_string)
        .ok_or_else(|| Error::not_found("task", id))
}

/// Removes `active_task_id` from every thread that points at the task (O(pointing threads)
/// through the expression index on the pointer).
pub(crate) fn clear_active_pointers(conn: &mut dyn Conn, task_id: &str) -> Result<u64> {
    let d = conn.dialect();
    let mut params = vec![task_id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let sql = format!(
        "UPDATE mem_threads SET metadata = {} WHERE {} = ?1{home}",
        d.json_without("metadata", "active_task_id"),
        d.json_text("metadata", "active_task_id")
    );
    conn.execute(&sql, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{render, MIGRATIONS};
    use crate::Dialect;

    fn script(d: Dialect) -> String {
        let m = MIGRATIONS.iter().find(|m| m.name == "tasks").unwrap();
        render(m.script, d)
    }

    #[test]
    fn migration_renders_per_dialect() {
        let pg = script(Dialect::Postgres);
        assert!(pg.contains("id                TEXT COLLATE \"C\" NOT NULL UNIQUE"));
        assert!(pg.contains(
            "CREATE TRIGGER mem__task_status_trg BEFORE UPDATE OF status ON mem_tasks FOR EACH ROW \
             WHEN (((OLD.status = 'closed') <> (NEW.status = 'closed')) AND (NEW.status IS DISTINCT FROM OLD.status)) \
             EXECUTE FUNCTION mem__task_status();"
        ));
        assert!(pg.contains(
            "AFTER DELETE ON mem_tasks FOR EACH ROW EXECUTE FUNCTION mem__task_delete()"
        ));
        assert!(!pg.contains("json_extract"));
        let lite = script(Dialect::Sqlite);
        assert!(!lite.contains("COLLATE \"C\" NOT NULL"));
        assert!(lite.contains("SELECT mem__task_dep_insert(NEW.seq)"));
        assert!(
            lite.contains("metadata @JSON") == false
                && lite.contains("metadata          TEXT NOT NULL")
        );
    }

    #[test]
    fn validation_messages() {
        assert_eq!(
            check_title("title", &"x".repeat(501))
                .unwrap_err()
                .to_string(),
            "title: must be at most 500 characters (got 501)"
        );
        assert_eq!(
            check_title("title", " ").unwrap_err().to_string(),
            "title: must not be empty"
        );
        assert_eq!(
            check_labels("labels", &["b".into(), "a".into(), "b".into()]).unwrap(),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(check_labels("labels", &["".into()]).is_err());
        assert!(check_priority("p", 5).is_err());
    }
}
