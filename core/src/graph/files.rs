//! A source file in the code graph: the ids of its nodes, derived from the resource, the path
//! and the symbol (so indexing the file again keeps the nodes other files' edges point at),
//! and `graph_remove_file`, which takes a file out with everything made from it.

use super::{chunks, refs};
use crate::db::row::Fields;
use crate::text::hex;
use crate::{ids, Conn, Error, Result};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The id of the node `key` of `path` in `resource` (`""`: the file's own node).
pub(crate) fn node_id(resource: &str, path: &str, key: &str) -> String {
    let mut h = Sha256::new();
    for part in [resource, path, key] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!("ast-{}", &hex(&h.finalize())[..32])
}

/// Checks a file path as the code graph takes it: relative, 1 to 1000 characters.
pub(crate) fn check_path(path: &str) -> Result<()> {
    if path.is_empty() || path.chars().count() > 1000 || path.starts_with('/') {
        return Err(Error::invalid("path", "must be a relative path of 1 to 1000 characters"));
    }
    Ok(())
}

/// The nodes the indexer made for the file: (id, label, type), the file's own first.
pub(crate) fn nodes_of(conn: &mut dyn Conn, resource: &str, path: &str) -> Result<Vec<(String, String, String)>> {
    Ok(conn
        .query(
            "SELECT id, label, type FROM mem_graph_nodes WHERE resource_id = ?1 AND file_path = ?2 \
               AND source = 'ast' ORDER BY CASE WHEN type = 'file' THEN 0 ELSE 1 END, id",
            &[resource.into(), path.into()],
        )?
        .into_iter()
        .filter_map(|r| {
            let mut f = Fields::new(r);
            Some((f.text()?, f.text()?, f.text()?))
        })
        .collect())
}

/// `graph_remove_file(resource_id, path)` → JSON `{removed, relinked}`: the file's node, its
/// symbols (their edges and closure rows with them), its references and chunks are deleted;
/// the references of other files into it are resolved again (`relinked` files changed).
/// `removed` is 0 when the file was not indexed.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn remove_file(conn: &mut dyn Conn, resource: &str, path: &str) -> Result<String> {
    ids::check_id("resource_id", resource)?;
    check_path(path)?;
    let file_id = node_id(resource, path, "");
    let held = nodes_of(conn, resource, path)?;
    conn.execute(
        "DELETE FROM mem_graph_refs WHERE file_id = ?1 AND resource_id = ?2",
        &[file_id.as_str().into(), resource.into()],
    )?;
    chunks::sync(conn, resource, &file_id, path, &[])?;
    for (id, ..) in &held {
        conn.execute(
            "DELETE FROM mem_graph_nodes WHERE id = ?1 AND resource_id = ?2",
            &[id.as_str().into(), resource.into()],
        )?;
    }
    let gone: Vec<String> = held.iter().map(|n| n.0.clone()).collect();
    let mut gained = refs::Gained::default();
    gained.add(held.iter().map(|(_, l, t)| (l.as_str(), t.as_str())), std::iter::empty());
    let relinked = if held.is_empty() {
        0
    } else {
        let own = std::iter::once(file_id.clone()).collect();
        refs::relink_others(conn, &mut refs::Defs::default(), resource, &own, &[path], &gained, &gone)?
    };
    Ok(json!({"removed": held.len(), "relinked": relinked}).to_string())
}
