//! The observer's functions as the adapters call them (inside a call, see `super::as_call`).
#![allow(dead_code)]

use agentmem_core::observer::{observe, promote, session};
use agentmem_core::{Conn, Result};

pub fn start(db: &mut dyn Conn, resource: &str, options: Option<&str>) -> Result<String> {
    super::as_call(|| session::start(db, resource, options))
}

pub fn observe(db: &mut dyn Conn, id: &str, events: &str) -> Result<String> {
    super::as_call(|| observe::observe(db, id, events))
}

pub fn checkpoint(db: &mut dyn Conn, id: &str) -> Result<String> {
    super::as_call(|| observe::checkpoint(db, id))
}

pub fn finalize(
    db: &mut dyn Conn,
    id: &str,
    outcome: &str,
    options: Option<&str>,
) -> Result<String> {
    super::as_call(|| promote::finalize(db, id, outcome, options))
}

/// A session of `resource` fed `events` (a JSON array) and finalized with `outcome`: the
/// finalize's answer.
pub fn session(
    db: &mut dyn Conn,
    resource: &str,
    options: Option<&str>,
    events: &str,
    outcome: &str,
) -> Result<serde_json::Value> {
    let id = start(db, resource, options)?;
    observe(db, &id, events)?;
    Ok(serde_json::from_str(&finalize(db, &id, outcome, None)?).expect("finalize answers JSON"))
}
