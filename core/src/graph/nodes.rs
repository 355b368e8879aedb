//! Nodes as the client writes them: upserts (one or many), removal, and staleness by file.

use crate::cluster::route;
use crate::args::check_one_of;
use crate::json_opts::Opts;
use crate::{ids, Conn, Error, Result, Value};
use std::collections::HashMap;

/// Where a node or edge came from.
pub(crate) const SOURCES: &[&str] = &["ast", "scip", "llm", "agent"];

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

pub(super) fn check_type(arg: &str, t: &str) -> Result<()> {
    if t.is_empty() || t.chars().count() > 100 {
        return Err(Error::invalid(arg, "must be 1 to 100 characters"));
    }
    Ok(())
}

pub(super) fn confidence(o: &Opts) -> Result<f64> {
    let c = o.opt_f64("confidence")?.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&c) {
        return Err(Error::invalid(
            o.name("confidence"),
            "must be between 0 and 1",
        ));
    }
    Ok(c)
}

pub(super) fn source(o: &Opts) -> Result<String> {
    let s = o.opt_str("source")?.unwrap_or_else(|| "agent".into());
    check_one_of(&o.name("source"), &s, SOURCES)?;
    Ok(s)
}

/// A node as the client gives it, checked.
#[derive(Clone, Debug)]
pub(crate) struct NodeIn {
    pub id: Option<String>,
    ty: String,
    label: String,
    file_path: Option<String>,
    language: Option<String>,
    start_line: Option<i64>,
    end_line: Option<i64>,
    layer: i64,
    source: String,
    confidence: f64,
    content_hash: Option<String>,
    metadata: String,
}

impl NodeIn {
    /// The node JSON of `graph_node_upsert` (errors name `node.<key>`).
    pub(crate) fn parse(node: &str) -> Result<NodeIn> {
        let o = Opts::parse("node", Some(node), NODE_KEYS)?;
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
        let id = o.opt_str("id")?;
        if let Some(id) = &id {
            ids::check_id("node.id", id)?;
        }
        Ok(NodeIn {
            id,
            ty,
            label,
            file_path: o.opt_str("file_path")?,
            language: o.opt_str("language")?,
            start_line: o.opt_int("start_line")?,
            end_line: o.opt_int("end_line")?,
            layer: o.int("layer", 1, 1, 3)?,
            source: source(&o)?,
            confidence: confidence(&o)?,
            content_hash: o.opt_str("content_hash")?,
            metadata: o.opt_object("metadata")?.unwrap_or_else(|| "{}".into()),
        })
    }

    /// The key a node without an id is found by: (type, label, file_path).
    fn key(&self) -> (String, String, String) {
        let f = self.file_path.clone().unwrap_or_default();
        (self.ty.clone(), self.label.clone(), f)
    }
}

/// The id `node` is written under: its own (when it is not another resource's), else the
/// smallest id of the resource's nodes with its key, else a new one.
fn resolve(conn: &mut dyn Conn, resource: &str, node: &NodeIn) -> Result<String> {
    if let Some(id) = &node.id {
        let found = route::query_value(
            conn,
            "SELECT resource_id FROM mem_graph_nodes WHERE id = ?1{home}",
            &[id.as_str().into()],
        )?;
        return match found.and_then(Value::into_string) {
            Some(r) if r != resource => Err(Error::invalid(
                "node.id",
                format!("belongs to resource {}", crate::error::echo(&r)),
            )),
            _ => Ok(id.clone()),
        };
    }
    Ok(by_key(conn, resource, node)?.unwrap_or_else(ids::new_id))
}

/// The smallest id of the resource's nodes with `node`'s key, if any.
fn by_key(conn: &mut dyn Conn, resource: &str, node: &NodeIn) -> Result<Option<String>> {
    let found = conn.query_value(
        "SELECT min(id) FROM mem_graph_nodes WHERE resource_id = ?1 AND type = ?2 AND label = ?3 \
         AND coalesce(file_path, '') = coalesce(CAST(?4 AS TEXT), '')",
        &[
            resource.into(),
            node.ty.as_str().into(),
            node.label.as_str().into(),
            node.file_path.clone().into(),
        ],
    )?;
    Ok(found.and_then(Value::into_string))
}

/// Nodes per upsert statement.
const NODES_PER_STATEMENT: usize = 64;

/// Writes `nodes` (with the ids they resolved to, distinct) many per statement: inserted, or
/// their fields set and their staleness cleared.
fn write(conn: &mut dyn Conn, resource: &str, nodes: &[(String, NodeIn)]) -> Result<()> {
    let now = conn.now_ms()?;
    for chunk in crate::db::batch::shaped(nodes, NODES_PER_STATEMENT) {
        let rows = crate::db::batch::values(
            "(#, ?1, #, #, #, #, CAST(# AS BIGINT), CAST(# AS BIGINT), #, #, #, #, \
             CAST(# AS @JSON), ?2, ?2)",
            chunk.len(),
            3,
        );
        let sql = format!(
            "INSERT INTO mem_graph_nodes (id, resource_id, type, label, file_path, language, \
               start_line, end_line, layer, source, confidence, content_hash, metadata, \
               created_at, updated_at) VALUES {rows} \
             ON CONFLICT (id{{home_column}}) DO UPDATE SET type = excluded.type, \
               label = excluded.label, \
               file_path = excluded.file_path, language = excluded.language, \
               start_line = excluded.start_line, end_line = excluded.end_line, layer = excluded.layer, \
               source = excluded.source, confidence = excluded.confidence, \
               content_hash = coalesce(excluded.content_hash, mem_graph_nodes.content_hash), \
               metadata = excluded.metadata, updated_at = excluded.updated_at, stale_at = NULL"
        );
        let mut params: Vec<Value> = vec![resource.into(), Value::Int(now)];
        for (id, n) in chunk {
            let n = n.clone();
            params.extend([
                id.as_str().into(),
                n.ty.into(),
                n.label.into(),
                n.file_path.into(),
                n.language.into(),
                n.start_line.into(),
                n.end_line.into(),
                Value::Int(n.layer),
                n.source.into(),
                Value::Real(n.confidence),
                n.content_hash.into(),
                n.metadata.into(),
            ]);
        }
        route::execute(conn, &sql, &params)?;
    }
    Ok(())
}

/// `graph_node_upsert(resource_id, node_json)` → the node's id. The node is the one with the
/// given `id`, else the one with the same (resource, type, label, file_path) — the smallest id
/// when several share it — else a new one; its fields are set and its staleness cleared.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn upsert(conn: &mut dyn Conn, resource: &str, node: &str) -> Result<String> {
    let n = NodeIn::parse(node)?;
    let id = resolve(conn, resource, &n)?;
    write(conn, resource, &[(id.clone(), n)])?;
    Ok(id)
}

/// The resource of each of `ids` that is a node, read many per statement.
pub(crate) fn owners(conn: &mut dyn Conn, ids: &[&str]) -> Result<HashMap<String, String>> {
    let keys: Vec<Value> = ids.iter().map(|s| Value::from(*s)).collect();
    let rows = crate::db::batch::query_in(
        conn,
        "SELECT id, resource_id FROM mem_graph_nodes WHERE id IN ({keys}){home}",
        &[],
        &keys,
    )?;
    let mut out = HashMap::new();
    for r in rows {
        let mut f = crate::db::row::Fields::new(r);
        if let (Some(id), Some(res)) = (f.text(), f.text()) {
            out.insert(id, res);
        }
    }
    Ok(out)
}

/// Many nodes of `resource` at once, as [`upsert`] one after another would leave them: ids
/// resolved (a key or id repeated in `nodes` is the same node, its later fields win), then
/// written many per statement. Errors name the node's index.
pub(crate) fn upsert_many(conn: &mut dyn Conn, resource: &str, nodes: Vec<NodeIn>) -> Result<usize> {
    let given: Vec<&str> = nodes.iter().filter_map(|n| n.id.as_deref()).collect();
    let owner = owners(conn, &given)?;
    let mut keys: HashMap<(String, String, String), String> = HashMap::new();
    let mut slot: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<(String, NodeIn)> = Vec::new();
    for (i, n) in nodes.into_iter().enumerate() {
        let id = match &n.id {
            Some(id) => match owner.get(id) {
                Some(r) if r != resource => {
                    return Err(Error::invalid(
                        format!("graph.nodes[{i}]"),
                        format!("node.id: belongs to resource {}", crate::error::echo(r)),
                    ))
                }
                _ => id.clone(),
            },
            None => {
                let stored = by_key(conn, resource, &n)?;
                match (stored, keys.get(&n.key()).cloned()) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => ids::new_id(),
                }
            }
        };
        keys.entry(n.key())
            .and_modify(|k| {
                if id < *k {
                    *k = id.clone()
                }
            })
            .or_insert_with(|| id.clone());
        match slot.get(&id) {
            Some(&k) => {
                let hash = n.content_hash.clone().or(out[k].1.content_hash.take());
                out[k].1 = NodeIn {
                    content_hash: hash,
                    ..n
                };
            }
            None => {
                slot.insert(id.clone(), out.len());
                out.push((id, n));
            }
        }
    }
    write(conn, resource, &out)?;
    Ok(out.len())
}

/// `graph_node_remove(id)` → 1 when removed, 0 when there was no such node. Its edges and
/// their closure rows go with it.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn remove(conn: &mut dyn Conn, id: &str) -> Result<i64> {
    Ok(route::execute(conn, "DELETE FROM mem_graph_nodes WHERE id = ?1{home}", &[id.into()])? as i64)
}

/// `graph_mark_stale(resource_id, file_path [, now])` → the nodes and edges marked: every
/// node of the file, and every edge from one of them (the file's code changed, so what it
/// said may no longer hold). Re-adding an edge or upserting a node clears its mark.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn mark_stale(
    conn: &mut dyn Conn,
    resource: &str,
    file: &str,
    now: Option<i64>,
) -> Result<i64> {
    let now = conn.now_or(now)?;
    let nodes = conn.execute(
        "UPDATE mem_graph_nodes SET stale_at = ?3 WHERE resource_id = ?1 AND file_path = ?2 \
         AND stale_at IS NULL",
        &[resource.into(), file.into(), Value::Int(now)],
    )?;
    let edges = conn.execute(
        "UPDATE mem_graph_edges SET stale_at = ?3 WHERE stale_at IS NULL AND resource_id = ?1 \
           AND from_id IN (SELECT id FROM mem_graph_nodes WHERE resource_id = ?1 AND file_path = ?2)",
        &[resource.into(), file.into(), Value::Int(now)],
    )?;
    Ok((nodes + edges) as i64)
}

/// `graph_file_changed(resource_id, file_path, content_hash)` → whether the file changed: when
/// the hash differs from the one its nodes carry, they take the new hash and the file is
/// marked stale ([`mark_stale`]). An indexer can call it on every save.
pub(crate) fn file_changed(conn: &mut dyn Conn, resource: &str, file: &str, hash: &str) -> Result<bool> {
    let changed = conn.execute(
        "UPDATE mem_graph_nodes SET content_hash = ?3 WHERE resource_id = ?1 AND file_path = ?2 \
         AND (content_hash IS NULL OR content_hash <> ?3)",
        &[resource.into(), file.into(), hash.into()],
    )?;
    if changed > 0 {
        mark_stale(conn, resource, file, None)?;
    }
    Ok(changed > 0)
}
