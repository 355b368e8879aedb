//! Observational memory. The LLM stays in the client: the
//! database decides what is due ([`status`]), builds exactly what to send
//! ([`observe::observer_input`], [`reflect::reflector_input`]), takes the answer back
//! atomically under a fenced lease ([`lease`]), and assembles the next call's context
//! ([`context`]).

pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod lease;
pub(crate) mod observe;
internal!(parse);
pub(crate) mod pending;
pub(crate) mod prompts;
pub(crate) mod record;
pub(crate) mod reflect;
pub(crate) mod search;
pub(crate) mod status;

use crate::cluster::route;
use crate::json_opts::Opts;
use crate::{Conn, Result};

/// `om_configure(lookup_key, config)` → the record's thresholds after the change (JSON).
/// Keys: see [`config::KEYS`]; unknown keys are refused.
pub(crate) fn configure(conn: &mut dyn Conn, key: &str, config_json: Option<&str>) -> Result<String> {
    let key = record::Key::parse(conn, key)?;
    let o = Opts::parse("config", config_json, config::KEYS)?;
    let cfg = config::Config::default().with_overrides(&o)?;
    let now = conn.now_ms()?;
    let rec = record::load_or_create(conn, &key, now)?;
    let text = crate::json_opts::object_text("config", config_json)?;
    route::execute(
        conn,
        "UPDATE mem_om_records SET config = CAST(?2 AS @JSON), updated_at = ?3 WHERE seq = ?1{home}",
        &[
            crate::Value::Int(rec.seq),
            text.into(),
            crate::Value::Int(now),
        ],
    )?;
    Ok(cfg.to_json().to_string())
}
