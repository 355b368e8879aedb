//! The observation cycle: build the observer's input, take its answer back — synchronously
//! (`om_apply_observation`) or as a buffered chunk (`om_buffer_chunk`) later moved to the
//! active observations in order (`om_activate`). Every write is lease-guarded and happens in
//! one statement's transaction, so an answer is applied whole or not at all.

use super::lease::{Answered, Fenced};
use super::parse::{self, Parsed};
use super::pending::{self, Msg};
use super::prompts;
use super::record::{self, Chunk, Key, Record, Scope};
use crate::cluster::route;
use crate::time;
use crate::tokens::{self, Encoding};
use crate::{threads, Conn, Error, Result, Value};
use serde_json::json;
use std::collections::HashSet;

/// `om_observer_input(lookup_key [, options])` → JSON `{system, prompt, threadId, messageIds,
/// messageTokens}`: the next batch to observe. Messages already covered by a buffered chunk
/// are left out. In resource scope the batch is the thread with the oldest unobserved message
/// (oldest first), shown with the whole observation pool. Options: `max_tokens` caps
/// the batch (oldest messages first; at least one message).
pub(crate) fn observer_input(conn: &mut dyn Conn, key: &str, options: Option<&str>) -> Result<String> {
    let (key, o, rec) = record::prompt_input(conn, key, options, &["max_tokens"])?;
    let max_tokens = o.int("max_tokens", i64::MAX, 1, i64::MAX)?;
    let buffered = pending::buffered_ids(rec.as_ref());
    let msgs: Vec<Msg> = pending::unobserved(conn, &key, rec.as_ref(), true)?
        .into_iter()
        .filter(|m| !buffered.contains(&m.id))
        .collect();
    let thread = msgs.first().map(|m| m.thread_id.clone());
    let mut batch = Vec::new();
    let mut total = 0;
    for m in msgs
        .into_iter()
        .filter(|m| Some(&m.thread_id) == thread.as_ref())
    {
        if !batch.is_empty() && total + m.token_count > max_tokens {
            break;
        }
        total += m.token_count;
        batch.push(m);
    }
    let prompt = if batch.is_empty() {
        String::new()
    } else {
        observer_prompt(
            rec.as_ref().map_or("", |r| r.active_observations.as_str()),
            &batch,
        )
    };
    Ok(json!({
        "lookupKey": key.text,
        "system": prompts::observer_system(),
        "prompt": prompt,
        "threadId": thread,
        "messageIds": batch.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        "messageTokens": total,
    })
    .to_string())
}

fn role_label(role: &str) -> &str {
    match role {
        "user" => "User",
        "assistant" => "Assistant",
        "system" => "System",
        _ => "Tool",
    }
}

/// The observer's user message: the observations so far for context, then the new messages
/// grouped by date with 24-hour times (UTC).
pub(crate) fn observer_prompt(previous: &str, batch: &[Msg]) -> String {
    let mut s = String::from("<previous-observations>\n");
    s.push_str(if previous.trim().is_empty() {
        "None yet."
    } else {
        previous.trim()
    });
    s.push_str("\n</previous-observations>\n\nNew messages to observe (times are UTC):\n");
    let mut day = String::new();
    for m in batch {
        let d = time::date(m.created_at);
        if d != day {
            s.push_str(&format!("\nDate: {d}\n"));
            day = d;
        }
        s.push_str(&format!(
            "[{}] {}: {}\n",
            time::time(m.created_at),
            role_label(&m.role),
            m.content
        ));
    }
    s.push_str(
        "\nExtract observations from the new messages only. The previous observations are context: \
         do not repeat them.\n",
    );
    s
}

/// Parses `message_ids` (a JSON array of ids).
fn parse_ids(text: &str) -> Result<Vec<String>> {
    let ids: Vec<String> = serde_json::from_str(text)
        .map_err(|_| Error::invalid("message_ids", "must be a JSON array of message ids"))?;
    for (i, id) in ids.iter().enumerate() {
        crate::args::no_nul(&format!("message_ids[{i}]"), id)?;
    }
    if ids.is_empty() {
        return Err(Error::invalid("message_ids", "must not be empty"));
    }
    let mut seen = HashSet::new();
    if let Some(dup) = ids.iter().find(|i| !seen.insert(i.as_str())) {
        return Err(Error::invalid(
            "message_ids",
            format!("lists {} more than once", crate::error::echo(dup)),
        ));
    }
    Ok(ids)
}

/// Checks that every id is an unobserved, unbuffered message of the key, all of one thread.
/// Returns that thread and the messages.
fn batch_of(
    conn: &mut dyn Conn,
    key: &Key,
    rec: &Record,
    ids: &[String],
) -> Result<(String, Vec<Msg>)> {
    let pending = pending::unobserved(conn, key, Some(rec), false)?;
    let buffered = pending::buffered_ids(Some(rec));
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let batch: Vec<Msg> = pending
        .into_iter()
        .filter(|m| wanted.contains(m.id.as_str()))
        .collect();
    if batch.len() != wanted.len() {
        let found: HashSet<&str> = batch.iter().map(|m| m.id.as_str()).collect();
        let missing: Vec<&str> = ids
            .iter()
            .map(String::as_str)
            .filter(|i| !found.contains(i))
            .collect();
        let missing: Vec<String> = missing.into_iter().map(str::to_owned).collect();
        return Err(Error::invalid(
            "message_ids",
            format!(
                "not unobserved messages of {}: {}",
                crate::error::echo_bare(&key.text),
                crate::error::echo_list(&missing, ", ")
            ),
        ));
    }
    if let Some(m) = batch.iter().find(|m| buffered.contains(&m.id)) {
        return Err(Error::invalid(
            "message_ids",
            format!(
                "{} is already in a buffered chunk",
                crate::error::echo(&m.id)
            ),
        ));
    }
    let thread = batch[0].thread_id.clone();
    if batch.iter().any(|m| m.thread_id != thread) {
        return Err(Error::invalid(
            "message_ids",
            "must all belong to one thread",
        ));
    }
    Ok((thread, batch))
}

/// Adds observations to the pool: appended in thread scope; in resource scope inside the
/// thread's `<thread id="…">` section (created at the end when missing).
fn add_observations(pool: &str, scope: Scope, thread: &str, obs: &str) -> String {
    let obs = obs.trim();
    match scope {
        Scope::Thread if pool.trim().is_empty() => obs.to_owned(),
        Scope::Thread => format!("{}\n{obs}", pool.trim_end()),
        Scope::Resource => {
            let open = format!("<thread id=\"{thread}\">");
            if let Some(start) = pool.find(&open) {
                if let Some(end_rel) = pool[start..].find("</thread>") {
                    let end = start + end_rel;
                    return format!("{}\n{obs}\n{}", pool[..end].trim_end(), &pool[end..]);
                }
            }
            let sep = if pool.trim().is_empty() { "" } else { "\n" };
            format!("{}{sep}{open}\n{obs}\n</thread>", pool.trim_end())
        }
    }
}

/// Marks messages observed in the record and advances the cursor when it may: in thread scope
/// to the oldest message still unobserved; in resource scope only when every thread is
/// observed. Observed ids at or after the cursor are kept, older ones pruned.
fn mark_observed(conn: &mut dyn Conn, key: &Key, rec: &mut Record, batch: &[Msg]) -> Result<()> {
    rec.observed_ids.extend(batch.iter().map(|m| m.id.clone()));
    rec.total_tokens_observed += batch.iter().map(|m| m.token_count).sum::<i64>();
    let rest = pending::unobserved(conn, key, Some(rec), false)?;
    let newest = batch.iter().map(|m| m.created_at).max();
    let cursor = match (key.scope, rest.first()) {
        (_, None) => newest.max(rec.last_observed_at),
        (Scope::Thread, Some(oldest)) => Some(oldest.created_at),
        (Scope::Resource, Some(_)) => rec.last_observed_at,
    };
    if cursor != rec.last_observed_at {
        let c = cursor.unwrap_or(i64::MIN);
        let keep: Vec<Value> = rec
            .observed_ids
            .iter()
            .map(|i| Value::Text(i.clone()))
            .collect();
        let placeholders: Vec<String> = (2..keep.len() + 2).map(|i| format!("?{i}")).collect();
        let mut params = vec![Value::Int(c)];
        params.extend(keep);
        let rows = route::query(
            conn,
            &format!(
                "SELECT id FROM mem_messages WHERE created_at >= ?1 AND id IN ({}){{home}}",
                placeholders.join(", ")
            ),
            &params,
        )?;
        rec.observed_ids = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next()?.into_string())
            .collect();
        rec.observed_ids.sort();
        rec.last_observed_at = cursor;
    }
    Ok(())
}

/// Writes current-task, suggested-response and last-observed-at into the thread's metadata.
pub(super) fn update_thread(conn: &mut dyn Conn, thread: &str, p: &Parsed, now: i64) -> Result<()> {
    let meta = route::query_value(
        conn,
        "SELECT CAST(metadata AS TEXT) FROM mem_threads WHERE id = ?1{home}",
        &[thread.into()],
    )?
        .and_then(Value::into_string)
        .unwrap_or_else(|| "{}".into());
    let mut meta: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&meta).unwrap_or_default();
    if let Some(t) = &p.current_task {
        meta.insert("current_task".into(), t.clone().into());
    }
    if let Some(s) = &p.suggested_response {
        meta.insert("suggested_response".into(), s.clone().into());
    }
    meta.insert("last_observed_at".into(), now.into());
    route::execute(
        conn,
        "UPDATE mem_threads SET metadata = CAST(?2 AS @JSON) WHERE id = ?1{home}",
        &[
            thread.into(),
            serde_json::Value::Object(meta).to_string().into(),
        ],
    )?;
    Ok(())
}

/// Shared head of the guarded writes: the key, the record and the time, with the lease
/// checked up front (the final write checks it again atomically).
fn guarded(
    conn: &mut dyn Conn,
    key: &str,
    owner: &str,
    op: &str,
) -> Result<Option<(Key, Record, i64)>> {
    let key = Key::parse(conn, key)?;
    let now = conn.now_ms()?;
    let Some(rec) = record::load(conn, &key)? else {
        return Ok(None);
    };
    if !rec.leased_by(owner, op, now) {
        return Ok(None);
    }
    Ok(Some((key, rec, now)))
}

/// An observer's answer ready to apply: its record (under the caller's lease), the parsed
/// answer, and the batch of messages it covers.
struct Batch<'a> {
    key: Key,
    rec: Record,
    now: i64,
    owner: &'a str,
    op: &'a str,
    parsed: parse::Parsed,
    thread: String,
    batch: Vec<pending::Msg>,
}

/// Checks an answered call and reads its batch; `None` when the lease was lost.
fn open_batch<'a>(
    conn: &mut dyn Conn,
    call: &Answered<'a>,
    message_ids: &str,
) -> Result<Option<Batch<'a>>> {
    let (owner, op, parsed) = call.checked()?;
    let ids = parse_ids(message_ids)?;
    let Some((key, rec, now)) = guarded(conn, call.fenced.key, owner, op)? else {
        return Ok(None);
    };
    let (thread, batch) = batch_of(conn, &key, &rec, &ids)?;
    Ok(Some(Batch {
        key,
        rec,
        now,
        owner,
        op,
        parsed,
        thread,
        batch,
    }))
}

/// Runs `then` on an answered call's batch; `None` when the lease was lost.
fn with_batch(
    conn: &mut dyn Conn,
    call: &Answered,
    message_ids: &str,
    then: fn(&mut dyn Conn, Batch) -> Result<Option<i64>>,
) -> Result<Option<i64>> {
    match open_batch(conn, call, message_ids)? {
        Some(b) => then(conn, b),
        None => Ok(None),
    }
}

/// `om_apply_observation(lookup_key, owner_id, operation_id, answer, message_ids)` → the
/// observation tokens after applying, or `None` when the lease was lost or superseded.
pub(crate) fn apply_observation(
    conn: &mut dyn Conn,
    call: &Answered,
    message_ids: &str,
) -> Result<Option<i64>> {
    with_batch(conn, call, message_ids, apply)
}

/// Applies an observer's answer to its record now.
fn apply(conn: &mut dyn Conn, mut b: Batch) -> Result<Option<i64>> {
    let rec = &mut b.rec;
    rec.active_observations = add_observations(
        &rec.active_observations,
        b.key.scope,
        &b.thread,
        &b.parsed.observations,
    );
    rec.observation_tokens = tokens::count(&rec.active_observations, Encoding::O200kBase);
    rec.origin_type = "observation".into();
    mark_observed(conn, &b.key, rec, &b.batch)?;
    if !record::store_guarded(conn, rec, b.owner, b.op, b.now)? {
        return Ok(None);
    }
    update_thread(conn, &b.thread, &b.parsed, b.now)?;
    Ok(Some(rec.observation_tokens))
}

/// `om_buffer_chunk(lookup_key, owner_id, operation_id, answer, message_ids)` → the number of
/// buffered chunks, or `None` when the lease was lost. The messages stay pending until
/// `om_activate`; no later chunk or observation may cover them again.
pub(crate) fn buffer_chunk(
    conn: &mut dyn Conn,
    call: &Answered,
    message_ids: &str,
) -> Result<Option<i64>> {
    with_batch(conn, call, message_ids, buffer)
}

/// Keeps an observer's answer as a chunk to activate later.
fn buffer(conn: &mut dyn Conn, mut b: Batch) -> Result<Option<i64>> {
    let pending: i64 = pending::unobserved(conn, &b.key, Some(&b.rec), false)?
        .iter()
        .map(|m| m.token_count)
        .sum();
    let rec = &mut b.rec;
    rec.chunks.push(Chunk {
        content: b.parsed.observations,
        current_task: b.parsed.current_task,
        suggested_response: b.parsed.suggested_response,
        thread_id: b.thread,
        message_ids: b.batch.iter().map(|m| m.id.clone()).collect(),
        message_tokens: b.batch.iter().map(|m| m.token_count).sum(),
        created_at: b.now,
    });
    rec.last_buffered_at_tokens = pending;
    if !record::store_guarded(conn, rec, b.owner, b.op, b.now)? {
        return Ok(None);
    }
    Ok(Some(rec.chunks.len() as i64))
}

/// `om_activate(lookup_key, owner_id, operation_id)` → chunks activated (oldest first, each
/// into its thread's section), or `None` when the lease was lost.
pub(crate) fn activate(conn: &mut dyn Conn, call: &Fenced) -> Result<Option<i64>> {
    let (owner, op) = call.checked()?;
    let Some((key, mut rec, now)) = guarded(conn, call.key, owner, op)? else {
        return Ok(None);
    };
    let chunks = std::mem::take(&mut rec.chunks);
    let mut batch = Vec::new();
    let pending = pending::unobserved(conn, &key, Some(&rec), false)?;
    for c in &chunks {
        rec.active_observations = add_observations(
            &rec.active_observations,
            key.scope,
            &c.thread_id,
            &c.content,
        );
        let ids: HashSet<&str> = c.message_ids.iter().map(String::as_str).collect();
        batch.extend(
            pending
                .iter()
                .filter(|m| ids.contains(m.id.as_str()))
                .cloned(),
        );
    }
    if !chunks.is_empty() {
        rec.observation_tokens = tokens::count(&rec.active_observations, Encoding::O200kBase);
        rec.origin_type = "observation".into();
        mark_observed(conn, &key, &mut rec, &batch)?;
    }
    if !record::store_guarded(conn, &rec, owner, op, now)? {
        return Ok(None);
    }
    for c in &chunks {
        let p = Parsed {
            observations: String::new(),
            current_task: c.current_task.clone(),
            suggested_response: c.suggested_response.clone(),
        };
        if threads::resource_of(conn, &c.thread_id).is_ok() {
            update_thread(conn, &c.thread_id, &p, now)?;
        }
    }
    Ok(Some(chunks.len() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_join_their_thread_section() {
        let p = add_observations("", Scope::Resource, "a", "* one");
        assert_eq!(p, "<thread id=\"a\">\n* one\n</thread>");
        let p = add_observations(&p, Scope::Resource, "b", "* two");
        let p = add_observations(&p, Scope::Resource, "a", "* three");
        assert_eq!(
            p,
            "<thread id=\"a\">\n* one\n* three\n</thread>\n<thread id=\"b\">\n* two\n</thread>"
        );
        assert_eq!(
            add_observations("* x", Scope::Thread, "t", "* y"),
            "* x\n* y"
        );
    }

    #[test]
    fn prompt_groups_by_date() {
        let m = |t: i64, role: &str, c: &str| Msg {
            id: "i".into(),
            thread_id: "t".into(),
            role: role.into(),
            content: c.into(),
            created_at: t,
            token_count: 1,
        };
        let p = observer_prompt(
            "",
            &[
                m(1_764_858_600_000, "user", "hi"),
                m(1_764_945_000_000, "assistant", "yo"),
            ],
        );
        assert!(p.contains("None yet."));
        assert!(p.contains("Date: Dec 4, 2025\n[14:30] User: hi\n"));
        assert!(p.contains("Date: Dec 5, 2025\n[14:30] Assistant: yo\n"));
    }
}
