//! Implicit context linking: a message added to a thread whose metadata names an
//! active task gets that task's id, and a `mem_task_messages` row, but only while the task is
//! in progress and claimed by the thread's session. A closed task, or one claimed since by
//! another session, stops the linking; an explicit `task_id` on the message wins.

use crate::{Conn, Dialect, Result, Value};

/// The message being linked.
pub(crate) struct NewMessage<'a> {
    pub id: &'a str,
    pub role: &'a str,
    pub created_at: i64,
}

/// The condition on a `mem_threads` row under which [`implicit`] links nothing: the thread
/// names no active task, or no session.
pub(crate) fn links_nothing(dialect: Dialect) -> String {
    format!(
        "({} IS NULL OR {} IS NULL)",
        dialect.json_text("metadata", "active_task_id"),
        dialect.json_text("metadata", "session_id")
    )
}

/// Called for every new message without a `task_id`, with the thread's active task and
/// session (read by the same statement that books the message); returns the task the message
/// now belongs to. One indexed lookup when the thread has an active task, none otherwise.
pub(crate) fn implicit(
    conn: &mut dyn Conn,
    m: NewMessage,
    active_task: Option<String>,
    session: Option<String>,
) -> Result<Option<String>> {
    let (Some(task), Some(session)) = (active_task, session) else {
        return Ok(None);
    };
    let live = conn
        .query_value(
            "SELECT 1 FROM mem_tasks WHERE id = ?1 AND status = 'in_progress' AND session_id = ?2",
            &[task.as_str().into(), session.into()],
        )?
        .is_some();
    if !live {
        return Ok(None);
    }
    // 'output' for what the agent generated, 'reference' for what the user supplied.
    let relation = match m.role {
        "assistant" | "tool" => "output",
        _ => "reference",
    };
    conn.execute(
        "INSERT INTO mem_task_messages (task_id, message_id, relation, created_at) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (task_id, message_id) DO NOTHING",
        &[
            task.as_str().into(),
            m.id.into(),
            relation.into(),
            Value::Int(m.created_at),
        ],
    )?;
    Ok(Some(task))
}
