//! `mem_recall(thread_id [, hint [, options]])`: the messages one agent turn needs.
//!
//! The last `last_n` messages of the thread, in conversation order. (With a hint, the search
//! engine adds its top hits with their neighbours; see the search issue.)

use crate::{json_opts::Opts, threads, Conn, Error, Result, Row, Value};

/// Column names of the table `mem_recall` returns.
pub const COLUMNS: [&str; 9] = [
    "message_id",
    "thread_id",
    "role",
    "content",
    "message_index",
    "created_at",
    "token_count",
    "task_id",
    "reason",
];

const OPTIONS: &[&str] = &["last_n", "top_k", "before", "after", "scope"];

/// One recalled message; `content` is the injection text (what goes into a prompt).
#[derive(Clone, Debug, PartialEq)]
pub struct Recalled {
    pub message_id: String,
    pub thread_id: String,
    pub role: String,
    pub content: String,
    pub message_index: i64,
    pub created_at: i64,
    pub token_count: i64,
    pub task_id: Option<String>,
    /// `recent` for the last-N window, `match` for a search hit, `context` for its neighbours.
    pub reason: &'static str,
}

impl Recalled {
    pub fn into_row(self) -> Row {
        vec![
            self.message_id.into(),
            self.thread_id.into(),
            self.role.into(),
            self.content.into(),
            Value::Int(self.message_index),
            Value::Int(self.created_at),
            Value::Int(self.token_count),
            self.task_id.into(),
            self.reason.into(),
        ]
    }
}

/// O(last_n · log n).
pub fn recall(
    conn: &mut dyn Conn,
    thread_id: Option<&str>,
    _hint: Option<&str>,
    options: Option<&str>,
) -> Result<Vec<Recalled>> {
    let thread_id = thread_id.ok_or_else(|| Error::invalid("thread_id", "must not be NULL"))?;
    let opts = Opts::parse("options", options, OPTIONS)?;
    let last_n = opts.int("last_n", 10, 0, 10_000)?;
    threads::resource_of(conn, thread_id)?;
    let rows = conn.query(
        "SELECT id, thread_id, role, injection_text, message_index, created_at, token_count, task_id \
         FROM mem_messages WHERE thread_id = ?1 ORDER BY message_index DESC LIMIT ?2",
        &[thread_id.into(), Value::Int(last_n)],
    )?;
    let mut out: Vec<Recalled> = rows
        .into_iter()
        .map(|r| recalled(r, "recent"))
        .collect::<Result<_>>()?;
    out.reverse();
    Ok(out)
}

fn recalled(row: Row, reason: &'static str) -> Result<Recalled> {
    let mut it = row.into_iter();
    let mut text = |col: &str| {
        it.next()
            .and_then(Value::into_string)
            .ok_or_else(|| Error::internal(format!("mem_messages.{col} is NULL")))
    };
    let message_id = text("id")?;
    let thread_id = text("thread_id")?;
    let role = text("role")?;
    let content = text("injection_text")?;
    let mut int = || it.next().and_then(|v| v.as_i64()).unwrap_or(0);
    let message_index = int();
    let created_at = int();
    let token_count = int();
    let task_id = it.next().and_then(Value::into_string);
    Ok(Recalled {
        message_id,
        thread_id,
        role,
        content,
        message_index,
        created_at,
        token_count,
        task_id,
        reason,
    })
}
