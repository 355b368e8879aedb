//! `graph_configure`: a resource's closure bounds, set by the client.

use super::{bound, query};
use crate::json_opts::Opts;
use crate::{Conn, Result, Value};

/// `graph_configure(resource_id [, options])` → `graph_stats` JSON: sets the resource's
/// `max_depth` (1–6) and `hub_in_degree` (1–10⁹); the options left out keep their values. A
/// change rebuilds the resource's closure (the settings table's trigger), in this call.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn configure(conn: &mut dyn Conn, r: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, &["max_depth", "hub_in_degree"])?;
    let (depth, hub) = bound::settings(conn, r)?;
    let depth = o.int("max_depth", depth as i64, 1, bound::MAX_DEPTH as i64)?;
    let hub = o.int("hub_in_degree", hub, 1, bound::MAX_HUB_IN_DEGREE)?;
    conn.execute(
        "INSERT INTO mem_graph_settings (resource_id, max_depth, hub_in_degree) \
         VALUES (?1, ?2, ?3) ON CONFLICT (resource_id) DO UPDATE \
         SET max_depth = excluded.max_depth, hub_in_degree = excluded.hub_in_degree, \
           updated_at = excluded.updated_at \
         WHERE mem_graph_settings.max_depth <> excluded.max_depth \
           OR mem_graph_settings.hub_in_degree <> excluded.hub_in_degree",
        &[r.into(), Value::Int(depth), Value::Int(hub)],
    )?;
    query::stats(conn, r)
}
