//! Context assembly: the observations system message laid out as the observer's prompts
//! expect to read it back, and the whole message list of the next LLM call within a token
//! budget.

use super::pending;
use super::prompts;
use super::record::{self, Key, Record, Scope};
use crate::cluster::route;
use crate::json_opts::Opts;
use crate::threads::lifecycle::{self, State};
use crate::time;
use crate::tokens::{self, Encoding};
use crate::{threads::working_memory, Conn, Error, Result, Value};
use serde_json::Value as Json;

/// The thread's current task and suggested response from its metadata.
fn thread_hints(conn: &mut dyn Conn, thread: &str) -> Result<(Option<String>, Option<String>)> {
    let meta = route::query_value(
        conn,
        "SELECT CAST(metadata AS TEXT) FROM mem_threads WHERE id = ?1{home}",
        &[thread.into()],
    )?
        .and_then(Value::into_string)
        .unwrap_or_default();
    let meta: Json = serde_json::from_str(&meta).unwrap_or(Json::Null);
    let get = |k: &str| {
        meta.get(k)
            .and_then(Json::as_str)
            .map(str::to_owned)
            .filter(|s| !s.is_empty())
    };
    Ok((get("current_task"), get("suggested_response")))
}

/// Tokens of the fixed prompt texts, counted once per process.
static FIXED_TOKENS: once_cell::sync::Lazy<(i64, i64)> = once_cell::sync::Lazy::new(|| {
    let frame = format!(
        "{}\n\n<observations>\n\n</observations>\n\n{}",
        prompts::CONTEXT_PROMPT.trim_end(),
        prompts::CONTEXT_INSTRUCTIONS.trim_end()
    );
    let hint = format!(
        "<system-reminder>{}</system-reminder>",
        prompts::CONTINUATION_HINT.trim_end()
    );
    (
        tokens::count(&frame, Encoding::O200kBase),
        tokens::count(&hint, Encoding::O200kBase),
    )
});

/// The system message with its token count, or `None` when there is nothing to say yet. The
/// count adds the parts' counts (the observations' is kept on the record), so a 40k-token
/// memory is not tokenised again on every call; parts meet at line breaks, where BPE splits.
///
/// `msgs` are the key's unobserved messages with their text (other threads' appear in the
/// resource-scope block).
pub(crate) fn system_message(
    conn: &mut dyn Conn,
    thread_id: &str,
    key: &Key,
    rec: Option<&Record>,
    msgs: &[pending::Msg],
) -> Result<Option<(String, i64)>> {
    let observations = rec.map_or("", |r| r.active_observations.trim());
    let (task, suggested) = thread_hints(conn, thread_id)?;
    // Resource scope: other threads' unobserved messages (the `<unobserved-context>` block).
    let mut others = String::new();
    let mut others_tokens = 0;
    if key.scope == Scope::Resource {
        let mut threads: Vec<&str> = Vec::new();
        for m in msgs.iter().filter(|m| m.thread_id != thread_id) {
            if !threads.contains(&m.thread_id.as_str()) {
                threads.push(&m.thread_id);
            }
        }
        for t in threads {
            others.push_str(&format!("<unobserved-context thread=\"{t}\">\n"));
            for m in msgs.iter().filter(|m| m.thread_id == t) {
                others.push_str(&format!(
                    "[{}] {}: {}\n",
                    time::stamp(m.created_at),
                    m.role,
                    m.content
                ));
                // The message's own exact count plus its stamp and role (about 12 tokens).
                others_tokens += m.token_count + 12;
            }
            others.push_str("</unobserved-context>\n");
        }
    }
    if observations.is_empty() && others.is_empty() && task.is_none() && suggested.is_none() {
        return Ok(None);
    }
    let mut s = format!(
        "{}\n\n<observations>\n{observations}\n</observations>\n\n{}",
        prompts::CONTEXT_PROMPT.trim_end(),
        prompts::CONTEXT_INSTRUCTIONS.trim_end()
    );
    let mut n = FIXED_TOKENS.0 + rec.map_or(0, |r| r.observation_tokens);
    if !others.is_empty() {
        n += others_tokens + 40;
        s.push_str(&format!(
            "\n\nThe following content is from OTHER conversations different from the current conversation:\n\
             START_OTHER_CONVERSATIONS_BLOCK\n{}\nEND_OTHER_CONVERSATIONS_BLOCK",
            others.trim_end()
        ));
    }
    let mut add = |s: &mut String, part: String| {
        n += tokens::count(&part, Encoding::O200kBase);
        s.push_str(&part);
    };
    if let Some(t) = task {
        add(&mut s, format!("\n\n<current-task>\n{t}\n</current-task>"));
    }
    if let Some(r) = suggested {
        add(
            &mut s,
            format!("\n\n<suggested-response>\n{r}\n</suggested-response>"),
        );
    }
    Ok(Some((s, n)))
}

/// Context is assembled for live threads only: a deleted thread's is refused.
fn refuse_deleted(conn: &mut dyn Conn, thread_id: &str) -> Result<()> {
    if lifecycle::state_of(conn, thread_id)? == State::Deleted {
        return Err(lifecycle::hidden(thread_id));
    }
    Ok(())
}

/// `om_context(thread_id [, options])` → the system message or NULL. Option `scope`.
pub(crate) fn om_context(
    conn: &mut dyn Conn,
    thread_id: &str,
    options: Option<&str>,
) -> Result<Option<String>> {
    let o = Opts::parse("options", options, &["scope"])?;
    refuse_deleted(conn, thread_id)?;
    let key = Key::for_thread(conn, thread_id, o.opt_str("scope")?.as_deref())?;
    let rec = record::load(conn, &key)?;
    let msgs = match key.scope {
        Scope::Resource => pending::unobserved(conn, &key, rec.as_ref(), true)?,
        Scope::Thread => Vec::new(),
    };
    Ok(system_message(conn, thread_id, &key, rec.as_ref(), &msgs)?.map(|(s, _)| s))
}

/// `mem_context(thread_id [, options])` → JSON `{messages, tokens, droppedMessages}`: the
/// observations system message, working memory, the continuation hint (when there are
/// observations), then the thread's unobserved messages, oldest first. The answer never passes
/// `budget` tokens (default 100 000): the oldest messages are dropped, and a budget too small
/// for the system parts is an error rather than an answer over budget.
pub(crate) fn mem_context(conn: &mut dyn Conn, thread_id: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, &["scope", "budget"])?;
    let budget = o.int("budget", 100_000, 0, i64::MAX / 4)?;
    refuse_deleted(conn, thread_id)?;
    let key = Key::for_thread(conn, thread_id, o.opt_str("scope")?.as_deref())?;
    let rec = record::load(conn, &key)?;
    let msgs = pending::unobserved(conn, &key, rec.as_ref(), true)?;
    let system = system_message(conn, thread_id, &key, rec.as_ref(), &msgs)?;
    let mut fixed = 0i64;
    let mut parts: Vec<(&str, String)> = Vec::new();
    if let Some((s, n)) = system {
        fixed += n;
        parts.push(("system", s));
    }
    for scope_key in [
        format!("resource:{}", key.resource_id),
        format!("thread:{thread_id}"),
    ] {
        if let Some(wm) = working_memory::stored(conn, &scope_key)? {
            let content = format!(
                "<working-memory>\n{}\n</working-memory>",
                working_memory::sanitize(&wm)
            );
            fixed += tokens::count(&content, Encoding::O200kBase);
            parts.push(("system", content));
        }
    }
    if rec
        .as_ref()
        .is_some_and(|r| !r.active_observations.trim().is_empty())
    {
        fixed += FIXED_TOKENS.1;
        parts.push((
            "user",
            format!(
                "<system-reminder>{}</system-reminder>",
                prompts::CONTINUATION_HINT.trim_end()
            ),
        ));
    }
    if fixed > budget {
        return Err(Error::invalid(
            "options.budget",
            format!(
                "{budget} tokens cannot hold the system parts ({fixed} tokens: observations, \
                 working memory, continuation hint); raise the budget, or reflect to shrink the observations"
            ),
        ));
    }
    let own: Vec<&pending::Msg> = msgs.iter().filter(|m| m.thread_id == thread_id).collect();
    // Keep the newest messages that fit.
    let mut room = budget - fixed;
    let mut keep = own.len();
    while keep > 0 && room >= own[keep - 1].token_count {
        room -= own[keep - 1].token_count;
        keep -= 1;
    }
    let dropped = keep;
    let mut messages: Vec<OutMessage> = parts
        .iter()
        .map(|(role, content)| OutMessage {
            role,
            content,
            id: None,
            created_at: None,
        })
        .collect();
    let mut total = fixed;
    for m in &own[dropped..] {
        total += m.token_count;
        messages.push(OutMessage {
            role: &m.role,
            content: &m.content,
            id: Some(&m.id),
            created_at: Some(m.created_at),
        });
    }
    let out = Out {
        messages,
        tokens: total,
        dropped_messages: dropped,
    };
    serde_json::to_string(&out).map_err(|e| Error::internal(e.to_string()))
}

/// `mem_context`'s answer, serialised straight from borrowed text (the messages and the
/// observations can be hundreds of kilobytes; no intermediate JSON tree).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Out<'a> {
    messages: Vec<OutMessage<'a>>,
    tokens: i64,
    dropped_messages: usize,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct OutMessage<'a> {
    role: &'a str,
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<i64>,
}
