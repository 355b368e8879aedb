//! `agentmem index`: a source tree into the code graph.
//!
//! The walk ([`walk`]) is the CLI's. Every write is a call of the core: `graph_index_files`
//! for the files whose size or modification time differs from what their node recorded (the
//! core itself skips a file whose content hash is unchanged), in batches of `--batch`, and
//! `graph_remove_file` for each indexed file that is gone. Each call is a transaction of its
//! own; a batch the core refuses is indexed again file by file, so the file it refuses is
//! reported and the others are written.

mod batch;
mod held;
mod tally;
mod walk;

use crate::args;
use crate::db::{self, Db, Result};
use crate::output::{self, Style};
use crate::progress::Progress;
use batch::Batch;
use foldhash::{HashSet, HashSetExt};
use held::{held_at, Held, Stat};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tally::Tally;
use walk::{Found, Walk};

/// Bytes read to tell a binary file (a NUL among them), as git does.
const SNIFF: usize = 8000;

/// A run of `agentmem index`, begun before the database is open: the tree is known to be a
/// folder, and unless the run watches, its walk is under way.
pub struct Begun {
    root: PathBuf,
    resource: String,
    walk: Option<Walk>,
}

/// Begins the run `a`. Opening the database takes a tenth of indexing one changed file in a
/// large tree; the walk does not wait for it. A run that watches walks after its watcher is
/// set, so that no change is missed.
pub fn begin(a: &args::Index) -> Result<Begun> {
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
    let walk = (!a.watch).then(|| Walk::start(root.clone(), a.all));
    Ok(Begun {
        root,
        resource,
        walk,
    })
}

/// Runs `a`, begun by [`begin`]: its answer, or with `--watch` one line per pass until the
/// watch ends.
pub fn run(
    db: &mut dyn Db,
    style: Style,
    show: bool,
    a: args::Index,
    begun: Begun,
) -> Result<String> {
    let Begun {
        root,
        resource,
        walk,
    } = begun;
    let mut one_pass = |scope: Scope<'_>, known: &mut HashSet<String>, show: bool| {
        pass(db, show, &a, &root, &resource, scope, known)
    };
    if let Some(walk) = walk {
        let answer = one_pass(Scope::Tree(walk), &mut HashSet::new(), show)?;
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
    let walk = Walk::start(root.clone(), a.all);
    let first = one_pass(Scope::Tree(walk), &mut known, show)?;
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
        let scope = match files.as_deref() {
            Some(files) => Scope::Files(files),
            None => Scope::Tree(Walk::start(root.clone(), a.all)),
        };
        let answer = one_pass(scope, &mut known, false)?;
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

/// What a pass looks at: the whole tree (its walk under way), or only some of the files the
/// graph holds.
enum Scope<'a> {
    Tree(Walk),
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
        let rel = walk::relative(root, path).filter(|r| !r.is_empty())?;
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
    let whole = matches!(scope, Scope::Tree(_));
    let mut run = Run {
        t: Tally::default(),
        seen: HashSet::new(),
        batch: Batch::new(a.batch.max(1)),
        progress: Progress::start("index", show),
        max_size: a.max_size,
    };
    let (held, found) = match scope {
        Scope::Tree(walk) => {
            // The walk goes on while the graph's files are read.
            let held = Arc::new(held::read(db, resource)?);
            walk.know(&held);
            // A tree the graph already holds: the files that changed are indexed as the walk
            // finds them, while it goes on, so one changed file in a large tree is written
            // before the walk ends. A tree indexed from nothing waits for the whole walk,
            // so that its batches hold the files that refer to each other.
            let mut early = HashSet::new();
            if held.is_empty() {
                if db.in_process() {
                    tables_ahead();
                }
            } else {
                let mut next = 0;
                while let Some(files) = walk.changed(&held, &mut next) {
                    for (rel, path, stat) in files {
                        early.insert(rel.clone());
                        run.file(db, resource, &held, rel, path, stat)?;
                    }
                    run.flush(db, resource)?;
                }
            }
            let mut found = walk.finish()?;
            found.retain(|f| !matches!(f, Found::File { rel, .. } if early.contains(rel)));
            (held, found)
        }
        // Held, and sent again whatever their stat: the core skips an unchanged content.
        Scope::Files(rels) => (
            Arc::new(rels.iter().map(|r| (r.clone(), None)).collect()),
            walk::stat_files(root, rels),
        ),
    };
    run.batch.expect(
        found
            .iter()
            .map(|f| match f {
                Found::File { rel, stat, .. } if run.reads(&held, rel, *stat) => stat.0,
                _ => 0,
            })
            .sum(),
    );
    for found in found {
        match found {
            Found::File { rel, path, stat } => run.file(db, resource, &held, rel, path, stat)?,
            Found::NotUtf8 => *run.t.skipped.entry("path not UTF-8").or_default() += 1,
            Found::Failed(path, e) => run.t.failed.push(json!({"path": path, "error": e})),
        }
    }
    run.flush(db, resource)?;
    let Run {
        mut t,
        seen,
        progress,
        ..
    } = run;
    for path in held.keys().filter(|p| !seen.contains(*p)) {
        db::scalar(
            db,
            "graph_remove_file",
            &[Some(resource), Some(path.as_str())],
        )?;
        t.removed += 1;
        known.remove(path);
    }
    if whole {
        *known = seen;
    } else {
        known.extend(seen);
    }
    progress.finish(&format!(
        "{} files, {} indexed, {} removed",
        t.files, t.indexed, t.removed
    ));
    // A file indexed during the walk can fail before one earlier in path order: the answer
    // lists failures by path, whatever the timing.
    t.failed
        .sort_by(|x, y| x["path"].as_str().cmp(&y["path"].as_str()));
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

/// A pass under way.
struct Run {
    t: Tally,
    seen: HashSet<String>,
    batch: Batch,
    progress: Progress,
    max_size: u64,
}

impl Run {
    /// Whether the file `rel` at `stat` is read: it is not too large, nor held at that stat.
    /// Only these count in the source still to come of a batch (see [`Batch::expect`]).
    fn reads(&self, held: &Held, rel: &str, stat: Stat) -> bool {
        stat.0 <= self.max_size && !held_at(held, rel, stat)
    }

    /// Takes the file `rel` the walk found at `stat`: counted, and read into the batch when
    /// [`Run::reads`] it.
    fn file(
        &mut self,
        db: &mut dyn Db,
        resource: &str,
        held: &Held,
        rel: String,
        path: PathBuf,
        stat: Stat,
    ) -> Result<()> {
        let t = &mut self.t;
        t.files += 1;
        if stat.0 > self.max_size {
            *t.skipped.entry("larger than --max-size").or_default() += 1;
            return Ok(());
        }
        if held_at(held, &rel, stat) {
            t.unchanged += 1;
            self.seen.insert(rel);
            return Ok(());
        }
        self.batch.taken(stat.0);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                t.failed.push(json!({"path": rel, "error": e.to_string()}));
                return Ok(());
            }
        };
        self.progress.item(bytes.len());
        if bytes[..bytes.len().min(SNIFF)].contains(&0) {
            *t.skipped.entry("binary").or_default() += 1;
            return Ok(());
        }
        let Ok(text) = String::from_utf8(bytes) else {
            *t.skipped.entry("not UTF-8").or_default() += 1;
            return Ok(());
        };
        if db.in_process() {
            tables_ahead();
        }
        let bytes = text.len();
        self.batch.push(
            json!({"path": rel, "source": text, "metadata": {"size": stat.0, "mtime": stat.1}}),
            bytes,
        );
        self.seen.insert(rel);
        if self.batch.full() {
            // A pass that fills a batch is a large write.
            db.expect_bulk()?;
            self.flush(db, resource)?;
        }
        Ok(())
    }

    fn flush(&mut self, db: &mut dyn Db, resource: &str) -> Result<()> {
        self.batch.flush(db, resource, &mut self.t, &mut self.seen)
    }
}
