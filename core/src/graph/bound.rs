//! How far the closure reaches in a resource: its depth, and its hubs.
//!
//! A node with more present incoming edges than the resource's `hub_in_degree` is a *hub*
//! (a prelude, a config module, a logger everything imports). Closure paths may start or end
//! at a hub but never pass through one, so a hub adds rows linear in its degree (its
//! ancestors reach it, it reaches its descendants) instead of their product. Walks follow the
//! same rule, so every answer — from the closure or from a walk — is the same.

use crate::cluster::route;
use crate::db::row::Fields;
use crate::{Conn, Result, Value};
use std::collections::HashSet;

/// The depth a resource's closure has unless its settings say otherwise.
pub(crate) const DEFAULT_DEPTH: usize = 4;

/// The deepest closure a resource may ask for.
pub(crate) const MAX_DEPTH: usize = 6;

/// The in-degree above which a node is a hub unless its resource's settings say otherwise.
pub(crate) const DEFAULT_HUB_IN_DEGREE: i64 = 1000;

/// The largest `hub_in_degree` a resource may set (no hubs, in practice).
pub(crate) const MAX_HUB_IN_DEGREE: i64 = 1_000_000_000;

/// A resource's closure bounds and its current hubs.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub depth: usize,
    pub hub_in_degree: i64,
    pub hubs: HashSet<String>,
}

impl Bound {
    /// The settings (or the defaults) of `resource`, with its hubs as stored.
    pub(crate) fn of(conn: &mut dyn Conn, resource: &str) -> Result<Bound> {
        let (depth, hub_in_degree) = settings(conn, resource)?;
        Ok(Bound {
            depth,
            hub_in_degree,
            hubs: hubs(conn, resource)?,
        })
    }

    /// Whether a path may pass through `node` (not start or end there only).
    pub(crate) fn passes(&self, node: &str) -> bool {
        !self.hubs.contains(node)
    }
}

/// The hubs of `resource` as stored.
pub(crate) fn hubs(conn: &mut dyn Conn, resource: &str) -> Result<HashSet<String>> {
    Ok(conn
        .query(
            "SELECT node_id FROM mem_graph_hubs WHERE resource_id = ?1",
            &[resource.into()],
        )?
        .into_iter()
        .filter_map(|r| Fields::new(r).text())
        .collect())
}

/// `(max_depth, hub_in_degree)` of `resource`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn settings(conn: &mut dyn Conn, resource: &str) -> Result<(usize, i64)> {
    let row = conn
        .query(
            "SELECT max_depth, hub_in_degree FROM mem_graph_settings WHERE resource_id = ?1",
            &[resource.into()],
        )?
        .into_iter()
        .next();
    Ok(match row {
        Some(r) => {
            let mut f = Fields::new(r);
            let depth = f.int().map_or(DEFAULT_DEPTH, |d| d as usize);
            (depth, f.int().unwrap_or(DEFAULT_HUB_IN_DEGREE))
        }
        None => (DEFAULT_DEPTH, DEFAULT_HUB_IN_DEGREE),
    })
}

/// Whether `node` has more than `limit` present incoming edges; counts at most `limit + 1`
/// of them (one index range).
pub(crate) fn above(conn: &mut dyn Conn, node: &str, limit: i64) -> Result<bool> {
    let n = route::query_value(
        conn,
        "SELECT count(*) FROM (SELECT 1 FROM mem_graph_edges WHERE to_id = ?1 \
         AND stale_at IS NULL AND invalid_at IS NULL{home} LIMIT ?2) AS t",
        &[node.into(), Value::Int(limit + 1)],
    )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    Ok(n > limit)
}

/// Records (or clears) `node` as a hub of `resource`.
pub(crate) fn set_hub(conn: &mut dyn Conn, resource: &str, node: &str, hub: bool) -> Result<()> {
    if hub {
        route::execute(
            conn,
            "INSERT INTO mem_graph_hubs (node_id, resource_id) VALUES (?1, ?2) \
             ON CONFLICT (node_id{home_column}) DO NOTHING",
            &[node.into(), resource.into()],
        )?;
    } else {
        conn.execute(
            "DELETE FROM mem_graph_hubs WHERE node_id = ?1 AND resource_id = ?2",
            &[node.into(), resource.into()],
        )?;
    }
    Ok(())
}

/// Recomputes the hubs of `resource` from its edges (a load, a change of settings).
pub(crate) fn recount(conn: &mut dyn Conn, resource: &str, hub_in_degree: i64) -> Result<()> {
    conn.execute(
        "DELETE FROM mem_graph_hubs WHERE resource_id = ?1",
        &[resource.into()],
    )?;
    // Read from the edges, written to the derived table: two statements (db::privilege).
    let hubs = conn.query(
        "SELECT to_id FROM mem_graph_edges WHERE resource_id = ?1 \
           AND stale_at IS NULL AND invalid_at IS NULL \
         GROUP BY to_id HAVING count(*) > ?2",
        &[resource.into(), Value::Int(hub_in_degree)],
    )?;
    for chunk in hubs.chunks(100) {
        let rows = crate::db::batch::values("(#, ?1)", chunk.len(), 2);
        let mut params: Vec<Value> = vec![resource.into()];
        params.extend(
            chunk
                .iter()
                .map(|r| r.first().cloned().unwrap_or(Value::Null)),
        );
        conn.execute(
            &format!("INSERT INTO mem_graph_hubs (node_id, resource_id) VALUES {rows}"),
            &params,
        )?;
    }
    Ok(())
}
