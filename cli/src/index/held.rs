//! The files of a resource the graph holds, with the stat each was indexed at: a file found
//! at that stat is not read again.

use crate::db::{self, Db, Result};
use foldhash::{HashMap, HashMapExt};
use serde_json::Value as Json;

/// A file's size and modification time, as its node records them.
pub(super) type Stat = (u64, i64);

/// The files of a resource the graph holds, with the stat each was indexed at (`None` when
/// its node records none: indexed by another client).
pub(super) type Held = HashMap<String, Option<Stat>>;

/// The files of `resource` the graph holds.
pub(super) fn read(db: &mut dyn Db, resource: &str) -> Result<Held> {
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

/// Whether the graph holds the file `rel` as indexed at `stat` (then it is not read again).
pub(super) fn held_at(held: &Held, rel: &str, stat: Stat) -> bool {
    held.get(rel) == Some(&Some(stat))
}
