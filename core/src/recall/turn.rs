//! `mem_recall(thread_id [, hint [, options]])`: the messages one agent turn needs.
//!
//! The last `last_n` messages of the thread and, when a hint is given, the `top_k` search hits
//! (3 by default) in the thread (or its resource, with `"scope":"resource"`), each with
//! `before` messages before it (2) and `after` after it (1). Deduplicated and in
//! conversation order.
//! A deleted thread is recalled, and deleted threads searched, only with `include_deleted`.

use crate::cluster::route;
use super::search::{self, Filters, Request};
use crate::columns::row;
use crate::search::{SearchParams, SnippetSettings};
use crate::threads::lifecycle::{self, State};
use crate::{json_opts::Opts, threads, Conn, Error, Result, Row, Value};
use std::collections::BTreeMap;

const OPTIONS: &[&str] = &[
    "last_n",
    "top_k",
    "before",
    "after",
    "scope",
    "include_deleted",
    "resource_id",
];

row! {
    /// One recalled message; `content` is the injection text (what goes into a prompt).
    #[derive(Clone, Debug, PartialEq)]
    pub(crate) struct Recalled {
        pub message_id: String,
        pub thread_id: String,
        pub role: String,
        pub content: String,
        pub message_index: i64,
        pub created_at: i64,
        pub token_count: i64,
        pub task_id: Option<String>,
        /// `recent` for the last-N window, `match` for a search hit, `context` for its
        /// neighbors.
        pub reason: &'static str,
    }
}

const SELECT: &str =
    "SELECT id, thread_id, role, coalesce(injection_text, raw_content), message_index, created_at, token_count, task_id \
                      FROM mem_messages";

/// Whether a hint is really an options object passed one argument too early: a JSON object is
/// never a search hint an agent means.
fn looks_like_options(hint: &str) -> bool {
    hint.trim_start().starts_with('{')
        && serde_json::from_str::<serde_json::Value>(hint).is_ok_and(|v| v.is_object())
}

/// O(last_n · log n), plus one search and top_k range reads with a hint.
pub(crate) fn recall(
    conn: &mut dyn Conn,
    thread_id: &str,
    hint: Option<&str>,
    options: Option<&str>,
) -> Result<Vec<Recalled>> {
    if hint.is_some_and(looks_like_options) {
        return Err(Error::invalid(
            "hint",
            "is a JSON object: options go in the third argument (mem_recall(thread_id, NULL, '{…}'))",
        ));
    }
    let opts = Opts::parse("options", options, OPTIONS)?;
    let last_n = opts.int("last_n", 10, 0, 10_000)?;
    let top_k = opts.int("top_k", 3, 0, 100)?;
    let before = opts.int("before", 2, 0, 100)?;
    let after = opts.int("after", 1, 0, 100)?;
    let scope = opts.opt_str("scope")?.unwrap_or_else(|| "thread".into());
    let include_deleted = opts.opt_bool("include_deleted")?.unwrap_or(false);
    threads::check_named_resource(conn, thread_id, opts.opt_str("resource_id")?.as_deref())?;
    let resource = threads::resource_of(conn, thread_id)?;
    if !include_deleted && lifecycle::state_of(conn, thread_id)? == State::Deleted {
        return Err(lifecycle::hidden(thread_id));
    }
    let filters = match scope.as_str() {
        // The thread's resource too: a search within the resource reads only its index.
        "thread" => Filters {
            thread_id: Some(thread_id.into()),
            resource_id: Some(resource),
            include_deleted,
            ..Filters::default()
        },
        "resource" => Filters {
            resource_id: Some(resource),
            include_deleted,
            ..Filters::default()
        },
        _ => {
            return Err(Error::invalid(
                "options.scope",
                "must be \"thread\" or \"resource\"",
            ))
        }
    };

    // Keyed so that the result is deduplicated and in conversation order: other threads'
    // messages (resource scope) first, by time; then this thread by message index. A message
    // keeps its strongest reason: match over context over recent. Compacted messages that
    // inject nothing (the summary rides on the first message of their range) are left out.
    let mut picked: BTreeMap<(bool, i64, String, i64), Recalled> = BTreeMap::new();
    let mut add = |r: Recalled| {
        if r.content.is_empty() {
            return;
        }
        let own = r.thread_id == thread_id;
        let key = (
            own,
            if own { 0 } else { r.created_at },
            r.thread_id.clone(),
            r.message_index,
        );
        match picked.get(&key) {
            Some(old) if rank(old.reason) >= rank(r.reason) => {}
            _ => {
                picked.insert(key, r);
            }
        }
    };
    let mut params = vec![thread_id.into(), Value::Int(last_n)];
    let res = route::and_home(conn, "resource_id", &mut params);
    let rows = conn.query(
        &format!("{SELECT} WHERE thread_id = ?1{res} ORDER BY message_index DESC LIMIT ?2"),
        &params,
    )?;
    for r in rows {
        add(recalled(r, "recent")?);
    }
    if let Some(hint) = hint.filter(|h| !h.trim().is_empty()) {
        let req = Request {
            params: SearchParams {
                limit: top_k as usize,
                ..SearchParams::default()
            },
            filters,
            snippet: SnippetSettings::default(),
            context_weight: crate::recall::thread_context::DEFAULT_WEIGHT,
            code: false,
        };
        for hit in search::run(conn, hint, &req)? {
            let mut params = vec![
                hit.row.thread_id.as_str().into(),
                Value::Int(hit.message_index - before),
                Value::Int(hit.message_index + after),
            ];
            let res = route::and_home(conn, "resource_id", &mut params);
            let rows = conn.query(
                &format!(
                    "{SELECT} WHERE thread_id = ?1 AND message_index BETWEEN ?2 AND ?3{res} \
                     ORDER BY message_index"
                ),
                &params,
            )?;
            for r in rows {
                let r = recalled(r, "context")?;
                let reason = if r.message_index == hit.message_index {
                    "match"
                } else {
                    "context"
                };
                add(Recalled { reason, ..r });
            }
        }
    }
    Ok(picked.into_values().collect())
}

fn rank(reason: &str) -> u8 {
    match reason {
        "match" => 2,
        "context" => 1,
        _ => 0,
    }
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
    let content = text("content")?;
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
