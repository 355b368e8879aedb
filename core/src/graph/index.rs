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
use super::files::{self, node_id};
use super::gopkg;
use super::load;
use super::nodes::{self, NodeIn};
use super::outline::{language, MAX_SOURCE};
use super::refs::{self, RefRow};
use crate::cluster::route;
use crate::code::chunks::chunks as cut;
use crate::code::language::Lang;
use crate::code::outline::{outline, Outline, RefKind, Symbol};
use crate::code::paths;
use crate::json_opts::Opts;
use crate::text::hex;
use crate::{ids, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};

/// `graph_index_file(resource_id, path, source [, options])` → JSON `{file_id, changed,
/// language, symbols, edges, chunks, unresolved, relinked, errors}`: `changed` false when the
/// file's content hash is the one its node carries (nothing is written then but the
/// `metadata` given, where it differs from the node's: see [`refresh`]); `edges` counts
/// the file's edges by type; `unresolved` counts the references that resolve to nothing
/// (`mem_graph_refs` rows without `to_id`); `relinked` counts the other files whose
/// references changed. Options: `language` (else from the path's extension; unknown: the
/// file node and its line windows only), `metadata` (an object the file node keeps beside
/// the parse's `errors`: a client's stat of the file, a commit).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn index_file(
    conn: &mut dyn Conn,
    resource: &str,
    path: &str,
    source: &str,
    options: Option<&str>,
) -> Result<String> {
    ids::check_id("resource_id", resource)?;
    let o = Opts::parse("options", options, FILE_KEYS)?;
    let file = FileIn::new(path, source, &o)?;
    let Some(written) = write(conn, resource, file)? else {
        return Ok(json!({"file_id": node_id(resource, path, ""), "changed": false}).to_string());
    };
    let mut written = [written];
    let relinked = link(conn, resource, &mut written)?;
    write_chunks(conn, resource, &written)?;
    let [w] = written;
    Ok(json!({
        "file_id": w.file_id, "changed": true, "language": w.lang.map(Lang::name),
        "symbols": w.symbols, "edges": w.edges, "chunks": w.chunks.len(),
        "unresolved": unresolved(&w.rows), "relinked": relinked, "errors": w.errors,
    })
    .to_string())
}

/// `graph_index_files(resource_id, files)` → JSON `{files, changed, symbols, edges, chunks,
/// unresolved, relinked, errors}`: many files at once, `files` an array of objects with
/// `path`, `source` and the options of [`index_file`] (`language`, `metadata`). Their nodes
/// are written first and their references resolved after, against all of them, so a batch
/// that holds both ends of a reference writes its edge once (indexed one by one, a name
/// defined in a later file is first resolved elsewhere, then moved). The figures sum the
/// changed files'; `errors` maps each path that did not parse whole to its line ranges.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn index_files(conn: &mut dyn Conn, resource: &str, files: &str) -> Result<String> {
    ids::check_id("resource_id", resource)?;
    let list: Vec<Json> = match serde_json::from_str(files) {
        Ok(Json::Array(a)) => a,
        _ => return Err(Error::invalid("files", "must be a JSON array of objects with path and source")),
    };
    let mut given = Vec::with_capacity(list.len());
    for (i, f) in list.into_iter().enumerate() {
        let file = || -> Result<FileIn> {
            let o = Opts::parse("file", Some(&f.to_string()), &[FILE_KEYS, &["path", "source"]].concat())?;
            let path = o.opt_str("path")?.ok_or_else(|| Error::invalid("file.path", "is required"))?;
            let source = o.opt_str("source")?.ok_or_else(|| Error::invalid("file.source", "is required"))?;
            FileIn::new(&path, &source, &o)
        };
        given.push(file().map_err(|e| e.in_context(&format!("files[{i}]")))?);
    }
    let n = given.len();
    let mut written = Vec::new();
    for f in given {
        written.extend(write(conn, resource, f)?);
    }
    let relinked = link(conn, resource, &mut written)?;
    write_chunks(conn, resource, &written)?;
    let mut edges: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &written {
        for (ty, c) in &w.edges {
            *edges.entry(ty).or_default() += c;
        }
    }
    let errors: serde_json::Map<String, Json> = written
        .iter()
        .filter(|w| !w.errors.is_empty())
        .map(|w| (w.path.clone(), json!(w.errors)))
        .collect();
    Ok(json!({
        "files": n, "changed": written.len(),
        "symbols": written.iter().map(|w| w.symbols).sum::<usize>(), "edges": edges,
        "chunks": written.iter().map(|w| w.chunks.len()).sum::<usize>(),
        "unresolved": written.iter().map(|w| unresolved(&w.rows)).sum::<usize>(),
        "relinked": relinked, "errors": errors,
    })
    .to_string())
}

/// The options a file takes.
const FILE_KEYS: &[&str] = &["language", "metadata"];

/// A file as a call gives it, checked.
struct FileIn {
    path: String,
    source: String,
    lang: Option<Lang>,
    /// The call's `metadata`, when it gave one.
    metadata: Option<serde_json::Map<String, Json>>,
}

impl FileIn {
    fn new(path: &str, source: &str, o: &Opts) -> Result<FileIn> {
        files::check_path(path)?;
        if source.len() > MAX_SOURCE {
            return Err(Error::invalid("source", format!("must be at most {MAX_SOURCE} bytes")));
        }
        let lang = language(path, o.opt_str("language")?)?;
        let metadata = match o.opt_object("metadata")? {
            Some(m) => Some(serde_json::from_str(&m).map_err(|e| Error::invalid("options.metadata", e.to_string()))?),
            None => None,
        };
        Ok(FileIn { path: path.to_owned(), source: source.to_owned(), lang, metadata })
    }
}

/// A file whose nodes are written, its references not yet resolved and its chunks not yet
/// written.
struct Written {
    file_id: String,
    path: String,
    lang: Option<Lang>,
    symbols: usize,
    errors: Vec<(usize, usize)>,
    chunks: Vec<ChunkIn>,
    rows: Vec<RefRow>,
    /// Its edges, and the nodes they leave from.
    defines: Vec<(String, String, &'static str)>,
    from_ids: Vec<String>,
    edges: BTreeMap<&'static str, usize>,
    /// What other files' references may now resolve differently: the symbols it gained and
    /// lost by name, nodes that went, and its path when the file is new.
    gained: refs::Gained,
    gone: Vec<String>,
    new: bool,
}

/// Writes a file's nodes and cuts its chunks; `None` (nothing written) when its content hash
/// is the one its node carries.
fn write(conn: &mut dyn Conn, resource: &str, f: FileIn) -> Result<Option<Written>> {
    let FileIn { path, source, lang, metadata } = f;
    let hash = hex(&Sha256::digest(source.as_bytes()));
    let file_id = node_id(resource, &path, "");
    let held = conn
        .query(
            "SELECT content_hash, CAST(metadata AS TEXT) FROM mem_graph_nodes \
             WHERE id = ?1 AND resource_id = ?2",
            &[file_id.as_str().into(), resource.into()],
        )?
        .into_iter()
        .next();
    if let Some([held_hash, held_metadata]) = held.as_deref() {
        if held_hash.as_str() == Some(hash.as_str()) {
            if let Some(given) = metadata {
                refresh(conn, &file_id, held_metadata.as_str(), given)?;
            }
            return Ok(None);
        }
    }
    let mut metadata = metadata.unwrap_or_default();
    let out = match lang {
        Some(l) => outline(l, &source),
        None if gopkg::is_go_mod(&path) => go_mod(&source),
        None => Outline::default(),
    };
    let sym_ids = symbol_ids(resource, &path, &out);
    // What the file held: its vanished symbols go now (their edges with them).
    let old = files::nodes_of(conn, resource, &path)?;
    let mut gone = Vec::new();
    for (id, ..) in old.iter().filter(|(id, ..)| *id != file_id && !sym_ids.contains(id)) {
        nodes::remove(conn, id)?;
        gone.push(id.clone());
    }
    metadata.insert("errors".into(), json!(out.errors));
    let mut list = vec![node(json!({
        "id": file_id, "type": "file", "label": path.rsplit('/').next().unwrap_or(&path),
        "file_path": path, "language": lang.map(Lang::name), "source": "ast", "content_hash": hash,
        "metadata": metadata,
    }))?];
    for (s, id) in out.symbols.iter().zip(&sym_ids) {
        list.push(node(json!({
            "id": id, "type": s.kind, "label": s.name, "file_path": path, "language": lang.map(Lang::name),
            "start_line": s.start_line, "end_line": s.end_line, "source": "ast",
            "metadata": {"signature": s.signature},
        }))?);
    }
    nodes::upsert_many(conn, resource, list)?;
    let chunks = chunk_rows(resource, &path, &source, &out, &sym_ids);
    let defines: Vec<_> = out
        .symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.parent.map_or(&file_id, |p| &sym_ids[p]).clone(), sym_ids[i].clone(), "defines"))
        .collect();
    let mut gained = refs::Gained::default();
    gained.add(
        old.iter().map(|(_, l, t)| (l.as_str(), t.as_str())),
        out.symbols.iter().map(|s| (s.name.as_str(), s.kind)),
    );
    let mut from_ids = sym_ids.clone();
    from_ids.push(file_id.clone());
    Ok(Some(Written {
        rows: ref_rows(lang, &path, &out, &file_id, &sym_ids),
        file_id,
        path,
        lang,
        symbols: out.symbols.len(),
        errors: out.errors,
        chunks,
        defines,
        from_ids,
        edges: BTreeMap::new(),
        gained,
        gone,
        new: old.is_empty(),
    }))
}

/// Gives the node `file_id` of a file whose content is unchanged the `given` metadata,
/// keeping the parse's `errors`, when that differs from the `held` one. An indexer records
/// the file's stat there to skip reading it next time: a file touched, or written back the
/// same (a checkout, a stash popped), would otherwise be read and hashed again at every pass.
fn refresh(
    conn: &mut dyn Conn,
    file_id: &str,
    held: Option<&str>,
    mut given: serde_json::Map<String, Json>,
) -> Result<()> {
    let held: serde_json::Map<String, Json> = held.and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
    given.insert("errors".into(), held.get("errors").cloned().unwrap_or_else(|| json!([])));
    if given == held {
        return Ok(());
    }
    let now = conn.now_ms()?;
    route::execute(
        conn,
        "UPDATE mem_graph_nodes SET metadata = CAST(?2 AS @JSON), updated_at = ?3 WHERE id = ?1{home}",
        &[file_id.into(), Json::Object(given).to_string().into(), Value::Int(now)],
    )?;
    Ok(())
}

/// Resolves the written files' references against the graph that now holds all their
/// symbols, writes their edges, then resolves again the other files' references that may
/// point elsewhere now. Returns how many other files changed.
///
/// A large batch, at least half as large as the resource, writes its edges with the
/// closure's upkeep off and builds the closure once after ([`load::goes_in_bulk`]).
fn link(conn: &mut dyn Conn, resource: &str, written: &mut [Written]) -> Result<usize> {
    let mut wanted = Vec::with_capacity(written.len());
    let go = &mut gopkg::View::default();
    // The nodes are all written: from here on the call writes references and edges only.
    let defs = &mut refs::Defs::default();
    for w in written.iter_mut() {
        refs::resolve(conn, go, defs, resource, &w.path, &w.file_id, &mut w.rows)?;
        refs::store(conn, resource, &w.file_id, &w.rows)?;
        let mut edges = refs::edges_of(&w.rows);
        edges.extend(w.defines.iter().cloned());
        edges.sort();
        edges.dedup();
        for (.., ty) in &edges {
            *w.edges.entry(ty).or_default() += 1;
        }
        wanted.push(edges);
    }
    let adding: usize = wanted.iter().map(Vec::len).sum();
    let bulk = load::goes_in_bulk(conn, resource, adding)?;
    let mut write = |conn: &mut dyn Conn| -> Result<usize> {
        let mut types = refs::REF_TYPES.to_vec();
        types.push("defines");
        for (w, edges) in written.iter().zip(&wanted) {
            refs::sync_edges(conn, &w.from_ids, &types, edges)?;
        }
        let own: HashSet<String> = written.iter().map(|w| w.file_id.clone()).collect();
        let mut gained = refs::Gained::default();
        for w in written.iter() {
            gained.merge(&w.gained);
        }
        let gone: Vec<String> = written.iter().flat_map(|w| w.gone.iter().cloned()).collect();
        // A go.mod that changed may map every Go import elsewhere.
        let paths: Vec<&str> = written
            .iter()
            .filter(|w| w.new || gopkg::is_go_mod(&w.path))
            .map(|w| w.path.as_str())
            .collect();
        refs::relink_others(conn, defs, resource, &own, &paths, &gained, &gone)
    };
    if bulk {
        load::bulk(conn, resource, write)
    } else {
        write(conn)
    }
}

/// Writes the files' chunks, last: their token counts need the encoding's tables, which a
/// process builds at its first count, and a host that builds them on another thread
/// (`agentmem index`) gives them the time of the graph's writes to finish.
fn write_chunks(conn: &mut dyn Conn, resource: &str, written: &[Written]) -> Result<()> {
    for w in written {
        chunks::sync(conn, resource, &w.file_id, &w.path, &w.chunks)?;
    }
    Ok(())
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
                content: c.content,
            }
        })
        .collect()
}

/// A `go.mod`'s outline: its module, the node Go imports are mapped through (see
/// [`gopkg`]).
fn go_mod(source: &str) -> Outline {
    let symbols = gopkg::module_path(source)
        .map(|(name, line)| Symbol {
            kind: "module",
            signature: format!("module {name}"),
            name,
            parent: None,
            start_line: line,
            end_line: line,
        })
        .into_iter()
        .collect();
    Outline { symbols, ..Outline::default() }
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
