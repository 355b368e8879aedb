//! Messages: validation, the bookkeeping every insert gets (however it arrives), and the
//! counters kept on the thread.
//!
//! `mem_message_add` is a thin wrapper around a plain `INSERT`: the row triggers call
//! [`complete_insert`], [`complete_update`] and [`before_delete`], so an ORM's `INSERT INTO
//! mem_messages (thread_id, role, raw_content) VALUES (…)` is treated exactly like a call to
//! the function, inside the same transaction.

use crate::search::{self, NS_MESSAGES};
use crate::tokens::{self, Encoding};
use crate::{ids, json_opts::Opts, threads, Conn, Error, Result, Value};

/// The roles a message may have.
pub const ROLES: &[&str] = &["user", "assistant", "system", "tool"];

/// Largest message content accepted, in bytes (4 MiB). Larger texts belong in a file, not in
/// an agent's memory; the limit keeps one row from stalling tokenisation and indexing.
pub const MAX_CONTENT_BYTES: usize = 4 * 1024 * 1024;

/// A message row as the triggers see it. Columns in the order of [`Draft::COLUMNS`].
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    pub seq: i64,
    pub id: String,
    pub thread_id: String,
    pub resource_id: Option<String>,
    pub role: String,
    pub raw_content: String,
    pub search_text: Option<String>,
    pub injection_text: Option<String>,
    pub compaction_level: i64,
    pub task_id: Option<String>,
    pub message_index: Option<i64>,
    pub token_count: Option<i64>,
    pub created_at: i64,
}

impl Draft {
    /// The `mem_messages` columns a draft is read from and written back to.
    pub const COLUMNS: [&'static str; 13] = [
        "seq",
        "id",
        "thread_id",
        "resource_id",
        "role",
        "raw_content",
        "search_text",
        "injection_text",
        "compaction_level",
        "task_id",
        "message_index",
        "token_count",
        "created_at",
    ];

    /// Builds a draft from values in [`Draft::COLUMNS`] order.
    pub fn from_values(v: Vec<Value>) -> Result<Self> {
        let mut it = v.into_iter();
        let mut next = || it.next().unwrap_or(Value::Null);
        let text = |v: Value, col: &str| -> Result<String> {
            match v {
                Value::Text(s) => Ok(s),
                Value::Null => Err(Error::invalid(col, "must not be NULL")),
                Value::Blob(b) => String::from_utf8(b)
                    .map_err(|_| Error::invalid(col, "must be valid UTF-8 text")),
                other => Ok(match other {
                    Value::Int(i) => i.to_string(),
                    Value::Real(f) => f.to_string(),
                    _ => unreachable!(),
                }),
            }
        };
        let opt_text = |v: Value, col: &str| -> Result<Option<String>> {
            if v.is_null() {
                Ok(None)
            } else {
                text(v, col).map(Some)
            }
        };
        let seq = next().as_i64().unwrap_or(0);
        let id = text(next(), "id")?;
        let thread_id = text(next(), "thread_id")?;
        let resource_id = opt_text(next(), "resource_id")?;
        let role = text(next(), "role")?;
        let raw_content = text(next(), "raw_content")?;
        let search_text = opt_text(next(), "search_text")?;
        let injection_text = opt_text(next(), "injection_text")?;
        let compaction_level = next().as_i64().unwrap_or(0);
        let task_id = opt_text(next(), "task_id")?;
        let message_index = next().as_i64();
        let token_count = next().as_i64();
        let created_at = next().as_i64().unwrap_or(0);
        Ok(Draft {
            seq,
            id,
            thread_id,
            resource_id,
            role,
            raw_content,
            search_text,
            injection_text,
            compaction_level,
            task_id,
            message_index,
            token_count,
            created_at,
        })
    }

    /// The draft's values in [`Draft::COLUMNS`] order.
    pub fn to_values(&self) -> Vec<Value> {
        vec![
            Value::Int(self.seq),
            self.id.as_str().into(),
            self.thread_id.as_str().into(),
            self.resource_id.clone().into(),
            self.role.as_str().into(),
            self.raw_content.as_str().into(),
            self.search_text.clone().into(),
            self.injection_text.clone().into(),
            Value::Int(self.compaction_level),
            self.task_id.clone().into(),
            self.message_index.into(),
            self.token_count.into(),
            Value::Int(self.created_at),
        ]
    }

    /// Reads a stored row by `seq` (the SQLite triggers run after the write, so they read
    /// the row back; Postgres hands the trigger the row itself).
    pub fn load(conn: &mut dyn Conn, seq: i64) -> Result<Self> {
        let sql = format!(
            "SELECT {} FROM mem_messages WHERE seq = ?1",
            Draft::COLUMNS.join(", ")
        );
        let row = conn
            .query(&sql, &[Value::Int(seq)])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::not_found("message", seq.to_string()))?;
        Draft::from_values(row)
    }

    /// Writes the columns the triggers fill back to a stored row (SQLite's after-triggers).
    pub fn store(&self, conn: &mut dyn Conn) -> Result<()> {
        conn.execute(
            "UPDATE mem_messages SET id = ?2, resource_id = ?3, search_text = ?4, injection_text = ?5, \
             message_index = CAST(?6 AS BIGINT), token_count = CAST(?7 AS BIGINT), task_id = ?8 WHERE seq = ?1",
            &[
                Value::Int(self.seq),
                self.id.as_str().into(),
                self.resource_id.clone().into(),
                self.search_text.clone().into(),
                self.injection_text.clone().into(),
                self.message_index.into(),
                self.token_count.into(),
                self.task_id.clone().into(),
            ],
        )?;
        Ok(())
    }
}

/// Checks a role against [`ROLES`].
pub fn check_role(role: &str) -> Result<()> {
    if ROLES.contains(&role) {
        Ok(())
    } else {
        Err(Error::invalid(
            "role",
            format!("must be one of {} (got \"{role}\")", ROLES.join(", ")),
        ))
    }
}

/// Checks message text: at most [`MAX_CONTENT_BYTES`], no NUL characters.
pub fn check_content(arg: &str, text: &str) -> Result<()> {
    if text.len() > MAX_CONTENT_BYTES {
        return Err(Error::invalid(
            arg,
            format!(
                "is {} bytes; the limit is {MAX_CONTENT_BYTES} bytes (4 MiB)",
                text.len()
            ),
        ));
    }
    if text.contains('\0') {
        return Err(Error::invalid(arg, "must not contain NUL characters"));
    }
    Ok(())
}

/// Options `mem_message_add` understands.
const ADD_OPTIONS: &[&str] = &["id", "created_at", "metadata", "task_id"];

/// `mem_message_add(thread_id, role, content [, options])` → id. O(log n) plus tokenising.
pub fn add(
    conn: &mut dyn Conn,
    thread_id: Option<&str>,
    role: Option<&str>,
    content: Option<&str>,
    options: Option<&str>,
) -> Result<String> {
    let thread_id = thread_id.ok_or_else(|| Error::invalid("thread_id", "must not be NULL"))?;
    let role = role.ok_or_else(|| Error::invalid("role", "must not be NULL"))?;
    let content = content.ok_or_else(|| Error::invalid("content", "must not be NULL"))?;
    check_role(role)?;
    check_content("content", content)?;
    let opts = Opts::parse("options", options, ADD_OPTIONS)?;
    let id = match opts.opt_str("id")? {
        Some(id) => {
            ids::check_id("options.id", &id)?;
            id
        }
        None => ids::new_id(),
    };
    let created_at = match opts.opt_int("created_at")? {
        Some(t) => t,
        None => conn.now_ms()?,
    };
    let metadata = opts.opt_object("metadata")?.unwrap_or_else(|| "{}".into());
    let task_id = opts.opt_str("task_id")?;
    threads::resource_of(conn, thread_id)?;
    conn.execute(
        "INSERT INTO mem_messages (id, thread_id, role, raw_content, created_at, metadata, task_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, CAST(?6 AS @JSON), ?7)",
        &[
            id.as_str().into(),
            thread_id.into(),
            role.into(),
            content.into(),
            Value::Int(created_at),
            metadata.into(),
            task_id.into(),
        ],
    )?;
    Ok(id)
}

/// Fills what an insert left out and books it on the thread. Called by the insert trigger of
/// both backends; O(log n) plus tokenising.
///
/// The thread row's counter is bumped with one `UPDATE … RETURNING`: it locks the thread row
/// until commit (Postgres) or runs under the single writer lock (SQLite), so concurrent
/// writers of one thread get consecutive, unique indexes, and a rollback returns the number.
pub fn complete_insert(conn: &mut dyn Conn, mut d: Draft) -> Result<Draft> {
    check_role(&d.role)?;
    check_content("raw_content", &d.raw_content)?;
    if let Some(s) = &d.search_text {
        check_content("search_text", s)?;
    }
    if d.id.is_empty() {
        d.id = ids::new_id();
    }
    ids::check_id("id", &d.id)?;
    let tokens = match d.token_count {
        Some(t) if t >= 0 => t,
        Some(_) => return Err(Error::invalid("token_count", "must not be negative")),
        None => tokens::count(&d.raw_content, Encoding::O200kBase),
    };
    crate::tasks::link::implicit(conn, &mut d)?;
    let row = conn
        .query(
            "UPDATE mem_threads SET \
               next_message_index = CASE WHEN CAST(?2 AS BIGINT) IS NULL THEN next_message_index + 1 \
                 WHEN CAST(?2 AS BIGINT) >= next_message_index THEN CAST(?2 AS BIGINT) + 1 \
                 ELSE next_message_index END, \
               message_count = message_count + 1, \
               token_count = token_count + ?3, \
               updated_at = CASE WHEN updated_at < ?4 THEN ?4 ELSE updated_at END \
             WHERE id = ?1 RETURNING next_message_index, resource_id",
            &[d.thread_id.as_str().into(), d.message_index.into(), Value::Int(tokens), Value::Int(d.created_at)],
        )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("thread", d.thread_id.clone()))?;
    let mut row = row.into_iter();
    let next_index = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
    let resource = row.next().and_then(Value::into_string);
    d.message_index = Some(d.message_index.unwrap_or(next_index - 1));
    d.token_count = Some(tokens);
    if d.resource_id.is_none() {
        d.resource_id = resource;
    }
    if d.search_text.is_none() {
        d.search_text = Some(d.raw_content.clone());
    }
    if d.injection_text.is_none() {
        d.injection_text = Some(d.raw_content.clone());
    }
    index(conn, &d)?;
    Ok(d)
}

/// Puts the message's search text into the search index (insert or replace).
fn index(conn: &mut dyn Conn, d: &Draft) -> Result<()> {
    let text = d.search_text.as_deref().unwrap_or(&d.raw_content);
    search::index_doc(conn, NS_MESSAGES, d.seq, text, d.created_at)
}

/// After `raw_content` or `search_text` changes. A new raw text is recounted (and the thread's
/// total with it) and, for an uncompacted message, the search and injection text follow it.
/// The index then takes the search text.
pub fn complete_update(
    conn: &mut dyn Conn,
    raw_changed: bool,
    old_tokens: Option<i64>,
    mut d: Draft,
) -> Result<Draft> {
    if let Some(s) = &d.search_text {
        check_content("search_text", s)?;
    }
    if !raw_changed {
        index(conn, &d)?;
        return Ok(d);
    }
    check_content("raw_content", &d.raw_content)?;
    let tokens = tokens::count(&d.raw_content, Encoding::O200kBase);
    conn.execute(
        "UPDATE mem_threads SET token_count = token_count + ?2 WHERE id = ?1",
        &[
            d.thread_id.as_str().into(),
            Value::Int(tokens - old_tokens.unwrap_or(0)),
        ],
    )?;
    d.token_count = Some(tokens);
    if d.compaction_level == 0 {
        d.search_text = Some(d.raw_content.clone());
        d.injection_text = Some(d.raw_content.clone());
    }
    index(conn, &d)?;
    Ok(d)
}

/// Before a message row goes: take it off the thread's totals and out of the search index.
/// The index counter is not lowered, so message indexes are never reused.
pub fn before_delete(conn: &mut dyn Conn, d: &Draft) -> Result<()> {
    search::remove_doc(conn, NS_MESSAGES, d.seq)?;
    conn.execute(
        "UPDATE mem_threads SET message_count = message_count - 1, token_count = token_count - ?2 WHERE id = ?1",
        &[d.thread_id.as_str().into(), Value::Int(d.token_count.unwrap_or(0))],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_error_lists_roles() {
        assert_eq!(
            check_role("robot").unwrap_err().to_string(),
            "role: must be one of user, assistant, system, tool (got \"robot\")"
        );
    }

    #[test]
    fn content_rules() {
        assert!(check_content("content", "fine").is_ok());
        assert_eq!(
            check_content("content", "a\0b").unwrap_err().to_string(),
            "content: must not contain NUL characters"
        );
        assert!(check_content("content", &"x".repeat(MAX_CONTENT_BYTES + 1)).is_err());
    }

    #[test]
    fn draft_round_trips_through_values() {
        let d = Draft {
            seq: 7,
            id: "m".into(),
            thread_id: "t".into(),
            resource_id: None,
            role: "user".into(),
            raw_content: "hi".into(),
            search_text: Some("hi".into()),
            injection_text: None,
            compaction_level: 1,
            task_id: Some("k".into()),
            message_index: Some(3),
            token_count: None,
            created_at: 42,
        };
        assert_eq!(Draft::from_values(d.to_values()).unwrap(), d);
    }
}
