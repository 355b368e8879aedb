//! `om_status`: what is pending and the one action due now.

use super::pending;
use super::record::{self, Key, Record};
use crate::json_opts::Opts;
use crate::{Conn, Result};
use serde_json::{json, Value as Json};

/// The action due, in order of precedence: activate_reflection (a buffered reflection is ready
/// and the reflection threshold is reached, nothing unobserved), reflect (observations over
/// the reflection threshold and nothing unobserved, so no message is left out of the
/// reflection), activate (buffered chunks and pending tokens past the activation ratio),
/// block (pending past block_after × threshold: observe before the next call), observe
/// (past the threshold, or a reflection waits on unobserved messages),
/// buffer (another `buffer_tokens` not yet covered by a chunk), buffer_reflection (the
/// observations passed `reflection_buffer_at` of the reflection threshold and no reflection
/// is buffered yet: reflect in the background), none.
pub(crate) fn action(
    rec: Option<&Record>,
    pending: i64,
    buffered: i64,
    unobserved: usize,
) -> Result<&'static str> {
    let cfg = match rec {
        Some(r) => r.config()?,
        None => Default::default(),
    };
    let obs_tokens = rec.map_or(0, |r| r.observation_tokens);
    let has_chunks = rec.is_some_and(|r| !r.chunks.is_empty());
    let reflection_ready = rec.is_some_and(|r| r.buffered_reflection.is_some());
    let t = cfg.observation_threshold as f64;
    let p = pending as f64;
    let reflection_early =
        obs_tokens as f64 >= cfg.reflection_buffer_at * cfg.reflection_threshold as f64;
    Ok(
        if obs_tokens >= cfg.reflection_threshold && unobserved == 0 && reflection_ready {
            "activate_reflection"
        } else if obs_tokens >= cfg.reflection_threshold && unobserved == 0 {
            "reflect"
        } else if has_chunks && p >= cfg.buffer_activation * t {
            "activate"
        } else if p >= cfg.block_after * t {
            "block"
        } else if p >= t || (obs_tokens >= cfg.reflection_threshold && unobserved > 0) {
            "observe"
        } else if pending - buffered >= cfg.buffer_tokens {
            "buffer"
        } else if reflection_early && !reflection_ready && obs_tokens > 0 {
            "buffer_reflection"
        } else {
            "none"
        },
    )
}

/// `om_status(thread_id [, options])`. Index range sums; no message row is read.
pub(crate) fn status(conn: &mut dyn Conn, thread_id: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, &["scope"])?;
    let key = Key::for_thread(conn, thread_id, o.opt_str("scope")?.as_deref())?;
    let rec = record::load_bookkeeping(conn, &key)?;
    let (count, pending) = pending::totals(conn, &key, rec.as_ref())?;
    // A chunk's messages stay unobserved until it is activated, so its tokens are pending.
    let buffered: i64 = rec
        .as_ref()
        .map_or(0, |r| r.chunks.iter().map(|c| c.message_tokens).sum());
    let action = action(rec.as_ref(), pending, buffered, count as usize)?;
    let cfg = match &rec {
        Some(r) => r.config()?,
        None => Default::default(),
    };
    let now = conn.now_ms()?;
    let live = rec
        .as_ref()
        .and_then(|r| r.lock_expires_at)
        .is_some_and(|t| t > now);
    let lease = match &rec {
        Some(r) if live => json!({"ownerId": r.lock_owner_id, "expiresAt": r.lock_expires_at}),
        _ => Json::Null,
    };
    // Flags of an owner whose lease expired are stale: report them cleared.
    let flag = |f: fn(&Record) -> bool| live && rec.as_ref().is_some_and(f);
    let out = json!({
        "lookupKey": key.text,
        "scope": key.scope.as_str(),
        "generation": rec.as_ref().map_or(0, |r| r.generation),
        "action": action,
        "pendingTokens": pending,
        "pendingMessages": count,
        "bufferedChunks": rec.as_ref().map_or(0, |r| r.chunks.len()),
        "bufferedTokens": buffered,
        "unbufferedTokens": pending - buffered,
        "observationTokens": rec.as_ref().map_or(0, |r| r.observation_tokens),
        "lastObservedAt": rec.as_ref().and_then(|r| r.last_observed_at),
        "thresholds": cfg.to_json(),
        "lease": lease,
        "flags": {
            "isObserving": flag(|r| r.is_observing),
            "isReflecting": flag(|r| r.is_reflecting),
            "isBufferingObservation": flag(|r| r.is_buffering_observation),
            "isBufferingReflection": flag(|r| r.is_buffering_reflection),
        },
        "bufferedReflection": rec.as_ref().is_some_and(|r| r.buffered_reflection.is_some()),
    });
    Ok(out.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_give_the_documented_actions() {
        assert_eq!(action(None, 0, 0, 0).unwrap(), "none");
        assert_eq!(action(None, 5_999, 0, 3).unwrap(), "none");
        assert_eq!(action(None, 6_000, 0, 3).unwrap(), "buffer");
        assert_eq!(action(None, 12_000, 6_000, 3).unwrap(), "buffer");
        assert_eq!(action(None, 11_000, 6_000, 3).unwrap(), "none");
        assert_eq!(action(None, 30_000, 29_000, 3).unwrap(), "observe");
        assert_eq!(action(None, 36_000, 0, 3).unwrap(), "block");
    }
}
