//! `mem_messages_page`: a thread's messages in order, a page at a time.
//!
//! The message index is the keyset: unique within the thread and dense in insertion order, so
//! `after` / `before` (exclusive) page forward and backward through the `(thread_id,
//! message_index)` index in O(page). The last turns of a thread (what a prompt needs) are
//! `{"order": "desc", "limit": n}`; the turn count is the thread's `message_count`.

use super::lifecycle::{self, State};
use crate::api::{int, json, text, Field};
use crate::json_opts::Opts;
use crate::{Conn, Error, Result, Row, Value};

/// Columns of the table `mem_messages_page` returns.
pub const COLUMNS: [Field; 10] = [
    text("id"),
    int("message_index"),
    text("role"),
    text("content"),
    text("summary"),
    int("compaction_level"),
    text("task_id"),
    int("token_count"),
    int("created_at"),
    json("metadata"),
];

const OPTIONS: &[&str] = &["after", "before", "limit", "order", "include_deleted"];

/// Default and largest page size.
pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 1000;

/// `mem_messages_page(thread_id [, options])`: options `after`, `before` (message indexes,
/// exclusive), `limit`, `order` (`asc`, the default, or `desc`). A deleted thread's messages
/// are read only with `include_deleted`.
pub fn page(
    conn: &mut dyn Conn,
    thread_id: Option<&str>,
    options: Option<&str>,
) -> Result<Vec<Row>> {
    let thread_id = thread_id.ok_or_else(|| Error::invalid("thread_id", "must not be NULL"))?;
    let o = Opts::parse("options", options, OPTIONS)?;
    let limit = o.int("limit", DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    let desc = match o.opt_str("order")?.as_deref() {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(_) => return Err(Error::invalid("options.order", "must be asc or desc")),
    };
    let after = o.opt_int("after")?;
    let before = o.opt_int("before")?;
    let include_deleted = o.opt_bool("include_deleted")?.unwrap_or(false);
    if lifecycle::state_of(conn, thread_id)? == State::Deleted && !include_deleted {
        return Err(lifecycle::hidden(thread_id));
    }
    let rows = conn.query(
        &format!(
            "SELECT id, message_index, role, raw_content, summary, compaction_level, task_id, \
               token_count, created_at, metadata FROM mem_messages \
             WHERE thread_id = ?1 AND message_index > ?2 AND message_index < ?3 \
             ORDER BY message_index {} LIMIT ?4",
            if desc { "DESC" } else { "ASC" }
        ),
        &[
            thread_id.into(),
            Value::Int(after.unwrap_or(-1)),
            Value::Int(before.unwrap_or(i64::MAX)),
            Value::Int(limit),
        ],
    )?;
    rows.into_iter().map(canonical_metadata).collect()
}

/// The row with its metadata (last) re-serialised with sorted keys: Postgres' `jsonb` and
/// SQLite's text keep keys in different orders.
fn canonical_metadata(mut row: Row) -> Result<Row> {
    if let Some(Value::Text(m)) = row.last_mut() {
        let j: serde_json::Value = serde_json::from_str(m)
            .map_err(|e| Error::internal(format!("mem_messages.metadata: {e}")))?;
        *m = j.to_string();
    }
    Ok(row)
}
