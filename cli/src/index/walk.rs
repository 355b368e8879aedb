//! The walk of a tree, on threads of its own: it starts before the database is open and
//! goes on while the pass reads what the graph holds and indexes the files that changed.
//!
//! The walk is the `ignore` crate's, as ripgrep walks: `.gitignore`, `.ignore` and hidden
//! files respected, symbolic links not followed (so a link loop is never entered). It runs
//! on every core: on a warm cache it waits on the kernel's path lookups, not on the disk.

use super::held::{held_at, Held, Stat};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::UNIX_EPOCH;

/// What the walk found.
pub(super) enum Found {
    File {
        rel: String,
        path: PathBuf,
        stat: Stat,
    },
    NotUtf8,
    Failed(Option<String>, String),
}

/// A file the walk found whose stat differs from the one the graph holds.
pub(super) type Changed = (String, PathBuf, Stat);

/// A walk under way.
pub(super) struct Walk {
    shared: Arc<Shared>,
}

/// What the walker threads and the pass share. Once the pass tells the walk what the graph
/// holds, a walker wakes the pass at each file that changed, and at the end.
struct Shared {
    held: OnceLock<Arc<Held>>,
    state: Mutex<State>,
    grew: Condvar,
}

#[derive(Default)]
struct State {
    found: Vec<Found>,
    done: bool,
    /// A walker thread panicked: what was found is not the tree.
    broken: bool,
}

impl Walk {
    /// Starts walking `root` (the files the code graph reads unless `all`).
    pub(super) fn start(root: PathBuf, all: bool) -> Walk {
        let shared = Arc::new(Shared {
            held: OnceLock::new(),
            state: Mutex::new(State::default()),
            grew: Condvar::new(),
        });
        let walker = shared.clone();
        std::thread::spawn(move || {
            let whole = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                walk(&root, all, &walker)
            }))
            .is_ok();
            let mut s = walker.lock();
            s.done = true;
            s.broken = !whole;
            drop(s);
            walker.grew.notify_all();
        });
        Walk { shared }
    }

    /// Tells the walk which files the graph holds, at which stat.
    pub(super) fn know(&self, held: &Arc<Held>) {
        let _ = self.shared.held.set(held.clone());
    }

    /// The files found since the last call (from the `next`th on) that changed, in the
    /// order of their paths; waits for one, and gives `None` once the walk is over (what it
    /// found last is left to [`Walk::finish`]).
    pub(super) fn changed(&self, held: &Held, next: &mut usize) -> Option<Vec<Changed>> {
        let mut s = self.shared.lock();
        loop {
            if s.done {
                return None;
            }
            let mut new: Vec<Changed> = s.found[*next..]
                .iter()
                .filter_map(|f| match f {
                    Found::File { rel, path, stat } if !held_at(held, rel, *stat) => {
                        Some((rel.clone(), path.clone(), *stat))
                    }
                    _ => None,
                })
                .collect();
            *next = s.found.len();
            if !new.is_empty() {
                new.sort_by(|a, b| a.0.cmp(&b.0));
                return Some(new);
            }
            s = self.shared.grew.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Everything the walk found, in the order of the paths, once it is over.
    pub(super) fn finish(self) -> Result<Vec<Found>, String> {
        let mut s = self.shared.lock();
        while !s.done {
            s = self.shared.grew.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        if s.broken {
            return Err("the walk of the tree failed".into());
        }
        let mut out = std::mem::take(&mut s.found);
        out.sort_by(|a, b| key(a).cmp(key(b)));
        Ok(out)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds what a walker found; wakes the pass when it is a file that changed.
    fn push(&self, item: Found) {
        let changed = match (&item, self.held.get()) {
            (Found::File { rel, stat, .. }, Some(held)) => !held_at(held, rel, *stat),
            _ => false,
        };
        self.lock().found.push(item);
        if changed {
            self.grew.notify_one();
        }
    }
}

/// Walks `root` into `shared`.
fn walk(root: &Path, all: bool, shared: &Shared) {
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
                            Ok(meta) => Found::File {
                                rel,
                                path: e.into_path(),
                                stat: stat_of(&meta),
                            },
                            Err(err) => Found::Failed(Some(rel), err.to_string()),
                        }),
                    },
                };
                if let Some(item) = item {
                    shared.push(item);
                }
                ignore::WalkState::Continue
            })
        });
}

/// The files `rels` (relative to `root`) that are still files, as the walk finds them.
pub(super) fn stat_files(root: &Path, rels: &[String]) -> Vec<Found> {
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
pub(super) fn relative(root: &Path, path: &Path) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use foldhash::HashMapExt;

    /// Whenever the pass learns what the graph holds, each file is given once: changed ones
    /// either as the walk finds them or at its end, the others at its end, in path order.
    #[test]
    fn each_file_once_whenever_the_graph_is_known() {
        let root = std::env::temp_dir().join(format!("agentmem-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in 0..20 {
            std::fs::create_dir_all(root.join(format!("d{d:02}"))).unwrap();
            for f in 0..10 {
                std::fs::write(root.join(format!("d{d:02}/f{f}.rs")), "fn f() {}\n").unwrap();
            }
        }
        let all: Vec<String> = (0..20)
            .flat_map(|d| (0..10).map(move |f| format!("d{d:02}/f{f}.rs")))
            .collect();
        for pause in [0, 1, 5] {
            let walk = Walk::start(root.canonicalize().unwrap(), false);
            std::thread::sleep(std::time::Duration::from_millis(pause));
            // Every third file is held at its stat; the others changed.
            let mut held = Held::new();
            for (i, rel) in all.iter().enumerate() {
                let stat = (i % 3 == 0).then(|| {
                    let meta = root.join(rel).symlink_metadata().unwrap();
                    stat_of(&meta)
                });
                held.insert(rel.clone(), stat.or(Some((0, 0))));
            }
            let held = Arc::new(held);
            walk.know(&held);
            let mut early = Vec::new();
            let mut next = 0;
            while let Some(files) = walk.changed(&held, &mut next) {
                assert!(files.windows(2).all(|w| w[0].0 < w[1].0));
                assert!(files.iter().all(|f| !held_at(&held, &f.0, f.2)));
                early.extend(files.into_iter().map(|f| f.0));
            }
            let rest: Vec<String> = walk
                .finish()
                .unwrap()
                .into_iter()
                .map(|f| key(&f).to_owned())
                .collect();
            assert!(rest.windows(2).all(|w| w[0] < w[1]), "{rest:?}");
            let mut given: Vec<String> = rest.into_iter().filter(|r| !early.contains(r)).collect();
            given.extend(early);
            given.sort();
            assert_eq!(given, all);
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
