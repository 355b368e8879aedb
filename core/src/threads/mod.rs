//! Threads and their messages: message memory. A thread is one conversation, grouped by
//! resource (a user, a project, an agent); this module creates, reads and updates threads,
//! and its children hold the rest:
//!
//! * [`messages`]: adding messages (ids, order, token counts, the search index, the implicit
//!   task link of [`task_link`]);
//! * [`lifecycle`]: a thread's states (active, archived, deleted) and what each allows;
//! * [`list`] and [`message_page`]: the reads that list threads and page through messages;
//! * [`message_index`]: the message index's upkeep (check, rebuild, merge);
//! * [`compaction`] and [`working_memory`].
//!
//! Searching messages (with observations) and a turn's recall read across memories: see
//! [`crate::recall`].

pub(crate) mod compaction;
pub(crate) mod lifecycle;
pub(crate) mod list;
pub(crate) mod message_index;
pub(crate) mod message_page;
pub(crate) mod messages;
pub(crate) mod task_link;
pub(crate) mod working_memory;

use crate::cluster::route;
use crate::db::row::Cells;
use crate::json_opts::{self, Opts};
use crate::{ids, Conn, Error, Result, Row, Value};
use serde_json::{Map, Value as Json};

/// Options `mem_thread_create` understands.
const CREATE_OPTIONS: &[&str] = &["id", "agent_id", "user_id"];

/// `mem_thread_create(resource_id [, title [, metadata [, options]]])`: options `id`,
/// `agent_id`, `user_id`. O(log n).
pub(crate) fn create(
    conn: &mut dyn Conn,
    resource_id: &str,
    title: Option<&str>,
    metadata: Option<&str>,
    options: Option<&str>,
) -> Result<String> {
    ids::check_id("resource_id", resource_id)?;
    let metadata = json_opts::object_text("metadata", metadata)?;
    let o = Opts::parse("options", options, CREATE_OPTIONS)?;
    let id = match o.opt_str("id")? {
        Some(id) => {
            ids::check_id("options.id", &id)?;
            id
        }
        None => ids::new_id(),
    };
    let agent_id = opt_id(&o, "agent_id")?;
    let user_id = opt_id(&o, "user_id")?;
    let now = conn.now_ms()?;
    conn.execute(
        "INSERT INTO mem_threads (id, resource_id, title, metadata, created_at, updated_at, agent_id, user_id) \
         VALUES (?1, ?2, ?3, CAST(?4 AS @JSON), ?5, ?5, ?6, ?7)",
        &[
            id.as_str().into(),
            resource_id.into(),
            title.into(),
            metadata.into(),
            Value::Int(now),
            agent_id.into(),
            user_id.into(),
        ],
    )?;
    Ok(id)
}

/// An optional id-like option (`agent_id`, `user_id`), checked as ids are.
fn opt_id(o: &Opts, key: &str) -> Result<Option<String>> {
    let v = o.opt_str(key)?;
    if let Some(v) = &v {
        ids::check_id(&o.name(key), v)?;
    }
    Ok(v)
}

/// The columns of a thread as [`get`] returns them, in this order.
pub(crate) const THREAD_COLUMNS: &str = "id, resource_id, agent_id, user_id, title, state, metadata, \
     created_at, updated_at, message_count, token_count";

/// A thread's row as JSON: the shape `mem_thread_get` returns and `mem_threads` lists.
pub(crate) fn thread_json(row: Row) -> Result<Json> {
    let mut c = Cells::new("mem_threads", THREAD_FIELDS, row);
    let mut m = Map::new();
    for key in &THREAD_FIELDS[..6] {
        m.insert(
            (*key).into(),
            c.opt_text()?.map_or(Json::Null, Json::String),
        );
    }
    let metadata: Json = serde_json::from_str(&c.json_object()?)
        .map_err(|e| Error::internal(format!("mem_threads.metadata: {e}")))?;
    m.insert("metadata".into(), metadata);
    for key in &THREAD_FIELDS[7..] {
        m.insert((*key).into(), Json::from(c.int()?));
    }
    Ok(Json::Object(m))
}

const THREAD_FIELDS: &[&str] = &[
    "id",
    "resource_id",
    "agent_id",
    "user_id",
    "title",
    "state",
    "metadata",
    "created_at",
    "updated_at",
    "message_count",
    "token_count",
];

/// The thread's row, or `thread not found`.
fn row_of(conn: &mut dyn Conn, thread_id: &str) -> Result<Row> {
    let mut params = vec![thread_id.into()];
    let res = route::and_home(conn, "resource_id", &mut params);
    conn.query(
        &format!("SELECT {THREAD_COLUMNS} FROM mem_threads WHERE id = ?1{res}"),
        &params,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| Error::not_found("thread", thread_id))
}

/// `mem_thread_get(id)` → the thread as JSON (its counters included), in any state.
pub(crate) fn get(conn: &mut dyn Conn, thread_id: &str) -> Result<String> {
    Ok(thread_json(row_of(conn, thread_id)?)?.to_string())
}

/// Keys `mem_thread_update` understands.
const PATCH_KEYS: &[&str] = &["title", "metadata", "agent_id", "user_id"];

/// `mem_thread_update(id, patch)` → the thread as JSON. `title`, `agent_id` and `user_id` are
/// replaced (`null` clears them); `metadata` is merged into the thread's, a key set to `null`
/// removed. The state changes only through its events (`mem_thread_archive`, …).
pub(crate) fn update(conn: &mut dyn Conn, thread_id: &str, patch: &str) -> Result<String> {
    if let Ok(Json::Object(m)) = serde_json::from_str::<Json>(patch) {
        if m.contains_key("state") {
            return Err(Error::invalid(
                "patch.state",
                "changes only through mem_thread_archive, mem_thread_delete and mem_thread_restore",
            ));
        }
    }
    let o = Opts::parse("patch", Some(patch), PATCH_KEYS)?;
    let current = thread_json(row_of(conn, thread_id)?)?;
    let text_of = |key: &str| -> Result<Option<String>> {
        if o.has(key) {
            return o.opt_str(key);
        }
        Ok(current[key].as_str().map(str::to_owned))
    };
    let title = text_of("title")?;
    let agent_id = if o.has("agent_id") {
        opt_id(&o, "agent_id")?
    } else {
        text_of("agent_id")?
    };
    let user_id = if o.has("user_id") {
        opt_id(&o, "user_id")?
    } else {
        text_of("user_id")?
    };
    let mut metadata = current["metadata"].as_object().cloned().unwrap_or_default();
    if let Some(p) = o.opt_object("metadata")? {
        if let Ok(Json::Object(p)) = serde_json::from_str::<Json>(&p) {
            for (k, v) in p {
                if v.is_null() {
                    metadata.remove(&k);
                } else {
                    metadata.insert(k, v);
                }
            }
        }
    }
    let now = conn.now_ms()?;
    conn.execute(
        "UPDATE mem_threads SET title = ?2, agent_id = ?3, user_id = ?4, \
           metadata = CAST(?5 AS @JSON), \
           updated_at = CASE WHEN updated_at < ?6 THEN ?6 ELSE updated_at END \
         WHERE id = ?1",
        &[
            thread_id.into(),
            title.into(),
            agent_id.into(),
            user_id.into(),
            Json::Object(metadata).to_string().into(),
            Value::Int(now),
        ],
    )?;
    get(conn, thread_id)
}

/// Checks the resource a caller named for a thread (`options.resource_id` of the functions
/// that read a thread: on a distributed database it sends the call straight to its worker,
/// which holds no other resource's threads, so the answer is the same on one node: the
/// thread is not in that resource, whether or not it is in another).
pub(crate) fn check_named_resource(
    conn: &mut dyn Conn,
    thread_id: &str,
    named: Option<&str>,
) -> Result<()> {
    let Some(named) = named else {
        return Ok(());
    };
    let found = conn.query_value(
        "SELECT 1 FROM mem_threads WHERE id = ?1 AND resource_id = ?2",
        &[thread_id.into(), named.into()],
    )?;
    match found {
        Some(_) => Ok(()),
        None => Err(not_in_resource("options.resource_id", thread_id, named)),
    }
}

/// The error of a call that named a resource `named` which holds no thread `thread_id`.
pub(crate) fn not_in_resource(argument: &str, thread_id: &str, named: &str) -> Error {
    Error::invalid(
        argument,
        format!(
            "no thread {} in resource {}",
            crate::error::echo_bare(thread_id),
            crate::error::echo(named)
        ),
    )
}

/// The resource of the thread `thread_id`, looked up by its id alone (on a distributed
/// database, in every shard); `None` when there is no such thread.
pub(crate) fn resource_by_id(conn: &mut dyn Conn, thread_id: &str) -> Result<Option<String>> {
    Ok(conn
        .query_value(
            "SELECT resource_id FROM mem_threads WHERE id = ?1",
            &[thread_id.into()],
        )?
        .and_then(Value::into_string))
}

/// The thread's resource id, or `thread not found`.
pub(crate) fn resource_of(conn: &mut dyn Conn, thread_id: &str) -> Result<String> {
    let mut params = vec![thread_id.into()];
    let res = route::and_home(conn, "resource_id", &mut params);
    conn.query_value(
        &format!("SELECT resource_id FROM mem_threads WHERE id = ?1{res}"),
        &params,
    )?
    .and_then(Value::into_string)
    .ok_or_else(|| Error::not_found("thread", thread_id))
}

/// Recounts a thread's counters from its messages (SQLite: after `INSERT OR REPLACE` put a
/// new row in place of a thread whose messages stayed). `next_message_index` continues after
/// the largest index present. O(messages of the thread) through its index; idempotent.
pub(crate) fn recount(conn: &mut dyn Conn, thread_id: &str) -> Result<()> {
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
