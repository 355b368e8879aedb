//! Implicit context linking (seed 000): a message added to a thread whose metadata names an
//! active task gets that task's id, and a `mem_task_messages` row, but only while the task is
//! in progress and claimed by the thread's session. A closed task, or one claimed since by
//! another session, stops the linking; an explicit `task_id` on the message wins.

use crate::messages::Draft;
use crate::{Conn, Result, Value};

/// Called by `messages::complete_insert` for every new message, with the thread's active task
/// and session (read by the same statement that books the message). One indexed lookup when
/// the thread has an active task, none otherwise.
pub fn implicit(
    conn: &mut dyn Conn,
    d: &mut Draft,
    active_task: Option<String>,
    session: Option<String>,
) -> Result<()> {
    if d.task_id.is_some() {
        return Ok(());
    }
    let (Some(task), Some(session)) = (active_task, session) else {
        return Ok(());
    };
    let live = conn
        .query_value(
            "SELECT 1 FROM mem_tasks WHERE id = ?1 AND status = 'in_progress' AND session_id = ?2",
            &[task.as_str().into(), session.into()],
        )?
        .is_some();
    if !live {
        return Ok(());
    }
    // Seed 000: 'output' for what the agent generated, 'reference' for user context.
    let relation = match d.role.as_str() {
        "assistant" | "tool" => "output",
        _ => "reference",
    };
    conn.execute(
        "INSERT INTO mem_task_messages (task_id, message_id, relation, created_at) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (task_id, message_id) DO NOTHING",
        &[
            task.as_str().into(),
            d.id.as_str().into(),
            relation.into(),
            Value::Int(d.created_at),
        ],
    )?;
    d.task_id = Some(task);
    Ok(())
}
