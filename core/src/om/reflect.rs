//! Reflection: the reflector condenses the observations into the next generation.
//!
//! Rules: reflect only when no message is unobserved (seed 001); keep the most recent raw
//! observation lines beside the reflection (seed 000 "Sliding Window, Not Hard Cut"); carry
//! every buffered chunk over to the new generation, including chunks buffered while the
//! reflector ran, so none is ever stranded; keep the old generation as inactive history.

use super::parse;
use super::pending;
use super::prompts;
use super::record::{self, Key};
use crate::json_opts::Opts;
use crate::tokens::{self, Encoding};
use crate::{ids, Conn, Error, Result, Value};
use serde_json::json;

/// `om_reflector_input(lookup_key [, options])` → JSON `{system, prompt, observationTokens,
/// compressionLevel}`. Option `compression_level` 0–2 adds the seed's compression guidance
/// for retries whose output was too large.
pub fn reflector_input(
    conn: &mut dyn Conn,
    key: Option<&str>,
    options: Option<&str>,
) -> Result<String> {
    let key = Key::parse(conn, key)?;
    let o = Opts::parse("options", options, &["compression_level"])?;
    let level = o.int("compression_level", 0, 0, 2)?;
    let rec = record::load(conn, &key)?;
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

/// `om_apply_reflection(lookup_key, owner_id, operation_id, answer)` → the new generation, or
/// `None` when the lease was lost. Refused while messages are unobserved.
pub fn apply_reflection(
    conn: &mut dyn Conn,
    key: Option<&str>,
    owner_id: Option<&str>,
    op: Option<&str>,
    answer: Option<&str>,
) -> Result<Option<i64>> {
    let (owner, op) = super::lease::guard(owner_id, op)?;
    let parsed = parse::parse("answer", answer.unwrap_or(""))?;
    let key = Key::parse(conn, key)?;
    let now = conn.now_ms()?;
    let Some(old) = record::load(conn, &key)? else {
        return Ok(None);
    };
    if !old.leased_by(owner, op, now) {
        return Ok(None);
    }
    let waiting = pending::unobserved(conn, &key, Some(&old), false)?;
    let unbuffered = waiting
        .iter()
        .filter(|m| !pending::buffered_ids(Some(&old)).contains(&m.id))
        .count();
    if unbuffered > 0 {
        return Err(Error::invalid(
            "lookup_key",
            format!("reflection needs every message observed first: {unbuffered} unobserved (observe them, then reflect)"),
        ));
    }
    let cfg = old.config()?;
    let recent = recent_lines(&old.active_observations, cfg.keep_recent_lines as usize);
    let body = if recent.is_empty() || key.scope == record::Scope::Resource {
        parsed.observations.clone()
    } else {
        format!(
            "{}\n\nRecent observations (raw):\n{recent}",
            parsed.observations
        )
    };
    // Retire the old generation (with the lease check in the same statement), then insert
    // the new one holding the same lease and every chunk the old one holds now.
    let retired = conn.execute(
        "UPDATE mem_om_records SET is_active = 0, updated_at = ?4 \
         WHERE seq = ?1 AND is_active = 1 AND lock_owner_id = ?2 AND lock_operation_id = ?3 AND lock_expires_at > ?4",
        &[Value::Int(old.seq), owner.into(), op.into(), Value::Int(now)],
    )?;
    if retired != 1 {
        return Ok(None);
    }
    let generation = old.generation + 1;
    conn.execute(
        "INSERT INTO mem_om_records (id, lookup_key, scope, thread_id, resource_id, generation, is_active, origin_type, \
           active_observations, observation_tokens, buffered_chunks, last_observed_at, observed_message_ids, \
           last_reflection_at, total_tokens_observed, last_buffered_at_tokens, config, lock_owner_id, \
           lock_operation_id, lock_expires_at, last_heartbeat_at, created_at, updated_at) \
         SELECT ?1, lookup_key, scope, thread_id, resource_id, ?2, 1, 'reflection', ?3, ?4, buffered_chunks, \
           last_observed_at, observed_message_ids, ?5, total_tokens_observed, last_buffered_at_tokens, config, \
           lock_owner_id, lock_operation_id, lock_expires_at, last_heartbeat_at, ?5, ?5 \
         FROM mem_om_records WHERE seq = ?6",
        &[
            ids::new_id().into(),
            Value::Int(generation),
            body.as_str().into(),
            Value::Int(tokens::count(&body, Encoding::O200kBase)),
            Value::Int(now),
            Value::Int(old.seq),
        ],
    )?;
    let new_seq = conn
        .query_value(
            "SELECT seq FROM mem_om_records WHERE lookup_key = ?1 AND is_active = 1",
            &[key.text.as_str().into()],
        )?
        .and_then(|v| v.as_i64())
        .ok_or_else(|| Error::internal("reflection wrote no active generation"))?;
    super::search::unindex(conn, old.seq)?;
    super::search::index(conn, new_seq, &body, now)?;
    if let Some(thread) = &key.thread_id {
        let p = parse::Parsed {
            observations: String::new(),
            ..parsed
        };
        super::observe::update_thread(conn, thread, &p, now)?;
    }
    Ok(Some(generation))
}
