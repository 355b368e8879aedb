//! `mem_observe`: events into the session's scratchpad; `mem_session_checkpoint`: the
//! scratchpad into its tables.
//!
//! A call reads the session's row once (locked, so two writers of one session serialise on
//! it instead of losing counts), applies its events to the scratchpad in memory and appends
//! them to the session's log: a batch of events pays for the row once, and an event costs its
//! log row and its analytics. The row and the tables catch up at each checkpoint (every few
//! hundred events, at finalize, or when asked), writing each changed row once however many
//! events changed it (`observer::store`).

use super::event::{self, Event};
use super::store;
use crate::json_input;
use crate::{Conn, Error, Result};
use serde_json::{json, Value as Json};

/// Events one call takes.
pub(crate) const MAX_BATCH: usize = 10_000;

/// `mem_observe(session_id, event)` → JSON `{events, step, early, cut}`: `event` is one event
/// object or an array of them (the batch form). `early` lists the in-session triggers that
/// fired for the first time; `cut` the fields cut to their limit.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn observe(conn: &mut dyn Conn, session_id: &str, event: &str) -> Result<String> {
    let v = json_input::parse("event", event)?;
    let events: Vec<Event> = match &v {
        Json::Array(items) => {
            if items.len() > MAX_BATCH {
                return Err(Error::invalid("event", format!("takes at most {MAX_BATCH} events")));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, e)| event::read(&format!("event[{i}]"), e))
                .collect::<Result<_>>()?
        }
        _ => vec![event::read("event", &v)?],
    };
    let mut s = store::open(conn, session_id)?;
    let (mut fired, mut cut) = (Vec::new(), Vec::new());
    for e in &events {
        cut.extend(e.cut.iter().cloned());
        s.pad.apply(e, &mut fired);
    }
    let answer = json!({
        "events": s.pad.state.events,
        "step": s.pad.state.step,
        "early": fired,
        "cut": cut,
    });
    store::close(conn, s, &events)?;
    Ok(answer.to_string())
}

/// `mem_session_checkpoint(session_id)` → JSON `{events, checkpointed, scratch_rows}`: brings
/// the open session's tables up to every event it took (`checkpointed`: the events they had
/// not counted yet), for a reader that wants them current before the session ends.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn checkpoint(conn: &mut dyn Conn, session_id: &str) -> Result<String> {
    let (state, checkpointed) = store::checkpoint_now(conn, session_id)?;
    Ok(json!({
        "events": state.events,
        "checkpointed": checkpointed,
        "scratch_rows": state.scratch_rows,
    })
    .to_string())
}
