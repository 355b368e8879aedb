//! Nodes and edges as the client writes them: upserts, removal, validity and staleness.

use crate::args::{check_one_of, required};
use crate::json_opts::Opts;
use crate::{ids, Conn, Error, Result, Value};

/// Where a node or edge came from.
pub const SOURCES: &[&str] = &["ast", "scip", "llm", "agent"];

const NODE_KEYS: &[&str] = &[
    "id",
    "type",
    "label",
    "file_path",
    "language",
    "start_line",
    "end_line",
    "layer",
    "source",
    "confidence",
    "content_hash",
    "metadata",
];

const EDGE_OPTIONS: &[&str] = &[
    "weight",
    "layer",
    "source",
    "confidence",
    "metadata",
    "valid_at",
];

fn check_type(arg: &str, t: &str) -> Result<()> {
    if t.is_empty() || t.chars().count() > 100 {
        return Err(Error::invalid(arg, "must be 1 to 100 characters"));
    }
    Ok(())
}

fn confidence(o: &Opts) -> Result<f64> {
    let c = o.opt_f64("confidence")?.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&c) {
        return Err(Error::invalid(
            o.name("confidence"),
            "must be between 0 and 1",
        ));
    }
    Ok(c)
}

fn source(o: &Opts) -> Result<String> {
    let s = o.opt_str("source")?.unwrap_or_else(|| "agent".into());
    check_one_of(&o.name("source"), &s, SOURCES)?;
    Ok(s)
}

/// `graph_node_upsert(resource_id, node_json)` → the node's id. The node is the one with the
/// given `id`, else the one with the same (resource, type, label, file_path) — the smallest id
/// when several share it — else a new one; its fields are set and its staleness cleared.
pub fn upsert(
    conn: &mut dyn Conn,
    resource_id: Option<&str>,
    node: Option<&str>,
) -> Result<String> {
    let resource = required("resource_id", resource_id)?;
    let o = Opts::parse("node", Some(required("node", node)?), NODE_KEYS)?;
    let ty = o
        .opt_str("type")?
        .ok_or_else(|| Error::invalid("node.type", "is required"))?;
    check_type("node.type", &ty)?;
    let label = o
        .opt_str("label")?
        .ok_or_else(|| Error::invalid("node.label", "is required"))?;
    if label.is_empty() || label.chars().count() > 1000 {
        return Err(Error::invalid("node.label", "must be 1 to 1000 characters"));
    }
    let file_path = o.opt_str("file_path")?;
    let layer = o.int("layer", 1, 1, 3)?;
    let source = source(&o)?;
    let confidence = confidence(&o)?;
    let metadata = o.opt_object("metadata")?.unwrap_or_else(|| "{}".into());
    let existing = match o.opt_str("id")? {
        Some(id) => {
            let found = conn.query_value(
                "SELECT resource_id FROM mem_graph_nodes WHERE id = ?1",
                &[id.as_str().into()],
            )?;
            if let Some(r) = found.and_then(Value::into_string) {
                if r != resource {
                    return Err(Error::invalid(
                        "node.id",
                        format!("belongs to resource {}", crate::error::echo(&r)),
                    ));
                }
            }
            Some(id)
        }
        None => conn
            .query_value(
                "SELECT min(id) FROM mem_graph_nodes WHERE resource_id = ?1 AND type = ?2 AND label = ?3 \
                 AND coalesce(file_path, '') = coalesce(CAST(?4 AS TEXT), '')",
                &[resource.into(), ty.as_str().into(), label.as_str().into(), file_path.clone().into()],
            )?
            .and_then(Value::into_string),
    };
    let id = existing.unwrap_or_else(ids::new_id);
    ids::check_id("node.id", &id)?;
    let now = conn.now_ms()?;
    conn.execute(
        "INSERT INTO mem_graph_nodes (id, resource_id, type, label, file_path, language, start_line, \
           end_line, layer, source, confidence, content_hash, metadata, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, CAST(?7 AS BIGINT), CAST(?8 AS BIGINT), ?9, ?10, ?11, ?12, CAST(?13 AS @JSON), ?14, ?14) \
         ON CONFLICT (id) DO UPDATE SET type = excluded.type, label = excluded.label, \
           file_path = excluded.file_path, language = excluded.language, \
           start_line = excluded.start_line, end_line = excluded.end_line, layer = excluded.layer, \
           source = excluded.source, confidence = excluded.confidence, \
           content_hash = coalesce(excluded.content_hash, mem_graph_nodes.content_hash), \
           metadata = excluded.metadata, updated_at = excluded.updated_at, stale_at = NULL",
        &[
            id.as_str().into(),
            resource.into(),
            ty.into(),
            label.into(),
            file_path.into(),
            o.opt_str("language")?.into(),
            o.opt_int("start_line")?.into(),
            o.opt_int("end_line")?.into(),
            Value::Int(layer),
            source.into(),
            Value::Real(confidence),
            o.opt_str("content_hash")?.into(),
            metadata.into(),
            Value::Int(now),
        ],
    )?;
    Ok(id)
}

/// `graph_node_remove(id)` → 1 when removed, 0 when there was no such node. Its edges and
/// their closure rows go with it.
pub fn remove(conn: &mut dyn Conn, id: Option<&str>) -> Result<i64> {
    let id = required("id", id)?;
    Ok(conn.execute("DELETE FROM mem_graph_nodes WHERE id = ?1", &[id.into()])? as i64)
}

/// `graph_edge_add(from_id, to_id, type [, options])` → the edge's id. Adding an edge that
/// exists (same ends and type) updates it and makes it count again (not stale, valid).
pub fn edge_add(
    conn: &mut dyn Conn,
    from: Option<&str>,
    to: Option<&str>,
    ty: Option<&str>,
    options: Option<&str>,
) -> Result<String> {
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
    if !(weight.is_finite() && weight > 0.0 && weight <= super::MAX_WEIGHT) {
        return Err(Error::invalid(
            "options.weight",
            format!("must be a number above 0 and at most {}", super::MAX_WEIGHT),
        ));
    }
    let layer = o.int("layer", 1, 1, 3)?;
    let source = source(&o)?;
    let confidence = confidence(&o)?;
    let metadata = o.opt_object("metadata")?.unwrap_or_else(|| "{}".into());
    let resource = conn
        .query_value(
            "SELECT resource_id FROM mem_graph_nodes WHERE id = ?1",
            &[from.into()],
        )?
        .and_then(Value::into_string)
        .ok_or_else(|| {
            Error::invalid("from_id", format!("no node {}", crate::error::echo(from)))
        })?;
    // Checked here as the edge trigger checks it, so that the error is the core's own on
    // every backend (in Postgres a trigger's error aborts the statement before the caller
    // can add context to it).
    let hop = super::closure::Hop {
        resource: resource.clone(),
        from: from.to_string(),
        to: to.to_string(),
        ty: ty.to_string(),
        weight,
    };
    super::check_edge(conn, &hop)?;
    let now = conn.now_ms()?;
    let id = ids::new_id();
    let row = conn.query(
        "INSERT INTO mem_graph_edges (id, resource_id, from_id, to_id, type, layer, weight, source, \
           confidence, metadata, created_at, updated_at, valid_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, CAST(?10 AS @JSON), ?11, ?11, CAST(?12 AS BIGINT)) \
         ON CONFLICT (from_id, to_id, type) DO UPDATE SET layer = excluded.layer, \
           weight = excluded.weight, source = excluded.source, confidence = excluded.confidence, \
           metadata = excluded.metadata, updated_at = excluded.updated_at, \
           valid_at = coalesce(excluded.valid_at, mem_graph_edges.valid_at), \
           stale_at = NULL, invalid_at = NULL \
         RETURNING id",
        &[
            id.into(),
            resource.into(),
            from.into(),
            to.into(),
            ty.into(),
            Value::Int(layer),
            Value::Real(weight),
            source.into(),
            Value::Real(confidence),
            metadata.into(),
            Value::Int(now),
            o.opt_int("valid_at")?.into(),
        ],
    )?;
    row.into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_string)
        .ok_or_else(|| Error::internal("graph_edge_add: the edge was not written"))
}

/// `graph_edge_remove(id)` → 1 when removed, 0 when there was no such edge.
pub fn edge_remove(conn: &mut dyn Conn, id: Option<&str>) -> Result<i64> {
    let id = required("id", id)?;
    Ok(conn.execute("DELETE FROM mem_graph_edges WHERE id = ?1", &[id.into()])? as i64)
}

/// `graph_edge_invalidate(id [, at])` → 1 when the fact was current and now ends at `at`
/// (default: the database's clock), 0 otherwise. The edge stays, for `as_of` queries.
pub fn edge_invalidate(conn: &mut dyn Conn, id: Option<&str>, at: Option<i64>) -> Result<i64> {
    let id = required("id", id)?;
    let at = match at {
        Some(t) => t,
        None => conn.now_ms()?,
    };
    Ok(conn.execute(
        "UPDATE mem_graph_edges SET invalid_at = ?2, updated_at = ?2 WHERE id = ?1 AND invalid_at IS NULL",
        &[id.into(), Value::Int(at)],
    )? as i64)
}

/// `graph_mark_stale(resource_id, file_path [, now])` → the nodes and edges marked: every
/// node of the file, and every edge from one of them (the file's code changed, so what it
/// said may no longer hold). Re-adding an edge or upserting a node clears its mark.
pub fn mark_stale(
    conn: &mut dyn Conn,
    resource_id: Option<&str>,
    file_path: Option<&str>,
    now: Option<i64>,
) -> Result<i64> {
    let resource = required("resource_id", resource_id)?;
    let file = required("file_path", file_path)?;
    let now = match now {
        Some(t) => t,
        None => conn.now_ms()?,
    };
    let nodes = conn.execute(
        "UPDATE mem_graph_nodes SET stale_at = ?3 WHERE resource_id = ?1 AND file_path = ?2 \
         AND stale_at IS NULL",
        &[resource.into(), file.into(), Value::Int(now)],
    )?;
    let edges = conn.execute(
        "UPDATE mem_graph_edges SET stale_at = ?3 WHERE stale_at IS NULL AND from_id IN \
           (SELECT id FROM mem_graph_nodes WHERE resource_id = ?1 AND file_path = ?2)",
        &[resource.into(), file.into(), Value::Int(now)],
    )?;
    Ok((nodes + edges) as i64)
}

/// `graph_file_changed(resource_id, file_path, content_hash)` → whether the file changed: when
/// the hash differs from the one its nodes carry, they take the new hash and the file is
/// marked stale ([`mark_stale`]). An indexer can call it on every save.
pub fn file_changed(
    conn: &mut dyn Conn,
    resource_id: Option<&str>,
    file_path: Option<&str>,
    content_hash: Option<&str>,
) -> Result<bool> {
    let resource = required("resource_id", resource_id)?;
    let file = required("file_path", file_path)?;
    let hash = required("content_hash", content_hash)?;
    let changed = conn.execute(
        "UPDATE mem_graph_nodes SET content_hash = ?3 WHERE resource_id = ?1 AND file_path = ?2 \
         AND (content_hash IS NULL OR content_hash <> ?3)",
        &[resource.into(), file.into(), hash.into()],
    )?;
    if changed > 0 {
        mark_stale(conn, Some(resource), Some(file), None)?;
    }
    Ok(changed > 0)
}
