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

/// [`links_nothing`] judged on a thread's `metadata` as read (JSON text): a key that is
/// missing or JSON `null` reads as SQL `NULL` there. `None` when the text is not JSON.
pub(crate) fn metadata_links_nothing(metadata: &str) -> Option<bool> {
    let m: serde_json::Value = serde_json::from_str(metadata).ok()?;
    let unset = |key: &str| m.get(key).is_none_or(serde_json::Value::is_null);
    Some(unset("active_task_id") || unset("session_id"))
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

#[cfg(test)]
mod tests {
    use super::metadata_links_nothing;

    /// As `metadata ->> key IS NULL` reads it: a missing key and JSON `null` are both unset.
    #[test]
    fn metadata_links_only_with_a_task_and_a_session() {
        for (metadata, nothing) in [
            ("{}", Some(true)),
            (r#"{"active_task_id":"t1"}"#, Some(true)),
            (r#"{"active_task_id":"t1","session_id":null}"#, Some(true)),
            (r#"{"active_task_id":"t1","session_id":"s1"}"#, Some(false)),
            (r#"{"active_task_id":1,"session_id":"s1"}"#, Some(false)),
            ("not json", None),
        ] {
            assert_eq!(metadata_links_nothing(metadata), nothing, "{metadata}");
        }
    }
}
