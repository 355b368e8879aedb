//! Threads: one conversation each, grouped by resource (a user, a project, an agent).

use crate::{ids, json_opts, Conn, Error, Result, Value};

/// Longest resource id accepted.
pub const MAX_RESOURCE_LEN: usize = 200;

/// `mem_thread_create(resource_id [, title [, metadata]])`. O(log n).
pub fn create(
    conn: &mut dyn Conn,
    resource_id: Option<&str>,
    title: Option<&str>,
    metadata: Option<&str>,
) -> Result<String> {
    let resource_id =
        resource_id.ok_or_else(|| Error::invalid("resource_id", "must not be NULL"))?;
    ids::check_id("resource_id", resource_id)?;
    let metadata = json_opts::object_text("metadata", metadata)?;
    let id = ids::new_id();
    let now = conn.now_ms()?;
    conn.execute(
        "INSERT INTO mem_threads (id, resource_id, title, metadata, created_at, updated_at) \
         VALUES (?1, ?2, ?3, CAST(?4 AS @JSON), ?5, ?5)",
        &[
            id.as_str().into(),
            resource_id.into(),
            title.into(),
            metadata.into(),
            Value::Int(now),
        ],
    )?;
    Ok(id)
}

/// The thread's resource id, or `thread not found`.
pub fn resource_of(conn: &mut dyn Conn, thread_id: &str) -> Result<String> {
    conn.query_value(
        "SELECT resource_id FROM mem_threads WHERE id = ?1",
        &[thread_id.into()],
    )?
    .and_then(Value::into_string)
    .ok_or_else(|| Error::not_found("thread", thread_id))
}

/// Recounts a thread's counters from its messages (SQLite: after `INSERT OR REPLACE` put a
/// new row in place of a thread whose messages stayed). `next_message_index` continues after
/// the largest index present. O(messages of the thread) through its index; idempotent.
pub fn recount(conn: &mut dyn Conn, thread_id: &str) -> Result<()> {
    conn.execute(
        "UPDATE mem_threads SET \
           message_count = (SELECT count(*) FROM mem_messages m WHERE m.thread_id = ?1), \
           token_count = (SELECT coalesce(sum(m.token_count), 0) FROM mem_messages m WHERE m.thread_id = ?1), \
           next_message_index = (SELECT coalesce(max(m.message_index) + 1, 0) FROM mem_messages m WHERE m.thread_id = ?1) \
         WHERE id = ?1",
        &[thread_id.into()],
    )?;
    Ok(())
}
