//! `graph_index_file`: a source file's outline written into the graph — a `file` node, a node
//! per symbol, `defines` edges (file → symbol, symbol → member), and the references that
//! resolve within the resource as `imports`, `calls`, `extends` and `implements` edges.
//!
//! Node ids are derived from the resource, the path and the symbol, so indexing a file again
//! keeps the nodes other files' edges point at; of the file's own outgoing edges only those it
//! lost are removed and those it gained added, and its vanished symbols are removed (their
//! edges with them, through the node triggers that keep the closure exact). A reference resolves to one node or to none — never to a guess: a call
//! by name to a symbol of the same file, else of a file it imports, else the one symbol of
//! that name in the resource; an import to the first of its candidate files that is indexed.
//! What does not resolve is listed in the file node's metadata (`unresolved`).

use super::edges::{self, EdgeIn};
use super::nodes::{self, NodeIn};
use super::outline::{language, MAX_SOURCE};
use crate::code::language::Lang;
use crate::code::outline::{outline, Outline, RefKind};
use crate::code::paths;
use crate::db::batch::query_in;
use crate::json_opts::Opts;
use crate::{ids, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// Unresolved references a file node lists.
const MAX_UNRESOLVED: usize = 500;

/// Kinds a call may name, and kinds a type reference may name.
const CALLABLE: &[&str] = &["function", "method", "macro"];
const TYPES: &[&str] = &["class", "struct", "enum", "trait", "interface", "type"];

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The id of the node `key` of `path` in `resource`.
fn node_id(resource: &str, path: &str, key: &str) -> String {
    let mut h = Sha256::new();
    for part in [resource, path, key] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!("ast-{}", &hex(&h.finalize())[..32])
}

/// `graph_index_file(resource_id, path, source [, options])` → JSON `{file_id, changed,
/// language, symbols, edges, unresolved, errors}`: `changed` false (and nothing written) when
/// the file's content hash is the one its node carries; `edges` counts the file's edges by
/// type. Options: `language` (else from the path's extension; unknown: the file node only).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn index_file(
    conn: &mut dyn Conn,
    resource: &str,
    path: &str,
    source: &str,
    options: Option<&str>,
) -> Result<String> {
    ids::check_id("resource_id", resource)?;
    if path.is_empty() || path.chars().count() > 1000 || path.starts_with('/') {
        return Err(Error::invalid("path", "must be a relative path of 1 to 1000 characters"));
    }
    if source.len() > MAX_SOURCE {
        return Err(Error::invalid("source", format!("must be at most {MAX_SOURCE} bytes")));
    }
    let o = Opts::parse("options", options, &["language"])?;
    let lang = language(path, o.opt_str("language")?)?;
    let hash = hex(&Sha256::digest(source.as_bytes()));
    let file_id = node_id(resource, path, "");
    let held = conn.query_value(
        "SELECT content_hash FROM mem_graph_nodes WHERE id = ?1 AND resource_id = ?2",
        &[file_id.as_str().into(), resource.into()],
    )?;
    if held.as_ref().and_then(Value::as_str) == Some(hash.as_str()) {
        return Ok(json!({"file_id": file_id, "changed": false}).to_string());
    }
    let out = lang.map(|l| outline(l, source)).unwrap_or_default();
    let sym_ids = symbol_ids(resource, path, &out);
    // What the file held: its vanished symbols go now (their edges with them), its other
    // edges are compared with the new ones below.
    let old: Vec<String> = conn
        .query(
            "SELECT id FROM mem_graph_nodes WHERE resource_id = ?1 AND file_path = ?2 AND source = 'ast'",
            &[resource.into(), path.into()],
        )?
        .into_iter()
        .filter_map(|r| r[0].as_str().map(str::to_owned))
        .collect();
    for id in old.iter().filter(|id| **id != file_id && !sym_ids.contains(id)) {
        nodes::remove(conn, id)?;
    }
    let (mut edges, unresolved) = resolve(conn, resource, path, lang, &out, &file_id, &sym_ids)?;
    edges.sort();
    edges.dedup();
    // The file's edges as they stand: those it no longer has go, those it keeps (and that
    // count: not stale, not ended) are left alone, so a small edit moves few closure rows.
    let old_keys: Vec<Value> = old.iter().map(|id| Value::from(id.as_str())).collect();
    let current = query_in(
        conn,
        "SELECT id, from_id, to_id, type, CASE WHEN stale_at IS NULL AND invalid_at IS NULL THEN 1 ELSE 0 END \
         FROM mem_graph_edges WHERE from_id IN ({keys})",
        &[],
        &old_keys,
    )?;
    let mut kept = std::collections::HashSet::new();
    for r in current {
        let key = (text(&r[1]), text(&r[2]), text(&r[3]));
        let wanted = edges.binary_search_by(|(f, t, ty)| (f.as_str(), t.as_str(), *ty).cmp(&(key.0.as_str(), key.1.as_str(), key.2.as_str()))).is_ok();
        if !wanted {
            conn.execute("DELETE FROM mem_graph_edges WHERE id = ?1", &[r[0].clone()])?;
        } else if r[4].as_i64() == Some(1) {
            kept.insert(key);
        }
    }
    let mut list = vec![node(json!({
        "id": file_id, "type": "file", "label": path.rsplit('/').next().unwrap_or(path),
        "file_path": path, "language": lang.map(Lang::name), "source": "ast", "content_hash": hash,
        "metadata": {"errors": out.errors, "unresolved": unresolved.iter().take(MAX_UNRESOLVED).collect::<Vec<_>>()},
    }))?];
    for (s, id) in out.symbols.iter().zip(&sym_ids) {
        list.push(node(json!({
            "id": id, "type": s.kind, "label": s.name, "file_path": path, "language": lang.map(Lang::name),
            "start_line": s.start_line, "end_line": s.end_line, "source": "ast",
            "metadata": {"signature": s.signature},
        }))?);
    }
    nodes::upsert_many(conn, resource, list)?;
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    let mut parsed = Vec::with_capacity(edges.len());
    for (from, to, ty) in &edges {
        *by_type.entry(ty).or_default() += 1;
        if !kept.contains(&(from.clone(), to.clone(), (*ty).to_owned())) {
            parsed.push(EdgeIn::parse(Some(from), Some(to), Some(ty), Some(r#"{"source":"ast"}"#))?);
        }
    }
    edges::edge_add_many(conn, parsed)?;
    Ok(json!({
        "file_id": file_id, "changed": true, "language": lang.map(Lang::name),
        "symbols": out.symbols.len(), "edges": by_type, "unresolved": unresolved.len(), "errors": out.errors,
    })
    .to_string())
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

fn node(v: Json) -> Result<NodeIn> {
    NodeIn::parse(&v.to_string())
}

/// Each symbol's id: its kind and the names of its enclosing symbols, and, for a name the
/// file defines twice in the same place (two `impl` blocks' `new`), its rank among them.
fn symbol_ids(resource: &str, path: &str, out: &Outline) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    (0..out.symbols.len())
        .map(|i| {
            let mut chain = vec![out.symbols[i].name.as_str()];
            let mut p = out.symbols[i].parent;
            while let Some(j) = p {
                chain.push(&out.symbols[j].name);
                p = out.symbols[j].parent;
            }
            chain.reverse();
            let key = format!("{}:{}", out.symbols[i].kind, chain.join("."));
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            node_id(resource, path, &format!("{key}#{n}"))
        })
        .collect()
}

/// The edges of the file (from, to, type) and its references that resolve to nothing.
fn resolve(
    conn: &mut dyn Conn,
    resource: &str,
    path: &str,
    lang: Option<Lang>,
    out: &Outline,
    file_id: &str,
    sym_ids: &[String],
) -> Result<(Vec<(String, String, &'static str)>, Vec<Json>)> {
    let mut edges = Vec::new();
    let mut unresolved = Vec::new();
    for (i, s) in out.symbols.iter().enumerate() {
        let from = s.parent.map_or(file_id, |p| sym_ids[p].as_str());
        edges.push((from.to_owned(), sym_ids[i].clone(), "defines"));
    }
    let from_of = |r: &crate::code::outline::Ref| r.from.map_or(file_id.to_owned(), |f| sym_ids[f].clone());
    // Imports first: calls look in the files they name.
    let mut imported: Vec<String> = Vec::new();
    for r in out.refs.iter().filter(|r| r.kind == RefKind::Imports) {
        let found = match lang {
            Some(l) => first_file(conn, resource, &paths::candidates(l, path, &r.target))?,
            None => None,
        };
        match found {
            Some((id, p)) if id != file_id => {
                edges.push((from_of(r), id, "imports"));
                imported.push(p);
            }
            Some(_) => {}
            None => unresolved.push(json!({"kind": "imports", "target": r.target, "line": r.line})),
        }
    }
    for r in out.refs.iter().filter(|r| r.kind != RefKind::Imports) {
        let kinds = if r.kind == RefKind::Calls { CALLABLE } else { TYPES };
        let local: Vec<usize> = (0..out.symbols.len())
            .filter(|&i| out.symbols[i].name == r.target && kinds.contains(&out.symbols[i].kind))
            .collect();
        let to = match local.as_slice() {
            [one] => Some(sym_ids[*one].clone()),
            [] => named(conn, resource, &r.target, kinds, &imported)?,
            _ => None,
        };
        let from = from_of(r);
        match to {
            Some(to) if to != from => edges.push((from, to, r.kind.name())),
            Some(_) => {}
            None => unresolved.push(json!({"kind": r.kind.name(), "target": r.target, "line": r.line})),
        }
    }
    Ok((edges, unresolved))
}

/// The first of `candidates` that is an indexed file of the resource: its node id and path.
fn first_file(conn: &mut dyn Conn, resource: &str, candidates: &[String]) -> Result<Option<(String, String)>> {
    if candidates.is_empty() {
        return Ok(None);
    }
    let keys: Vec<Value> = candidates.iter().map(|c| Value::from(c.as_str())).collect();
    let rows = query_in(
        conn,
        "SELECT id, file_path FROM mem_graph_nodes WHERE resource_id = ?1 AND type = 'file' \
           AND file_path IN ({keys})",
        &[resource.into()],
        &keys,
    )?;
    let found: HashMap<String, String> = rows
        .into_iter()
        .filter_map(|r| Some((r[1].as_str()?.to_owned(), r[0].as_str()?.to_owned())))
        .collect();
    Ok(candidates.iter().find_map(|c| found.get(c).map(|id| (id.clone(), c.clone()))))
}

/// The one symbol called `name` of one of `kinds`: among the files `imported` first, else in
/// the whole resource; none when there are several.
fn named(conn: &mut dyn Conn, resource: &str, name: &str, kinds: &[&str], imported: &[String]) -> Result<Option<String>> {
    // The kinds are this module's constants, spelled into the statement so that the node key
    // index (resource, type, label) answers it.
    let kinds = kinds.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ");
    let rows = conn.query(
        &format!(
            "SELECT id, file_path FROM mem_graph_nodes WHERE resource_id = ?1 AND type IN ({kinds}) \
               AND label = ?2 AND source = 'ast' ORDER BY id LIMIT 64"
        ),
        &[resource.into(), name.into()],
    )?;
    let fits: Vec<(String, String)> = rows
        .into_iter()
        .filter_map(|r| Some((r[0].as_str()?.to_owned(), r[1].as_str().unwrap_or_default().to_owned())))
        .collect();
    let near: Vec<&(String, String)> = fits.iter().filter(|(_, p)| imported.contains(p)).collect();
    Ok(match (near.as_slice(), fits.as_slice()) {
        ([one], _) => Some(one.0.clone()),
        ([], [one]) => Some(one.0.clone()),
        _ => None,
    })
}
