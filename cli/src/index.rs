//! `agentmem index`: a source tree into the code graph.
//!
//! The walk is the CLI's — the `ignore` crate, as ripgrep walks: `.gitignore`, `.ignore` and
//! hidden files respected, symbolic links not followed (so a link loop is never entered).
//! Every write is a call of the core: `graph_index_files` for the files whose size or
//! modification time differs from what their node recorded (the core itself skips a file
//! whose content hash is unchanged), in batches of `--batch`, and `graph_remove_file` for
//! each indexed file that is gone. Each call is a transaction of its own; a batch the core
//! refuses is indexed again file by file, so the file it refuses is reported and the others
//! are written.

use crate::args;
use crate::db::{self, Db, Result};
use crate::output::{self, Style};
use crate::progress::Progress;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, UNIX_EPOCH};

/// Bytes read to tell a binary file (a NUL among them), as git does.
const SNIFF: usize = 8000;

/// What a run did.
#[derive(Default)]
struct Tally {
    files: u64,
    indexed: u64,
    unchanged: u64,
    removed: u64,
    skipped: BTreeMap<&'static str, u64>,
    failed: Vec<Json>,
    symbols: u64,
    chunks: u64,
    edges: BTreeMap<String, u64>,
    bytes: u64,
}

/// A file's size and modification time, as its node records them.
type Stat = (u64, i64);

/// The files of a resource the graph holds, with the stat each was indexed at (`None` when
/// its node records none: indexed by another client).
type Held = HashMap<String, Option<Stat>>;

pub fn run(db: &mut dyn Db, style: Style, show: bool, a: args::Index) -> Result<String> {
    let root = std::fs::canonicalize(&a.dir).map_err(|e| format!("{}: {e}", a.dir))?;
    if !root.is_dir() {
        return Err(format!("{}: not a folder", a.dir));
    }
    let resource = match &a.resource {
        Some(r) => r.clone(),
        None => format!(
            "project:{}",
            root.file_name()
                .map_or("root".into(), |n| n.to_string_lossy())
        ),
    };
    if !a.watch {
        let answer = pass(
            db,
            show,
            &a,
            &root,
            &resource,
            Scope::Tree,
            &mut HashSet::new(),
        )?;
        return Ok(output::json(style, &answer));
    }
    // Watching starts before the first pass, so no change made during it is missed; one line
    // of JSON per pass, each pass after the tree settles. Symbolic links are not followed
    // here either: a link loop would never end.
    let (tx, rx) = std::sync::mpsc::channel();
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = <notify::RecommendedWatcher as notify::Watcher>::new(tx, config)
        .map_err(|e| format!("watching {}: {e}", a.dir))?;
    notify::Watcher::watch(&mut watcher, &root, notify::RecursiveMode::Recursive)
        .map_err(|e| format!("watching {}: {e}", a.dir))?;
    let mut known = HashSet::new();
    let first = pass(db, show, &a, &root, &resource, Scope::Tree, &mut known)?;
    output::print(&output::json(
        Style {
            json: true,
            ..style
        },
        &first,
    ));
    // A pass reads the tree: the events of reading are not changes.
    let changed = |e: &notify::Event| {
        use notify::EventKind::{Any, Create, Modify, Remove};
        match e.kind {
            Create(_) | Remove(_) | Any => true,
            Modify(m) => !matches!(m, notify::event::ModifyKind::Metadata(_)),
            _ => false,
        }
    };
    let mut heard: Vec<PathBuf> = Vec::new();
    let note = |e: notify::Result<notify::Event>, heard: &mut Vec<PathBuf>| match e {
        Ok(e) if changed(&e) => {
            heard.extend(e.paths);
            true
        }
        Ok(_) => false,
        // An event lost or unreadable: only a walk knows what changed.
        Err(_) => {
            heard.push(root.clone());
            true
        }
    };
    while let Ok(e) = rx.recv() {
        if !note(e, &mut heard) {
            continue;
        }
        // Until a quiet moment: a save is several events, a checkout thousands.
        while let Ok(e) = rx.recv_timeout(SETTLE) {
            note(e, &mut heard);
        }
        let files = only_known(&root, &known, &heard);
        heard.clear();
        let scope = files.as_deref().map_or(Scope::Tree, Scope::Files);
        let answer = pass(db, false, &a, &root, &resource, scope, &mut known)?;
        if answer["indexed"] != 0 || answer["removed"] != 0 {
            output::print(&output::json(
                Style {
                    json: true,
                    ..style
                },
                &answer,
            ));
        }
    }
    Ok(String::new())
}

/// Builds the token tables on a thread of their own, once per process: the first changed
/// file's chunks need them, and until then the pass reads, parses and writes the file's
/// nodes (on SQLite the build was a fifth of indexing one changed file).
fn tables_ahead() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::thread::spawn(agentmem_core::prepare_tables);
    });
}

/// What a pass looks at: the whole tree, or only some of the files the graph holds.
#[derive(Clone, Copy)]
enum Scope<'a> {
    Tree,
    Files(&'a [String]),
}

/// The files a pass of `--watch` needs to look at, when the changes it heard of touched
/// only files the graph holds (an agent editing its code); `None` when only a walk can tell
/// — a new file or folder (perhaps ignored, perhaps not), an ignore file, a folder of held
/// files gone, an event lost. A path that is gone again and held nothing (an editor's
/// temporary file) changed nothing.
fn only_known(root: &Path, known: &HashSet<String>, heard: &[PathBuf]) -> Option<Vec<String>> {
    let mut out = std::collections::BTreeSet::new();
    for path in heard {
        let rel = relative(root, path).filter(|r| !r.is_empty())?;
        if known.contains(&rel) {
            out.insert(rel);
            continue;
        }
        let inside = format!("{rel}/");
        if path.symlink_metadata().is_ok() || known.iter().any(|k| k.starts_with(&inside)) {
            return None;
        }
    }
    Some(out.into_iter().collect())
}

/// How long the tree must stay still before a pass of `--watch`.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(20);

/// One pass over the tree (or the files of `scope`): what changed is indexed, what is gone
/// removed; the summary. `known` becomes the files the graph holds after it.
fn pass(
    db: &mut dyn Db,
    show: bool,
    a: &args::Index,
    root: &Path,
    resource: &str,
    scope: Scope<'_>,
    known: &mut HashSet<String>,
) -> Result<Json> {
    let start = Instant::now();
    let resource = resource.to_owned();
    let (held, found) = match scope {
        // The walk and the read of what the graph holds overlap. Once that read is done, the
        // walk compares each file's stat with it as it goes: on SQLite, where this process
        // builds the token tables, the first file that changed starts their build, while the
        // walk goes on.
        Scope::Tree => {
            let mut read = OnceLock::new();
            let early = db.in_process().then_some(&read);
            let (held, found) = std::thread::scope(|s| {
                let walking = s.spawn(|| walk(root, a.all, early));
                let held = held(db, &resource).map(|h| {
                    let _ = read.set(h);
                });
                (held, walking.join())
            });
            (held.map(|()| read.take().unwrap_or_default()), found)
        }
        // Held, and sent again whatever their stat: the core skips an unchanged content.
        Scope::Files(rels) => (
            Ok(rels.iter().map(|r| (r.clone(), None)).collect()),
            Ok(stat_files(root, rels)),
        ),
    };
    let held = held?;
    let found = found.map_err(|_| "the walk of the tree failed".to_owned())?;
    let mut seen: HashSet<String> = HashSet::new();
    let mut t = Tally::default();
    let p = Progress::start("index", show);
    let mut batch = Batch::new(a.batch.max(1));
    for found in found {
        let (rel, path, stat) = match found {
            Found::File { rel, path, stat } => (rel, path, stat),
            Found::NotUtf8 => {
                *t.skipped.entry("path not UTF-8").or_default() += 1;
                continue;
            }
            Found::Failed(path, e) => {
                t.failed.push(json!({"path": path, "error": e}));
                continue;
            }
        };
        t.files += 1;
        if stat.0 > a.max_size {
            *t.skipped.entry("larger than --max-size").or_default() += 1;
            continue;
        }
        seen.insert(rel.clone());
        if held_at(&held, &rel, stat) {
            t.unchanged += 1;
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                t.failed.push(json!({"path": rel, "error": e.to_string()}));
                seen.remove(&rel);
                continue;
            }
        };
        p.item(bytes.len());
        if bytes[..bytes.len().min(SNIFF)].contains(&0) {
            *t.skipped.entry("binary").or_default() += 1;
            seen.remove(&rel);
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            *t.skipped.entry("not UTF-8").or_default() += 1;
            seen.remove(&rel);
            continue;
        };
        if db.in_process() {
            tables_ahead();
        }
        let bytes = text.len();
        batch.push(
            json!({"path": rel, "source": text, "metadata": {"size": stat.0, "mtime": stat.1}}),
            bytes,
        );
        if batch.full() {
            batch.flush(db, &resource, &mut t, &mut seen)?;
        }
    }
    batch.flush(db, &resource, &mut t, &mut seen)?;
    for path in held.keys().filter(|p| !seen.contains(*p)) {
        db::scalar(
            db,
            "graph_remove_file",
            &[Some(resource.as_str()), Some(path.as_str())],
        )?;
        t.removed += 1;
        known.remove(path);
    }
    match scope {
        Scope::Tree => *known = seen,
        Scope::Files(_) => known.extend(seen),
    }
    p.finish(&format!(
        "{} files, {} indexed, {} removed",
        t.files, t.indexed, t.removed
    ));
    Ok(json!({
        "resource": resource,
        "files": t.files,
        "indexed": t.indexed,
        "unchanged": t.unchanged,
        "removed": t.removed,
        "skipped": t.skipped,
        "failed": t.failed,
        "written": {"bytes": t.bytes, "symbols": t.symbols, "chunks": t.chunks, "edges": t.edges},
        "seconds": (start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    }))
}

impl Tally {
    /// Counts the answer of `graph_index_files` for `n` files of `bytes` bytes.
    fn add(&mut self, answer: &Json, n: usize, bytes: usize) {
        let count = |k: &str| answer.get(k).and_then(Json::as_u64).unwrap_or(0);
        self.indexed += count("changed");
        self.unchanged += n as u64 - count("changed");
        self.bytes += bytes as u64;
        self.symbols += count("symbols");
        self.chunks += count("chunks");
        if let Some(Json::Object(by_type)) = answer.get("edges") {
            for (ty, c) in by_type {
                *self.edges.entry(ty.clone()).or_default() += c.as_u64().unwrap_or(0);
            }
        }
    }
}

/// The files of `resource` the graph holds.
fn held(db: &mut dyn Db, resource: &str) -> Result<Held> {
    let mut out = HashMap::new();
    let sql = format!(
        "SELECT file_path, metadata FROM mem_graph_nodes WHERE resource_id = {} \
         AND type = 'file' AND source = 'ast'",
        db.placeholder(1, db::Type::Text)
    );
    db.each(&sql, &[Some(resource)], &mut |row| {
        let mut cells = row.into_iter();
        let path = cells.next().and_then(|v| v.as_str().map(str::to_owned));
        // SQLite gives the metadata as text, Postgres as a value.
        let recorded = match cells.next() {
            Some(Json::String(s)) => serde_json::from_str::<Recorded>(&s).ok(),
            Some(v) => serde_json::from_value::<Recorded>(v).ok(),
            None => None,
        };
        let stat = recorded.and_then(|r| r.size.zip(r.mtime));
        if let Some(p) = path {
            out.insert(p, stat);
        }
        Ok(())
    })?;
    Ok(out)
}

/// The stat a file node's metadata records. Its other keys (the parse's error ranges, a
/// client's own) are skipped, not built into a tree of values: every pass reads the metadata
/// of every file the graph holds.
#[derive(serde::Deserialize)]
struct Recorded {
    size: Option<u64>,
    mtime: Option<i64>,
}

/// What the walk found.
enum Found {
    File {
        rel: String,
        path: PathBuf,
        stat: Stat,
    },
    NotUtf8,
    Failed(Option<String>, String),
}

/// The files under `root` (those the code graph reads unless `all`), with their stat, in
/// the order of their paths. The walk runs on every core: on a warm cache it waits on the
/// kernel's path lookups, not on the disk.
fn walk(root: &Path, all: bool, held: Option<&OnceLock<Held>>) -> Vec<Found> {
    let found = Mutex::new(Vec::new());
    // `.gitignore` counts in a tree that is not a git checkout too.
    ignore::WalkBuilder::new(root)
        .follow_links(false)
        .require_git(false)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                let item = match entry {
                    Err(e) => Some(Found::Failed(None, e.to_string())),
                    Ok(e) if !e.file_type().is_some_and(|f| f.is_file()) => None,
                    Ok(e) => match relative(root, e.path()) {
                        None => Some(Found::NotUtf8),
                        Some(rel) if !all && !agentmem_core::code_reads(&rel) => None,
                        Some(rel) => Some(match e.metadata() {
                            Ok(meta) => {
                                let stat = stat_of(&meta);
                                if held
                                    .and_then(OnceLock::get)
                                    .is_some_and(|h| !held_at(h, &rel, stat))
                                {
                                    tables_ahead();
                                }
                                Found::File {
                                    rel,
                                    path: e.into_path(),
                                    stat,
                                }
                            }
                            Err(err) => Found::Failed(Some(rel), err.to_string()),
                        }),
                    },
                };
                if let Some(item) = item {
                    found.lock().unwrap_or_else(|p| p.into_inner()).push(item);
                }
                ignore::WalkState::Continue
            })
        });
    let mut out = found.into_inner().unwrap_or_else(|p| p.into_inner());
    out.sort_by(|a, b| key(a).cmp(key(b)));
    out
}

/// The files `rels` (relative to `root`) that are still files, as [`walk`] finds them.
fn stat_files(root: &Path, rels: &[String]) -> Vec<Found> {
    rels.iter()
        .filter_map(|rel| {
            let path = root.join(rel);
            match path.symlink_metadata() {
                Ok(meta) if meta.is_file() => Some(Found::File {
                    rel: rel.clone(),
                    path,
                    stat: stat_of(&meta),
                }),
                Ok(_) => None,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => Some(Found::Failed(Some(rel.clone()), e.to_string())),
            }
        })
        .collect()
}

fn key(f: &Found) -> &str {
    match f {
        Found::File { rel, .. } => rel,
        Found::Failed(Some(rel), _) => rel,
        _ => "",
    }
}

/// `path` relative to `root`, with `/` between its parts; `None` when not UTF-8.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?.to_str()?;
    Some(match std::path::MAIN_SEPARATOR {
        '/' => rel.to_owned(),
        sep => rel.replace(sep, "/"),
    })
}

/// A file's size, and its modification time in nanoseconds since the epoch (0 when the
/// system has none).
fn stat_of(meta: &std::fs::Metadata) -> Stat {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    (meta.len(), mtime)
}

/// Whether the graph holds the file `rel` as indexed at `stat` (then it is not read again).
fn held_at(held: &Held, rel: &str, stat: Stat) -> bool {
    held.get(rel) == Some(&Some(stat))
}

/// Files waiting to be indexed together: a call of `graph_index_files` writes a batch's
/// nodes before it resolves their references, so references between its files are written
/// once, not resolved elsewhere first and moved. A batch may grow as large as everything
/// sent before it: a tree indexed from nothing then goes in a few calls, each of which
/// builds the closure once instead of keeping it edge by edge.
struct Batch {
    size: usize,
    files: Vec<Json>,
    bytes: usize,
    sent_files: usize,
    sent_bytes: usize,
}

/// Source bytes per call at most.
const BATCH_BYTES: usize = 8 << 20;

impl Batch {
    fn new(size: usize) -> Batch {
        Batch {
            size,
            files: Vec::new(),
            bytes: 0,
            sent_files: 0,
            sent_bytes: 0,
        }
    }

    fn push(&mut self, file: Json, bytes: usize) {
        self.files.push(file);
        self.bytes += bytes;
    }

    fn full(&self) -> bool {
        self.files.len() >= self.size.max(self.sent_files)
            || self.bytes >= BATCH_BYTES.max(self.sent_bytes)
    }

    /// Indexes the batch in one call; when the core refuses it, each file alone, so the one
    /// it refuses is reported (and left out of the files seen) and the others are written.
    fn flush(
        &mut self,
        db: &mut dyn Db,
        resource: &str,
        t: &mut Tally,
        seen: &mut HashSet<String>,
    ) -> Result<()> {
        let files = std::mem::take(&mut self.files);
        let bytes = std::mem::take(&mut self.bytes);
        if files.is_empty() {
            return Ok(());
        }
        self.sent_files += files.len();
        self.sent_bytes += bytes;
        let all = Json::Array(files).to_string();
        if let Ok(answer) = db::scalar(db, "graph_index_files", &[Some(resource), Some(&all)]) {
            let n = answer.get("files").and_then(Json::as_u64).unwrap_or(0) as usize;
            t.add(&answer, n, bytes);
            return Ok(());
        }
        let files: Vec<Json> = serde_json::from_str(&all).map_err(|e| e.to_string())?;
        for f in files {
            let size = f["source"].as_str().map_or(0, str::len);
            let one = Json::Array(vec![f.clone()]).to_string();
            match db::scalar(db, "graph_index_files", &[Some(resource), Some(&one)]) {
                Ok(answer) => t.add(&answer, 1, size),
                Err(e) => {
                    let path = f["path"].as_str().unwrap_or_default().to_owned();
                    seen.remove(&path);
                    t.failed.push(json!({"path": path, "error": e}));
                }
            }
        }
        Ok(())
    }
}
