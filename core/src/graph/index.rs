//! `graph_index_file`: a source file's outline written into the graph — a `file` node, a node
//! per symbol, `defines` edges (file → symbol, symbol → member), its references
//! (`mem_graph_refs`) and the `imports`, `calls`, `extends` and `implements` edges those that
//! resolve make (see [`super::refs`]), and its chunks for search (`mem_code_chunks`).
//!
//! Node ids are derived from the resource, the path and the symbol ([`super::files`]), so
//! indexing a file again keeps the nodes other files' edges point at; of the file's own edges
//! only those it lost are removed and those it gained added, its vanished symbols are removed
//! (their edges with them, through the node triggers that keep the closure exact), and the
//! references of other files to a name it gained or lost, or to a node it lost, are resolved
//! again.

use super::chunks::{self, ChunkIn};
use super::files::{self, hex, node_id};
use super::nodes::{self, NodeIn};
use super::outline::{language, MAX_SOURCE};
use super::refs::{self, RefRow};
use crate::code::chunks::chunks as cut;
use crate::code::language::Lang;
use crate::code::outline::{outline, Outline, RefKind};
use crate::code::paths;
use crate::json_opts::Opts;
use crate::tokens::{self, Encoding};
use crate::{ids, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// `graph_index_file(resource_id, path, source [, options])` → JSON `{file_id, changed,
/// language, symbols, edges, chunks, unresolved, relinked, errors}`: `changed` false (and
/// nothing written) when the file's content hash is the one its node carries; `edges` counts
/// the file's edges by type; `unresolved` counts the references that resolve to nothing
/// (`mem_graph_refs` rows without `to_id`); `relinked` counts the other files whose
/// references changed. Options:
/// `language` (else from the path's extension; unknown: the file node and its line windows
/// only).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn index_file(
    conn: &mut dyn Conn,
    resource: &str,
    path: &str,
    source: &str,
    options: Option<&str>,
) -> Result<String> {
    ids::check_id("resource_id", resource)?;
    files::check_path(path)?;
    if source.len() > MAX_SOURCE {
        return Err(Error::invalid("source", format!("must be at most {MAX_SOURCE} bytes")));
    }
    let o = Opts::parse("options", options, &["language"])?;
    let lang = language(path, o.opt_str("language")?)?;
    let hash = hex(&Sha256::digest(source.as_bytes()));
    let file_id = node_id(resource, path, "");
    let held_hash = conn.query_value(
        "SELECT content_hash FROM mem_graph_nodes WHERE id = ?1 AND resource_id = ?2",
        &[file_id.as_str().into(), resource.into()],
    )?;
    if held_hash.as_ref().and_then(Value::as_str) == Some(hash.as_str()) {
        return Ok(json!({"file_id": file_id, "changed": false}).to_string());
    }
    let out = lang.map(|l| outline(l, source)).unwrap_or_default();
    let sym_ids = symbol_ids(resource, path, &out);
    // What the file held: its vanished symbols go now (their edges with them).
    let old = files::nodes_of(conn, resource, path)?;
    let mut gone = Vec::new();
    for (id, ..) in old.iter().filter(|(id, ..)| *id != file_id && !sym_ids.contains(id)) {
        nodes::remove(conn, id)?;
        gone.push(id.clone());
    }
    let mut list = vec![node(json!({
        "id": file_id, "type": "file", "label": path.rsplit('/').next().unwrap_or(path),
        "file_path": path, "language": lang.map(Lang::name), "source": "ast", "content_hash": hash,
        "metadata": {"errors": out.errors},
    }))?];
    for (s, id) in out.symbols.iter().zip(&sym_ids) {
        list.push(node(json!({
            "id": id, "type": s.kind, "label": s.name, "file_path": path, "language": lang.map(Lang::name),
            "start_line": s.start_line, "end_line": s.end_line, "source": "ast",
            "metadata": {"signature": s.signature},
        }))?);
    }
    nodes::upsert_many(conn, resource, list)?;
    // Its references, resolved against the graph that now holds its symbols.
    let mut rows = ref_rows(lang, path, &out, &file_id, &sym_ids);
    refs::resolve(conn, resource, path, &file_id, &mut rows)?;
    refs::store(conn, resource, &file_id, &rows)?;
    let mut wanted = refs::edges_of(&rows);
    for (i, s) in out.symbols.iter().enumerate() {
        let from = s.parent.map_or(&file_id, |p| &sym_ids[p]);
        wanted.push((from.clone(), sym_ids[i].clone(), "defines"));
    }
    wanted.sort();
    wanted.dedup();
    let mut from_ids = sym_ids.clone();
    from_ids.push(file_id.clone());
    let mut types = refs::REF_TYPES.to_vec();
    types.push("defines");
    refs::sync_edges(conn, &from_ids, &types, &wanted)?;
    // Other files' references that may resolve differently now.
    let before = files::names(old.iter().map(|(_, l, t)| (l.as_str(), t.as_str())));
    let after = files::names(out.symbols.iter().map(|s| (s.name.as_str(), s.kind)));
    let changed_names: Vec<String> = symmetric_difference(&before, &after);
    let appeared = old.is_empty().then_some(path);
    let relinked = refs::relink_others(conn, resource, &file_id, appeared, &changed_names, &gone)?;
    let chunk_list = chunk_rows(resource, path, source, &out, &sym_ids);
    chunks::sync(conn, resource, &file_id, path, &chunk_list)?;
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for (.., ty) in &wanted {
        *by_type.entry(ty).or_default() += 1;
    }
    Ok(json!({
        "file_id": file_id, "changed": true, "language": lang.map(Lang::name),
        "symbols": out.symbols.len(), "edges": by_type, "chunks": chunk_list.len(),
        "unresolved": unresolved(&rows),
        "relinked": relinked, "errors": out.errors,
    })
    .to_string())
}

/// The names whose count differs between two sorted (name, count) lists.
fn symmetric_difference(a: &[(String, usize)], b: &[(String, usize)]) -> Vec<String> {
    let a: HashMap<&str, usize> = a.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    let b: HashMap<&str, usize> = b.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    let mut out: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|n| a.get(*n) != b.get(*n))
        .map(|n| (*n).to_owned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The file's references as rows: one per name, one per candidate path of an import (an
/// import no path can satisfy keeps the module as written).
fn ref_rows(lang: Option<Lang>, path: &str, out: &Outline, file_id: &str, sym_ids: &[String]) -> Vec<RefRow> {
    let mut rows = Vec::new();
    for (n, r) in out.refs.iter().enumerate() {
        let from_id = r.from.map_or(file_id.to_owned(), |f| sym_ids[f].clone());
        let targets = match (r.kind, lang) {
            (RefKind::Imports, Some(l)) => paths::candidates(l, path, &r.target),
            _ => Vec::new(),
        };
        let targets = if targets.is_empty() { vec![r.target.clone()] } else { targets };
        for (rank, target) in targets.into_iter().enumerate() {
            rows.push(RefRow {
                from_id: from_id.clone(),
                kind: r.kind.name(),
                ref_no: n as i64,
                target,
                rank: rank as i64,
                line: r.line as i64,
                to_id: None,
            });
        }
    }
    rows
}

/// How many references resolve to nothing (an import counts once, whatever its candidates).
fn unresolved(rows: &[RefRow]) -> usize {
    let resolved: std::collections::HashSet<i64> = rows.iter().filter(|r| r.to_id.is_some()).map(|r| r.ref_no).collect();
    let all: std::collections::HashSet<i64> = rows.iter().map(|r| r.ref_no).collect();
    all.len() - resolved.len()
}

/// The file's chunks as rows: a symbol's chunk has the symbol's node id, a window an id of
/// its first line.
fn chunk_rows(resource: &str, path: &str, source: &str, out: &Outline, sym_ids: &[String]) -> Vec<ChunkIn> {
    cut(path, source, out)
        .into_iter()
        .map(|c| {
            let node = c.symbol.map(|i| sym_ids[i].clone());
            ChunkIn {
                id: node.clone().unwrap_or_else(|| node_id(resource, path, &format!("lines:{}", c.start_line))),
                node_id: node,
                start_line: c.start_line as i64,
                end_line: c.end_line as i64,
                token_count: tokens::count(&c.content, Encoding::O200kBase),
                content: c.content,
            }
        })
        .collect()
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
