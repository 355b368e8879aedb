//! Reflection: the reflector condenses the observations into the next generation.
//!
//! Rules: reflect only when no message is unobserved; keep the most recent raw
//! observation lines beside the reflection; carry
//! every buffered chunk over to the new generation, including chunks buffered while the
//! reflector ran, so none is ever stranded; keep the old generation as inactive history.

use super::lease::{Answered, Fenced};
use super::parse;
use super::pending;
use super::prompts;
use super::record::{self, Key};
use crate::cluster::route;
use crate::tokens::{self, Encoding};
use crate::{ids, Conn, Error, Result, Value};
use serde_json::json;

/// `om_reflector_input(lookup_key [, options])` → JSON `{system, prompt, observationTokens,
/// compressionLevel}`. Option `compression_level` 0–2 adds the seed's compression guidance
/// for retries whose output was too large.
pub(crate) fn reflector_input(conn: &mut dyn Conn, key: &str, options: Option<&str>) -> Result<String> {
    let (key, o, rec) = record::prompt_input(conn, key, options, &["compression_level"])?;
    let level = o.int("compression_level", 0, 0, 2)?;
    let observations = rec.as_ref().map_or("", |r| r.active_observations.as_str());
    Ok(json!({
        "lookupKey": key.text,
        "system": prompts::reflector_system(level as usize),
        "prompt": format!(
            "Existing observations:\n{observations}\n\nPlease reflect and consolidate these observations into a more compact form."
        ),
        "observationTokens": rec.as_ref().map_or(0, |r| r.observation_tokens),
        "compressionLevel": level,
    })
    .to_string())
}

/// The last `n` non-empty lines of the observations, without thread tags.
fn recent_lines(observations: &str, n: usize) -> String {
    let lines: Vec<&str> = observations
        .lines()
        .filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("<thread") && !t.starts_with("</thread")
        })
        .collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Refuses a reflection that is still at or over the reflection threshold, unless it was made
/// at the last compression level (retry with progressive compression;
/// if still too large, keep the partial reflection).
fn check_size(reflection: &str, threshold: i64, level: i64) -> Result<()> {
    let tokens = tokens::count(reflection, Encoding::O200kBase);
    if tokens >= threshold && level < MAX_COMPRESSION_LEVEL {
        return Err(Error::invalid(
            "answer",
            format!(
                "the reflection has {tokens} tokens, not below the reflection threshold of {threshold}: \
                 retry with om_reflector_input at compression_level {} (nothing was applied)",
                level + 1
            ),
        ));
    }
    Ok(())
}

/// The last compression level (0, 1, 2).
pub(crate) const MAX_COMPRESSION_LEVEL: i64 = 2;

fn compression_level(level: Option<i64>) -> Result<i64> {
    let level = level.unwrap_or(0);
    if !(0..=MAX_COMPRESSION_LEVEL).contains(&level) {
        return Err(Error::invalid(
            "compression_level",
            format!("must be between 0 and {MAX_COMPRESSION_LEVEL}"),
        ));
    }
    Ok(level)
}

/// The guarded head of every reflection write: the record under a live lease, refused while
/// messages wait unobserved outside a buffered chunk.
fn reflectable(
    conn: &mut dyn Conn,
    key: &Key,
    owner: &str,
    op: &str,
    now: i64,
) -> Result<Option<record::Record>> {
    let Some(old) = record::load(conn, key)? else {
        return Ok(None);
    };
    if !old.leased_by(owner, op, now) {
        return Ok(None);
    }
    let waiting = pending::unobserved(conn, key, Some(&old), false)?;
    let buffered = pending::buffered_ids(Some(&old));
    let unbuffered = waiting.iter().filter(|m| !buffered.contains(&m.id)).count();
    if unbuffered > 0 {
        return Err(Error::invalid(
            "lookup_key",
            format!("reflection needs every message observed first: {unbuffered} unobserved (observe them, then reflect)"),
        ));
    }
    Ok(Some(old))
}

/// `om_apply_reflection(lookup_key, owner_id, operation_id, answer [, compression_level])` →
/// the new generation, or `None` when the lease was lost. Refused while messages are
/// unobserved, and while the reflection is still over the threshold below the last level.
pub(crate) fn apply_reflection(
    conn: &mut dyn Conn,
    call: &Answered,
    level: Option<i64>,
) -> Result<Option<i64>> {
    let (owner, op, parsed) = call.checked()?;
    let level = compression_level(level)?;
    let key = Key::parse(conn, call.fenced.key)?;
    let now = conn.now_ms()?;
    let Some(old) = reflectable(conn, &key, owner, op, now)? else {
        return Ok(None);
    };
    let cfg = old.config()?;
    check_size(&parsed.observations, cfg.reflection_threshold, level)?;
    let recent = recent_lines(&old.active_observations, cfg.keep_recent_lines as usize);
    let body = if recent.is_empty() || key.scope == record::Scope::Resource {
        parsed.observations.clone()
    } else {
        format!(
            "{}\n\nRecent observations (raw):\n{recent}",
            parsed.observations
        )
    };
    new_generation(conn, &key, &old, owner, op, now, &body, parsed)
}

/// `om_buffer_reflection(lookup_key, owner_id, operation_id, answer [, compression_level])` →
/// whether it was kept (`None` when the lease was lost): a reflection of the current
/// observations, made in the background before the threshold, kept with the observations it
/// condensed until `om_activate_reflection` swaps it in.
pub(crate) fn buffer_reflection(
    conn: &mut dyn Conn,
    call: &Answered,
    level: Option<i64>,
) -> Result<Option<bool>> {
    let (owner, op, parsed) = call.checked()?;
    let level = compression_level(level)?;
    let key = Key::parse(conn, call.fenced.key)?;
    let now = conn.now_ms()?;
    let Some(old) = record::load(conn, &key)? else {
        return Ok(None);
    };
    if !old.leased_by(owner, op, now) {
        return Ok(None);
    }
    let cfg = old.config()?;
    check_size(&parsed.observations, cfg.reflection_threshold, level)?;
    let n = route::execute(
        conn,
        "UPDATE mem_om_records SET buffered_reflection = ?2, buffered_reflection_base = active_observations, \
           is_buffering_reflection = 0, updated_at = ?5 \
         WHERE seq = ?1 AND is_active = 1 AND lock_owner_id = ?3 AND lock_operation_id = ?4 \
           AND lock_expires_at > ?5{home}",
        &[
            Value::Int(old.seq),
            parsed.observations.as_str().into(),
            owner.into(),
            op.into(),
            Value::Int(now),
        ],
    )?;
    Ok((n == 1).then_some(true))
}

/// `om_activate_reflection(lookup_key, owner_id, operation_id)` → the new generation, or
/// `None` when the lease was lost: the buffered reflection becomes the next generation, with
/// every observation line added since it was made kept beside it. Refused when none is
/// buffered, and while messages are unobserved.
pub(crate) fn activate_reflection(conn: &mut dyn Conn, call: &Fenced) -> Result<Option<i64>> {
    let (owner, op) = call.checked()?;
    let key = Key::parse(conn, call.key)?;
    let now = conn.now_ms()?;
    let Some(old) = reflectable(conn, &key, owner, op, now)? else {
        return Ok(None);
    };
    let Some(reflection) = old.buffered_reflection.clone() else {
        return Err(Error::invalid(
            "lookup_key",
            "has no buffered reflection (om_buffer_reflection makes one)",
        ));
    };
    let since = lines_added(
        old.buffered_reflection_base.as_deref().unwrap_or(""),
        &old.active_observations,
    );
    let body = if since.is_empty() {
        reflection.clone()
    } else {
        format!("{reflection}\n\nObserved since the reflection (raw):\n{since}")
    };
    let parsed = parse::Parsed {
        observations: reflection,
        current_task: None,
        suggested_response: None,
    };
    new_generation(conn, &key, &old, owner, op, now, &body, parsed)
}

/// The observation lines of `now` that `base` did not have (as a multiset, in `now`'s order),
/// without thread tags.
fn lines_added(base: &str, now: &str) -> String {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for l in base.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *seen.entry(l).or_default() += 1;
    }
    let mut out = Vec::new();
    for l in now.lines().map(str::trim) {
        if l.is_empty() || l.starts_with("<thread") || l.starts_with("</thread") {
            continue;
        }
        match seen.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(l),
        }
    }
    out.join("\n")
}

/// Retires the old generation (with the lease check in the same statement) and inserts the
/// next one holding `body`, the same lease and every chunk the old one holds now; the buffered
/// reflection, used or not, does not carry over.
#[allow(clippy::too_many_arguments)]
fn new_generation(
    conn: &mut dyn Conn,
    key: &Key,
    old: &record::Record,
    owner: &str,
    op: &str,
    now: i64,
    body: &str,
    parsed: parse::Parsed,
) -> Result<Option<i64>> {
    let retired = route::execute(
        conn,
        "UPDATE mem_om_records SET is_active = 0, updated_at = ?4 \
         WHERE seq = ?1 AND is_active = 1 AND lock_owner_id = ?2 AND lock_operation_id = ?3 \
           AND lock_expires_at > ?4{home}",
        &[Value::Int(old.seq), owner.into(), op.into(), Value::Int(now)],
    )?;
    if retired != 1 {
        return Ok(None);
    }
    let generation = old.generation + 1;
    // The new generation carries the old one's bookkeeping: read, then written (one
    // statement each; Citus runs no INSERT … SELECT inside a call handed over to a worker).
    let carried = route::query(
        conn,
        "SELECT lookup_key, scope, thread_id, resource_id, CAST(buffered_chunks AS TEXT), \
           last_observed_at, CAST(observed_message_ids AS TEXT), total_tokens_observed, \
           last_buffered_at_tokens, CAST(config AS TEXT), lock_owner_id, lock_operation_id, \
           lock_expires_at, last_heartbeat_at \
         FROM mem_om_records WHERE seq = ?1{home}",
        &[Value::Int(old.seq)],
    )?
    .into_iter()
    .next()
    .ok_or_else(|| Error::internal("the retired generation vanished"))?;
    let mut params: Vec<Value> = vec![
        ids::new_id().into(),
        Value::Int(generation),
        body.into(),
        Value::Int(tokens::count(body, Encoding::O200kBase)),
        Value::Int(now),
    ];
    params.extend(carried);
    conn.execute(
        "INSERT INTO mem_om_records (id, lookup_key, scope, thread_id, resource_id, generation, is_active, \
           origin_type, active_observations, observation_tokens, buffered_chunks, last_observed_at, \
           observed_message_ids, last_reflection_at, total_tokens_observed, last_buffered_at_tokens, config, \
           lock_owner_id, lock_operation_id, lock_expires_at, last_heartbeat_at, created_at, updated_at) \
         VALUES (?1, ?6, ?7, ?8, ?9, ?2, 1, 'reflection', ?3, ?4, CAST(?10 AS @JSON), CAST(?11 AS BIGINT), \
           CAST(?12 AS @JSON), ?5, ?13, ?14, CAST(?15 AS @JSON), ?16, ?17, CAST(?18 AS BIGINT), \
           CAST(?19 AS BIGINT), ?5, ?5)",
        &params,
    )?;
    if let Some(thread) = &key.thread_id {
        let p = parse::Parsed {
            observations: String::new(),
            ..parsed
        };
        super::observe::update_thread(conn, thread, &p, now)?;
    }
    Ok(Some(generation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_added_since_a_base_are_found_once() {
        let base = "<thread id=\"a\">\n* one\n* two\n</thread>";
        let now = "<thread id=\"a\">\n* one\n* new\n* two\n* one\n</thread>";
        assert_eq!(lines_added(base, now), "* new\n* one");
        assert_eq!(lines_added("", "* x\n\n* y"), "* x\n* y");
        assert_eq!(lines_added("* x", "* x"), "");
    }

    #[test]
    fn a_reflection_over_the_threshold_is_sent_back_with_the_next_level() {
        let big = "* line of observation text\n".repeat(200);
        let e = check_size(&big, 100, 0).unwrap_err().to_string();
        assert!(e.contains("at compression_level 1"), "{e}");
        assert!(check_size(&big, 100, 1)
            .unwrap_err()
            .to_string()
            .contains("level 2"));
        check_size(&big, 100, MAX_COMPRESSION_LEVEL).unwrap();
        check_size("* short", 100, 0).unwrap();
    }
}
