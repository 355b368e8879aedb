//! Edges as the client writes them: added (one or many), removed, invalidated.

use super::nodes::{check_type, confidence, owners, source};
use crate::cluster::route;
use crate::args::required;
use crate::json_opts::Opts;
use crate::{ids, Conn, Error, Result, Value};
use std::collections::HashMap;

const EDGE_OPTIONS: &[&str] = &[
    "weight",
    "layer",
    "source",
    "confidence",
    "metadata",
    "valid_at",
];

/// An edge as the client gives it, checked on its own (its ends are checked against the
/// nodes when it is written).
#[derive(Clone, Debug)]
pub(crate) struct EdgeIn {
    from: String,
    to: String,
    ty: String,
    weight: f64,
    layer: i64,
    source: String,
    confidence: f64,
    metadata: String,
    valid_at: Option<i64>,
}

impl EdgeIn {
    /// The arguments of `graph_edge_add` (errors name `from_id`, `to_id`, `type`,
    /// `options.<key>`).
    pub(crate) fn parse(
        from: Option<&str>,
        to: Option<&str>,
        ty: Option<&str>,
        options: Option<&str>,
    ) -> Result<EdgeIn> {
        let from = required("from_id", from)?;
        let to = required("to_id", to)?;
        let ty = required("type", ty)?;
        check_type("type", ty)?;
        if from == to {
            return Err(Error::invalid(
                "to_id",
                "must differ from from_id (no self-edges)",
            ));
        }
        let o = Opts::parse("options", options, EDGE_OPTIONS)?;
        let weight = o.opt_f64("weight")?.unwrap_or(1.0);
        check_weight("options.weight", weight)?;
        Ok(EdgeIn {
            from: from.to_string(),
            to: to.to_string(),
            ty: ty.to_string(),
            weight,
            layer: o.int("layer", 1, 1, 3)?,
            source: source(&o)?,
            confidence: confidence(&o)?,
            metadata: o.opt_object("metadata")?.unwrap_or_else(|| "{}".into()),
            valid_at: o.opt_int("valid_at")?,
        })
    }

    fn key(&self) -> (String, String, String) {
        (self.from.clone(), self.to.clone(), self.ty.clone())
    }

    /// The edge's resource (its `from` node's) after checking both ends, as the edge trigger
    /// checks them — here so that the error is the core's own on every backend (in Postgres a
    /// trigger's error aborts the statement before the caller can add context to it).
    fn checked(&self, owner: &HashMap<String, String>) -> Result<String> {
        check_ends(owner, &self.from, &self.to, None)
    }
}

/// The largest weight an edge may have (weights are compared to a billionth).
pub(crate) const MAX_WEIGHT: f64 = 1e9;

/// Refuses a weight that is not a number above 0 and at most [`MAX_WEIGHT`] (the
/// schema's check cannot see NaN in SQLite).
pub(super) fn check_weight(arg: &str, weight: f64) -> Result<()> {
    if !(weight.is_finite() && weight > 0.0 && weight <= MAX_WEIGHT) {
        return Err(Error::invalid(
            arg,
            format!("must be a number above 0 and at most {}", MAX_WEIGHT),
        ));
    }
    Ok(())
}

/// The resource of an edge `from → to`: both ends must be nodes (`owner` maps node ids to
/// their resources) of `resource`, or when it is not given, of `from`'s.
pub(super) fn check_ends(
    owner: &HashMap<String, String>,
    from: &str,
    to: &str,
    resource: Option<&str>,
) -> Result<String> {
    let mut expected = resource.map(str::to_string);
    for (arg, id) in [("from_id", from), ("to_id", to)] {
        let r = owner
            .get(id)
            .ok_or_else(|| Error::invalid(arg, format!("no node {}", crate::error::echo(id))))?;
        match &expected {
            None => expected = Some(r.clone()),
            Some(e) if e != r => {
                return Err(Error::invalid(
                    arg,
                    format!(
                        "node {} belongs to resource {}, the edge to {}",
                        crate::error::echo(id),
                        crate::error::echo(r),
                        crate::error::echo(e)
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(expected.unwrap_or_default())
}

/// Edges per insert statement.
const EDGES_PER_STATEMENT: usize = 64;

/// Writes `edges` (checked, distinct keys) many per statement and returns their ids: new
/// edges inserted, existing ones (same ends and type) updated and counting again.
fn write(conn: &mut dyn Conn, edges: &[(String, EdgeIn)]) -> Result<Vec<String>> {
    let now = conn.now_ms()?;
    let mut out = Vec::with_capacity(edges.len());
    for chunk in crate::db::batch::shaped(edges, EDGES_PER_STATEMENT) {
        let rows = crate::db::batch::values(
            "(#, #, #, #, #, #, #, #, #, CAST(# AS @JSON), ?1, ?1, CAST(# AS BIGINT))",
            chunk.len(),
            2,
        );
        let sql = format!(
            "INSERT INTO mem_graph_edges (id, resource_id, from_id, to_id, type, layer, weight, \
               source, confidence, metadata, created_at, updated_at, valid_at) VALUES {rows} \
             ON CONFLICT (from_id, to_id, type{{home_column}}) DO UPDATE SET layer = excluded.layer, \
               weight = excluded.weight, source = excluded.source, \
               confidence = excluded.confidence, metadata = excluded.metadata, \
               updated_at = excluded.updated_at, \
               valid_at = coalesce(excluded.valid_at, mem_graph_edges.valid_at), \
               stale_at = NULL, invalid_at = NULL \
             RETURNING from_id, to_id, type, id"
        );
        let mut params: Vec<Value> = vec![Value::Int(now)];
        for (resource, e) in chunk {
            let e = e.clone();
            params.extend([
                ids::new_id().into(),
                resource.as_str().into(),
                e.from.into(),
                e.to.into(),
                e.ty.into(),
                Value::Int(e.layer),
                Value::Real(e.weight),
                e.source.into(),
                Value::Real(e.confidence),
                e.metadata.into(),
                e.valid_at.into(),
            ]);
        }
        // RETURNING gives no order: ids are matched to the edges by key.
        let mut ids: HashMap<(String, String, String), String> = HashMap::new();
        for r in route::query(conn, &sql, &params)? {
            let mut f = crate::db::row::Fields::new(r);
            if let (Some(a), Some(b), Some(t), Some(id)) = (f.text(), f.text(), f.text(), f.text())
            {
                ids.insert((a, b, t), id);
            }
        }
        for (_, e) in chunk {
            let id = ids
                .remove(&e.key())
                .ok_or_else(|| Error::internal("graph_edge_add: an edge was not written"))?;
            out.push(id);
        }
    }
    Ok(out)
}

/// `graph_edge_add(from_id, to_id, type [, options])` → the edge's id. Adding an edge that
/// exists (same ends and type) updates it and makes it count again (not stale, valid).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn edge_add(
    conn: &mut dyn Conn,
    from: &str,
    to: &str,
    ty: &str,
    options: Option<&str>,
) -> Result<String> {
    let e = EdgeIn::parse(Some(from), Some(to), Some(ty), options)?;
    let owner = owners(conn, &[e.from.as_str(), e.to.as_str()])?;
    let resource = e.checked(&owner)?;
    let id = write(conn, &[(resource, e)])?;
    id.into_iter()
        .next()
        .ok_or_else(|| Error::internal("graph_edge_add: the edge was not written"))
}

/// Many edges at once, as [`edge_add`] one after another would leave them (an edge repeated
/// in `edges` is written once, its later fields win, `valid_at` kept when left out). Errors
/// name the edge's index. Returns how many distinct edges were written.
pub(crate) fn edge_add_many(conn: &mut dyn Conn, edges: Vec<EdgeIn>) -> Result<usize> {
    let mut ends: Vec<&str> = edges
        .iter()
        .flat_map(|e| [e.from.as_str(), e.to.as_str()])
        .collect();
    ends.sort_unstable();
    ends.dedup();
    let owner = owners(conn, &ends)?;
    let mut slot: HashMap<(String, String, String), usize> = HashMap::new();
    let mut out: Vec<(String, EdgeIn)> = Vec::new();
    for (i, e) in edges.into_iter().enumerate() {
        let resource = e
            .checked(&owner)
            .map_err(|err| Error::invalid(format!("graph.edges[{i}]"), err.to_string()))?;
        match slot.get(&e.key()) {
            Some(&k) => {
                let valid_at = e.valid_at.or(out[k].1.valid_at);
                out[k] = (resource, EdgeIn { valid_at, ..e });
            }
            None => {
                slot.insert(e.key(), out.len());
                out.push((resource, e));
            }
        }
    }
    write(conn, &out)?;
    Ok(out.len())
}

/// `graph_edge_remove(id)` → 1 when removed, 0 when there was no such edge.
pub(crate) fn edge_remove(conn: &mut dyn Conn, id: &str) -> Result<i64> {
    Ok(route::execute(conn, "DELETE FROM mem_graph_edges WHERE id = ?1{home}", &[id.into()])? as i64)
}

/// `graph_edge_invalidate(id [, at])` → 1 when the fact was current and now ends at `at`
/// (default: the database's clock), 0 otherwise. The edge stays, for `as_of` queries.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn edge_invalidate(conn: &mut dyn Conn, id: &str, at: Option<i64>) -> Result<i64> {
    let at = conn.now_or(at)?;
    Ok(route::execute(
        conn,
        "UPDATE mem_graph_edges SET invalid_at = ?2, updated_at = ?2 WHERE id = ?1 \
         AND invalid_at IS NULL{home}",
        &[id.into(), Value::Int(at)],
    )? as i64)
}
