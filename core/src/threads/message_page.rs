//! `mem_messages_page`: a thread's messages in order, a page at a time.
//!
//! The message index is the keyset: unique within the thread and dense in insertion order, so
//! `after` / `before` (exclusive) page forward and backward through the `(thread_id,
//! message_index)` index in O(page). The last turns of a thread (what a prompt needs) are
//! `{"order": "desc", "limit": n}`; the turn count is the thread's `message_count`.

use crate::cluster::route;
use super::lifecycle::{self, State};
use crate::columns::{row, JsonText};
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::{Conn, Error, Result, Row, Value};

row! {
    /// One message of `mem_messages_page`.
    pub(crate) struct PageRow {
        pub id: String,
        pub message_index: Option<i64>,
        pub role: String,
        pub content: String,
        pub summary: Option<String>,
        pub compaction_level: i64,
        pub task_id: Option<String>,
        pub token_count: Option<i64>,
        pub created_at: i64,
        /// Re-serialised with sorted keys: Postgres' `jsonb` and SQLite's text keep keys in
        /// different orders.
        pub metadata: JsonText,
    }
}

impl PageRow {
    /// The row of the page's statement.
    fn read(row: Row) -> Result<PageRow> {
        let mut f = Fields::new(row);
        Ok(PageRow {
            id: f.text().unwrap_or_default(),
            message_index: f.int(),
            role: f.text().unwrap_or_default(),
            content: f.text().unwrap_or_default(),
            summary: f.text(),
            compaction_level: f.int().unwrap_or_default(),
            task_id: f.text(),
            token_count: f.int(),
            created_at: f.int().unwrap_or_default(),
            metadata: canonical(&f.text().unwrap_or_default())?,
        })
    }
}

const OPTIONS: &[&str] = &[
    "after",
    "before",
    "limit",
    "order",
    "include_deleted",
    "resource_id",
];

/// Default and largest page size.
pub(crate) const DEFAULT_LIMIT: i64 = 50;
pub(crate) const MAX_LIMIT: i64 = 1000;

/// `mem_messages_page(thread_id [, options])`: options `after`, `before` (message indexes,
/// exclusive), `limit`, `order` (`asc`, the default, or `desc`). A deleted thread's messages
/// are read only with `include_deleted`.
pub(crate) fn page(conn: &mut dyn Conn, thread_id: &str, options: Option<&str>) -> Result<Vec<PageRow>> {
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
    super::check_named_resource(conn, thread_id, o.opt_str("resource_id")?.as_deref())?;
    if lifecycle::state_of(conn, thread_id)? == State::Deleted && !include_deleted {
        return Err(lifecycle::hidden(thread_id));
    }
    let mut params = vec![
        thread_id.into(),
        Value::Int(after.unwrap_or(-1)),
        Value::Int(before.unwrap_or(i64::MAX)),
        Value::Int(limit),
    ];
    let res = route::and_home(conn, "resource_id", &mut params);
    let rows = conn.query(
        &format!(
            "SELECT id, message_index, role, raw_content, summary, compaction_level, task_id, \
               token_count, created_at, metadata FROM mem_messages \
             WHERE thread_id = ?1 AND message_index > ?2 AND message_index < ?3{res} \
             ORDER BY message_index {} LIMIT ?4",
            if desc { "DESC" } else { "ASC" }
        ),
        &params,
    )?;
    rows.into_iter().map(PageRow::read).collect()
}

/// JSON text re-serialised (with sorted keys).
fn canonical(text: &str) -> Result<JsonText> {
    let j: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::internal(format!("mem_messages.metadata: {e}")))?;
    Ok(JsonText(j.to_string()))
}
