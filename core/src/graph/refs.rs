//! The code graph's references (`mem_graph_refs`): every import, call, extends and
//! implements a file makes, with the node it resolves to. They are what the file's edges of
//! those types are made from, so that when another file gains, loses or moves a definition
//! the references to that name are resolved again and the edges follow — none is left
//! pointing at a symbol that is gone, none stays unresolved once its target exists.
//!
//! A reference resolves to one node or to none, never to a guess: an import to the first of
//! its candidate paths that is an indexed file; a name to the one symbol of a fitting kind
//! in the file itself, else in the files it imports, else in the whole resource.

use super::edges::{self, EdgeIn};
use super::gopkg;
use crate::cluster::route;
use crate::db::batch::query_in;
use crate::db::batch::{shaped, values};
use crate::db::row::Fields;
use crate::{Conn, Result, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The edge types references make; the indexer owns these and `defines` on its nodes.
pub(crate) const REF_TYPES: &[&str] = &["imports", "calls", "extends", "implements"];

/// Kinds a call may name, and kinds a type reference may name.
pub(crate) const CALLABLE: &[&str] = &["function", "method", "macro"];
pub(crate) const TYPES: &[&str] = &["class", "struct", "enum", "trait", "interface", "type"];

/// One row of `mem_graph_refs` of a file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RefRow {
    pub from_id: String,
    pub kind: &'static str,
    pub ref_no: i64,
    pub target: String,
    pub rank: i64,
    pub line: i64,
    pub to_id: Option<String>,
}

fn kind_named(kind: &str) -> Option<&'static str> {
    REF_TYPES.iter().copied().find(|k| *k == kind)
}

/// How many symbols of each name some files gained (below zero: lost), callables and types
/// apart, for every name whose count changed in one of them (in a batch, one file may lose
/// what another gains): what tells which references of other files may now resolve
/// differently.
#[derive(Default)]
pub(crate) struct Gained(BTreeMap<String, [i64; 2]>);

impl Gained {
    /// Adds a file's change: the symbols it held and those it holds, as (label, type).
    pub(crate) fn add<'a>(
        &mut self,
        before: impl Iterator<Item = (&'a str, &'a str)>,
        after: impl Iterator<Item = (&'a str, &'a str)>,
    ) {
        let mut file: BTreeMap<&str, [i64; 2]> = BTreeMap::new();
        for ((label, ty), by) in before.map(|n| (n, -1)).chain(after.map(|n| (n, 1))) {
            if let Some(k) = class_of(ty) {
                file.entry(label).or_default()[k] += by;
            }
        }
        for (label, g) in file.into_iter().filter(|(_, g)| *g != [0, 0]) {
            self.count(label, g);
        }
    }

    /// Adds what other files gained.
    pub(crate) fn merge(&mut self, other: &Gained) {
        for (label, g) in &other.0 {
            self.count(label, *g);
        }
    }

    fn count(&mut self, label: &str, [a, b]: [i64; 2]) {
        let e = self.0.entry(label.to_owned()).or_default();
        e[0] += a;
        e[1] += b;
    }

    /// The names whose count changed in one of the files.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// The definitions a reference may resolve to, by name. Loaded name by name as references
/// need them and kept: the caller holds one for a part of a call that writes references and
/// edges but no nodes, so each name's symbols are read once however many files name it
/// (`new` is thousands of symbols in a large tree), and kept by path, so a reference
/// resolves in the time of its file's imports, not of the name's symbols.
#[derive(Default)]
pub(crate) struct Defs {
    /// A name read holds its callables and its types, both empty when it names nothing.
    by_name: HashMap<String, [Fits; 2]>,
}

/// The symbols of one name that a kind of reference may name.
#[derive(Default)]
struct Fits {
    count: usize,
    /// Their ids by the path of their file.
    by_path: HashMap<String, Vec<String>>,
}

impl Fits {
    /// The one symbol in the file at `path`, else in the files it imports, else anywhere.
    fn one(&self, path: &str, imported: &HashSet<String>) -> Option<&str> {
        if let Some(local) = self.by_path.get(path) {
            return match local.as_slice() {
                [one] => Some(one.as_str()),
                _ => None,
            };
        }
        let mut near = imported.iter().filter_map(|p| self.by_path.get(p)).flatten();
        match (near.next(), near.next()) {
            (Some(one), None) => Some(one.as_str()),
            (Some(_), Some(_)) => None,
            _ if self.count == 1 => self.by_path.values().flatten().next().map(String::as_str),
            _ => None,
        }
    }
}

/// Which of a name's [`Fits`] a reference of `kind` looks in.
fn class(kind: &str) -> usize {
    usize::from(kind != "calls")
}

/// Which of a name's [`Fits`] a symbol of type `ty` is in, if any.
fn class_of(ty: &str) -> Option<usize> {
    if CALLABLE.contains(&ty) {
        Some(0)
    } else {
        TYPES.contains(&ty).then_some(1)
    }
}

impl Defs {
    /// Reads the definitions of the `names` not read yet.
    fn load<'a>(&mut self, conn: &mut dyn Conn, resource: &str, names: impl Iterator<Item = &'a str>) -> Result<()> {
        let names: BTreeSet<&str> = names.filter(|n| !self.by_name.contains_key(*n)).collect();
        if names.is_empty() {
            return Ok(());
        }
        let keys: Vec<Value> = names.iter().map(|n| Value::from(*n)).collect();
        self.by_name.extend(names.into_iter().map(|n| (n.to_owned(), Default::default())));
        // The kinds are this module's constants, spelled into the statement so that the
        // node key index (resource, type, label) answers it.
        let kinds: Vec<String> = CALLABLE.iter().chain(TYPES).map(|k| format!("'{k}'")).collect();
        let sql = format!(
            "SELECT label, type, id, coalesce(file_path, '') FROM mem_graph_nodes \
             WHERE resource_id = ?1 AND type IN ({}) AND label IN ({{keys}}) AND source = 'ast'",
            kinds.join(", ")
        );
        for r in query_in(conn, &sql, &[resource.into()], &keys)? {
            let mut f = Fields::new(r);
            if let (Some(l), Some(t), Some(id), Some(p)) = (f.text(), f.text(), f.text(), f.text()) {
                if let Some(k) = class_of(&t) {
                    let fits = &mut self.by_name.entry(l).or_default()[k];
                    fits.count += 1;
                    fits.by_path.entry(p).or_default().push(id);
                }
            }
        }
        Ok(())
    }

    /// Whether no reference to `name` can resolve differently since the files that changed
    /// it gained `gained`, unless its file imports one of them: for each kind of reference,
    /// the name has no symbol before and after, or two or more before and after. A reference
    /// resolves to a symbol in its own file (unchanged), else in the files it imports, else to
    /// the only one in the resource, which there is neither before nor after. Needs the
    /// name's definitions read.
    fn settled(&self, name: &str, gained: [i64; 2]) -> bool {
        let Some(fits) = self.by_name.get(name) else { return false };
        fits.iter().zip(gained).all(|(f, g)| {
            let (after, before) = (f.count as i64, f.count as i64 - g);
            (before == 0 && after == 0) || (before >= 2 && after >= 2)
        })
    }

    /// The node a name reference of the file at `path` (which imports the files `imported`)
    /// resolves to: the one fitting symbol in the file, else in the files it imports, else in
    /// the resource.
    fn resolve(&self, r: &RefRow, path: &str, imported: &HashSet<String>) -> Option<String> {
        let fits = &self.by_name.get(&r.target)?[class(r.kind)];
        fits.one(path, imported).filter(|t| *t != r.from_id).map(str::to_owned)
    }
}

/// Resolves every row of the file at `path`: imports first (a call looks in the files they
/// name first), then names. A Go import names a package: it resolves to each of its files, as
/// many rows as files (see [`super::gopkg`]), read through `go`, the view of the resource's
/// packages the caller keeps for its whole batch; names through `defs`, kept as long.
pub(crate) fn resolve(
    conn: &mut dyn Conn,
    go: &mut gopkg::View,
    defs: &mut Defs,
    resource: &str,
    path: &str,
    file_id: &str,
    rows: &mut Vec<RefRow>,
) -> Result<()> {
    let imported = if gopkg::is_go(path) {
        packages(conn, go, resource, file_id, rows)?
    } else {
        files(conn, resource, file_id, rows)?
    };
    defs.load(conn, resource, rows.iter().filter(|r| r.kind != "imports").map(|r| r.target.as_str()))?;
    for r in rows.iter_mut().filter(|r| r.kind != "imports") {
        r.to_id = defs.resolve(r, path, &imported);
    }
    Ok(())
}

/// Resolves each import to the first of its candidate paths that is a file (other than this
/// one); returns the paths imported.
fn files(conn: &mut dyn Conn, resource: &str, file_id: &str, rows: &mut [RefRow]) -> Result<HashSet<String>> {
    let candidates: Vec<Value> = rows
        .iter()
        .filter(|r| r.kind == "imports")
        .map(|r| Value::from(r.target.as_str()))
        .collect();
    let files: HashMap<String, String> = if candidates.is_empty() {
        HashMap::new()
    } else {
        query_in(
            conn,
            "SELECT file_path, id FROM mem_graph_nodes WHERE resource_id = ?1 AND type = 'file' \
               AND source = 'ast' AND file_path IN ({keys})",
            &[resource.into()],
            &candidates,
        )?
        .into_iter()
        .filter_map(|r| {
            let mut f = Fields::new(r);
            Some((f.text()?, f.text()?))
        })
        .collect()
    };
    let mut chosen: BTreeMap<i64, (i64, usize)> = BTreeMap::new();
    for (i, r) in rows.iter_mut().enumerate().filter(|(_, r)| r.kind == "imports") {
        r.to_id = None;
        if files.get(&r.target).is_some_and(|id| id != file_id) {
            let e = chosen.entry(r.ref_no).or_insert((r.rank, i));
            if r.rank < e.0 {
                *e = (r.rank, i);
            }
        }
    }
    let mut imported: HashSet<String> = HashSet::new();
    for &(_, i) in chosen.values() {
        rows[i].to_id = files.get(&rows[i].target).cloned();
        imported.insert(rows[i].target.clone());
    }
    Ok(imported)
}

/// Resolves each Go import to every file of the package it names (other than this one): the
/// import's row names the first, a row per further file (ranked 1, 2, …) the others. Rows a
/// previous resolution added are dropped first. Returns the paths imported.
fn packages(
    conn: &mut dyn Conn,
    go: &mut gopkg::View,
    resource: &str,
    file_id: &str,
    rows: &mut Vec<RefRow>,
) -> Result<HashSet<String>> {
    rows.retain(|r| r.kind != "imports" || r.rank == 0);
    let mut imported = HashSet::new();
    let mut more = Vec::new();
    for r in rows.iter_mut().filter(|r| r.kind == "imports") {
        r.to_id = None;
        let files = go.package(conn, resource, &r.target)?.iter().filter(|(_, id)| id != file_id);
        for (rank, (path, id)) in files.enumerate() {
            imported.insert(path.clone());
            if rank == 0 {
                r.to_id = Some(id.clone());
            } else {
                more.push(RefRow { rank: rank as i64, to_id: Some(id.clone()), ..r.clone() });
            }
        }
    }
    rows.extend(more);
    Ok(imported)
}

/// The edges the rows make: (from, to, type), sorted, distinct.
pub(crate) fn edges_of(rows: &[RefRow]) -> Vec<(String, String, &'static str)> {
    let mut out: Vec<_> = rows
        .iter()
        .filter_map(|r| Some((r.from_id.clone(), r.to_id.clone()?, r.kind)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The stored rows of `sql` (its columns: seq, file_id, then a row's), whose own parameters
/// are `fixed` before the keys.
fn load(conn: &mut dyn Conn, sql: &str, fixed: &[Value], keys: &[Value]) -> Result<Vec<(i64, String, RefRow)>> {
    Ok(query_in(conn, &format!("{sql}{{home}}"), fixed, keys)?
        .into_iter()
        .filter_map(|r| {
            let mut f = Fields::new(r);
            let (seq, file) = (f.int()?, f.text()?);
            Some((
                seq,
                file,
                RefRow {
                    from_id: f.text()?,
                    kind: kind_named(&f.text()?)?,
                    ref_no: f.int()?,
                    target: f.text()?,
                    rank: f.int()?,
                    line: f.int()?,
                    to_id: f.text(),
                },
            ))
        })
        .collect())
}

/// The columns [`load`] reads.
const ROW: &str = "SELECT seq, file_id, from_id, kind, ref_no, target, rank, line, to_id FROM mem_graph_refs";

/// Rows per `INSERT`.
const ROWS_PER_INSERT: usize = 64;

/// Replaces the file's rows with `rows`.
pub(crate) fn store(conn: &mut dyn Conn, resource: &str, file_id: &str, rows: &[RefRow]) -> Result<()> {
    conn.execute(
        "DELETE FROM mem_graph_refs WHERE file_id = ?1 AND resource_id = ?2",
        &[file_id.into(), resource.into()],
    )?;
    for chunk in shaped(rows, ROWS_PER_INSERT) {
        let mut params: Vec<Value> = vec![resource.into(), file_id.into()];
        for r in chunk {
            params.extend([
                r.from_id.as_str().into(),
                r.kind.into(),
                r.ref_no.into(),
                r.target.as_str().into(),
                r.rank.into(),
                r.line.into(),
                r.to_id.clone().into(),
            ]);
        }
        conn.execute(
            &format!(
                "INSERT INTO mem_graph_refs (resource_id, file_id, from_id, kind, ref_no, target, rank, line, to_id) \
                 VALUES {}",
                values("(?1, ?2, #, #, #, #, #, #, #)", chunk.len(), 3)
            ),
            &params,
        )?;
    }
    Ok(())
}

/// Makes the edges of `types` from the nodes `from_ids` exactly `wanted` (sorted): those no
/// longer wanted go, those missing (or stale, or ended) are added; those that stand are left
/// alone, so a small change moves few closure rows.
pub(crate) fn sync_edges(
    conn: &mut dyn Conn,
    from_ids: &[String],
    types: &[&str],
    wanted: &[(String, String, &'static str)],
) -> Result<()> {
    let keys: Vec<Value> = from_ids.iter().map(|id| Value::from(id.as_str())).collect();
    let current = query_in(
        conn,
        "SELECT id, from_id, to_id, type, CASE WHEN stale_at IS NULL AND invalid_at IS NULL THEN 1 ELSE 0 END \
         FROM mem_graph_edges WHERE from_id IN ({keys}){home}",
        &[],
        &keys,
    )?;
    let mut kept: HashSet<(String, String, String)> = HashSet::new();
    for r in current {
        let mut f = Fields::new(r);
        let (id, from, to, ty) = (f.value(), f.text().unwrap_or_default(), f.text().unwrap_or_default(), f.text().unwrap_or_default());
        if !types.contains(&ty.as_str()) {
            continue;
        }
        let found = wanted
            .binary_search_by(|(a, b, t)| (a.as_str(), b.as_str(), *t).cmp(&(from.as_str(), to.as_str(), ty.as_str())))
            .is_ok();
        if !found {
            route::execute(conn, "DELETE FROM mem_graph_edges WHERE id = ?1{home}", &[id])?;
        } else if f.int() == Some(1) {
            kept.insert((from, to, ty));
        }
    }
    let mut added = Vec::new();
    for (from, to, ty) in wanted {
        if !kept.contains(&(from.clone(), to.clone(), (*ty).to_owned())) {
            added.push(EdgeIn::parse(Some(from), Some(to), Some(ty), Some(r#"{"source":"ast"}"#))?);
        }
    }
    edges::edge_add_many(conn, added)?;
    Ok(())
}

/// After some files (`own`) changed or went: the references of the other files of the
/// resource that may now resolve differently — to a name they gained or lost (`gained`), to
/// one of their nodes that went (`gone`), or to the path of a file that came or went — are
/// resolved again. Only those rows are read, with the definitions of their names and the
/// imports of their files; a file whose import may now name another file is resolved whole
/// (its calls look there first). A name [`Defs::settled`] is looked up only in the files
/// that import one of `own`: adding a `new` to a file moves none of the thousands of
/// references to `new` elsewhere. Returns how many files changed. `defs` may hold names read
/// since the files were written, and is kept for the rest of the call.
pub(crate) fn relink_others(
    conn: &mut dyn Conn,
    defs: &mut Defs,
    resource: &str,
    own: &HashSet<String>,
    paths: &[&str],
    gained: &Gained,
    gone: &[String],
) -> Result<usize> {
    defs.load(conn, resource, gained.names())?;
    let (settled, moving): (Vec<_>, Vec<_>) = gained.0.iter().partition(|(n, g)| defs.settled(n, **g));
    let mut targets: Vec<Value> = moving.iter().map(|(n, _)| Value::from(n.as_str())).collect();
    targets.extend(paths.iter().map(|p| Value::from(*p)));
    // A Go file that came or went changes its folder's package; a go.mod, every package.
    let go = &mut gopkg::View::default();
    let go_mod = paths.iter().any(|p| gopkg::is_go_mod(p));
    if !go_mod && paths.iter().any(|p| gopkg::is_go(p)) {
        let modules = go.modules(conn, resource)?;
        for p in paths.iter().filter(|p| gopkg::is_go(p)) {
            targets.extend(gopkg::imports_of(gopkg::package_of(p), modules).into_iter().map(Value::from));
        }
    }
    targets.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    targets.dedup();
    let mut rows = load(conn, &format!("{ROW} WHERE resource_id = ?1 AND target IN ({{keys}})"), &[resource.into()], &targets)?;
    if go_mod {
        let go_files: Vec<Value> = gopkg::files(conn, resource)?.into_iter().map(|(_, id)| Value::from(id)).collect();
        rows.extend(load(conn, &format!("{ROW} WHERE kind = 'imports' AND file_id IN ({{keys}})"), &[], &go_files)?);
    }
    let gone: Vec<Value> = gone.iter().map(|g| Value::from(g.as_str())).collect();
    rows.extend(load(conn, &format!("{ROW} WHERE to_id IN ({{keys}})"), &[], &gone)?);
    if !settled.is_empty() {
        let settled: Vec<Value> = settled.iter().map(|(n, _)| Value::from(n.as_str())).collect();
        for file in importers(conn, resource, own)? {
            let sql = format!("{ROW} WHERE file_id = ?1 AND target IN ({{keys}})");
            rows.extend(load(conn, &sql, &[file.into()], &settled)?);
        }
    }
    rows.retain(|(_, f, _)| !own.contains(f));
    rows.sort_by_key(|(seq, ..)| *seq);
    rows.dedup_by_key(|(seq, ..)| *seq);
    let whole: BTreeSet<String> = rows.iter().filter(|(.., r)| r.kind == "imports").map(|(_, f, _)| f.clone()).collect();
    let mut changed = 0;
    for f in &whole {
        changed += usize::from(relink(conn, go, defs, resource, f)?);
    }
    rows.retain(|(_, f, _)| !whole.contains(f));
    if rows.is_empty() {
        return Ok(changed);
    }
    let files: Vec<Value> = rows.iter().map(|(_, f, _)| f.as_str()).collect::<BTreeSet<_>>().into_iter().map(Value::from).collect();
    let mut paths: HashMap<String, String> = HashMap::new();
    let in_resource = [Value::from(resource)];
    let sql = "SELECT id, file_path FROM mem_graph_nodes WHERE id IN ({keys}) AND resource_id = ?1";
    for r in query_in(conn, sql, &in_resource, &files)? {
        let mut f = Fields::new(r);
        if let (Some(id), Some(p)) = (f.text(), f.text()) {
            paths.insert(id, p);
        }
    }
    let mut imported: HashMap<String, HashSet<String>> = HashMap::new();
    for r in query_in(
        conn,
        "SELECT r.file_id, n.file_path FROM mem_graph_refs r JOIN mem_graph_nodes n ON n.id = r.to_id \
         AND n.resource_id = r.resource_id WHERE r.kind = 'imports' AND r.file_id IN ({keys}) \
         AND r.resource_id = ?1",
        &in_resource,
        &files,
    )? {
        let mut f = Fields::new(r);
        if let (Some(id), Some(p)) = (f.text(), f.text()) {
            imported.entry(id).or_default().insert(p);
        }
    }
    defs.load(conn, resource, rows.iter().map(|(.., r)| r.target.as_str()))?;
    let none = HashSet::new();
    // The nodes whose edges change, by file.
    let mut moved: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (seq, file, r) in &rows {
        // References of a file whose node is gone make no edge: nothing to resolve.
        let Some(path) = paths.get(file) else { continue };
        let to = defs.resolve(r, path, imported.get(file).unwrap_or(&none));
        if to != r.to_id {
            conn.execute(
                "UPDATE mem_graph_refs SET to_id = ?1 WHERE seq = ?2 AND resource_id = ?3",
                &[to.into(), (*seq).into(), resource.into()],
            )?;
            moved.entry(file.clone()).or_default().insert(r.from_id.clone());
        }
    }
    for (file, from) in &moved {
        let all = load(conn, &format!("{ROW} WHERE file_id IN ({{keys}})"), &[], &[file.as_str().into()])?;
        let rows: Vec<RefRow> = all.into_iter().map(|(.., r)| r).filter(|r| from.contains(&r.from_id)).collect();
        let from: Vec<String> = from.iter().cloned().collect();
        sync_edges(conn, &from, REF_TYPES, &edges_of(&rows))?;
    }
    Ok(changed + moved.len())
}

/// The files, other than `own`, whose imports resolve to one of `own`.
fn importers(conn: &mut dyn Conn, resource: &str, own: &HashSet<String>) -> Result<BTreeSet<String>> {
    let keys: Vec<Value> = own.iter().map(|f| Value::from(f.as_str())).collect();
    let sql = "SELECT file_id FROM mem_graph_refs WHERE kind = 'imports' AND to_id IN ({keys}) AND resource_id = ?1";
    Ok(query_in(conn, sql, &[resource.into()], &keys)?
        .into_iter()
        .filter_map(|r| Fields::new(r).text())
        .filter(|f| !own.contains(f))
        .collect())
}

/// Resolves a file's stored references again; where one now names another node, its row and
/// the file's edges follow. `false` when nothing changed.
fn relink(conn: &mut dyn Conn, go: &mut gopkg::View, defs: &mut Defs, resource: &str, file_id: &str) -> Result<bool> {
    let Some(path) = conn
        .query_value(
            "SELECT file_path FROM mem_graph_nodes WHERE id = ?1 AND resource_id = ?2",
            &[file_id.into(), resource.into()],
        )?
        .and_then(Value::into_string)
    else {
        return Ok(false);
    };
    let stored = load(conn, &format!("{ROW} WHERE file_id IN ({{keys}})"), &[], &[file_id.into()])?;
    let seqs: Vec<i64> = stored.iter().map(|(seq, ..)| *seq).collect();
    let before: Vec<RefRow> = stored.into_iter().map(|(.., r)| r).collect();
    let mut rows = before.clone();
    resolve(conn, go, defs, resource, &path, file_id, &mut rows)?;
    if rows == before {
        return Ok(false);
    }
    // The same references row for row (only targets moved): each changed row is updated;
    // otherwise (a Go package gained or lost files) the file's rows are written again.
    let same = |a: &RefRow, b: &RefRow| (a.ref_no, a.rank, a.kind) == (b.ref_no, b.rank, b.kind);
    if rows.len() == before.len() && rows.iter().zip(&before).all(|(a, b)| same(a, b)) {
        for ((seq, old), new) in seqs.iter().zip(&before).zip(&rows) {
            if old.to_id != new.to_id {
                conn.execute(
                    "UPDATE mem_graph_refs SET to_id = ?1 WHERE seq = ?2 AND resource_id = ?3",
                    &[new.to_id.clone().into(), (*seq).into(), resource.into()],
                )?;
            }
        }
    } else {
        store(conn, resource, file_id, &rows)?;
    }
    let mut from: Vec<String> = rows.iter().map(|r| r.from_id.clone()).collect();
    from.sort();
    from.dedup();
    sync_edges(conn, &from, REF_TYPES, &edges_of(&rows))?;
    Ok(true)
}
