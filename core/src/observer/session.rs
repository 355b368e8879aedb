//! An observed session: its resource, its type (which decides how many memories it may
//! promote and from which signals), an optional thread, and the bound on its scratchpad.

use crate::cluster::route;
use crate::ids;
use crate::json_opts::Opts;
use crate::{Conn, Error, Result, Value};

/// The session types, each a promotion gate (`observer::promote`).
pub(crate) const SESSION_TYPES: &[&str] = &[
    "build", "insights", "roadmap", "terminal", "changelog", "spec", "pr_review",
];

/// Scratchpad rows a session keeps by default before the lowest-value go.
pub(crate) const DEFAULT_MAX_ROWS: i64 = 5000;

const START_OPTIONS: &[&str] = &["id", "session_type", "thread_id", "max_scratch_rows"];

/// `mem_session_start(resource_id [, options])` → the session's id. Options: `id` (the
/// caller's own, such as an agent's session id; starting it again with the same resource
/// and type returns it), `session_type` (default `build`), `thread_id` (a thread of the same
/// resource), `max_scratch_rows` (default 5,000, at least 100).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn start(conn: &mut dyn Conn, resource_id: &str, options: Option<&str>) -> Result<String> {
    ids::check_id("resource_id", resource_id)?;
    let o = Opts::parse("options", options, START_OPTIONS)?;
    let id = match o.opt_str("id")? {
        Some(id) => {
            ids::check_id("options.id", &id)?;
            id
        }
        None => ids::new_id(),
    };
    let ty = o.opt_str("session_type")?.unwrap_or_else(|| "build".into());
    if !SESSION_TYPES.contains(&ty.as_str()) {
        return Err(Error::invalid(
            "options.session_type",
            format!("must be one of {}", SESSION_TYPES.join(", ")),
        ));
    }
    let max_rows = o.int("max_scratch_rows", DEFAULT_MAX_ROWS, 100, 10_000_000)?;
    let thread = o.opt_str("thread_id")?;
    if let Some(t) = &thread {
        let owner = crate::threads::resource_by_id(conn, t)?;
        if owner.as_deref() != Some(resource_id) {
            return Err(Error::invalid(
                "options.thread_id",
                format!("no thread {} in resource {}", crate::error::echo(t), crate::error::echo(resource_id)),
            ));
        }
    }
    let now = conn.now_ms()?;
    let inserted = route::query(
        conn,
        "INSERT INTO mem_observer_sessions (id, resource_id, session_type, thread_id, \
           max_scratch_rows, started_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) \
         ON CONFLICT (id{home_column}) DO NOTHING RETURNING id",
        &[
            id.as_str().into(),
            resource_id.into(),
            ty.as_str().into(),
            thread.clone().into(),
            Value::Int(max_rows),
            Value::Int(now),
        ],
    )?;
    if inserted.is_empty() {
        let same = conn.query_value(
            "SELECT 1 FROM mem_observer_sessions WHERE id = ?1 AND resource_id = ?2 \
               AND session_type = ?3",
            &[id.as_str().into(), resource_id.into(), ty.as_str().into()],
        )?;
        if same.is_none() {
            return Err(Error::invalid(
                "options.id",
                format!(
                    "session {} exists with another resource or type",
                    crate::error::echo(&id)
                ),
            ));
        }
    }
    Ok(id)
}
