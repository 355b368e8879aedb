//! Files sent to the core together.

use super::tally::Tally;
use crate::db::{self, Db, Result};
use foldhash::HashSet;
use serde_json::{json, Value as Json};

/// Files waiting to be indexed together: a call of `graph_index_files` writes a batch's
/// nodes before it resolves their references, so references between its files are written
/// once, not resolved elsewhere first and moved. A batch may grow as large as everything
/// sent before it: a tree indexed from nothing then goes in a few calls, each of which
/// builds the closure once instead of keeping it edge by edge.
pub(super) struct Batch {
    size: usize,
    files: Vec<Json>,
    bytes: usize,
    sent_files: usize,
    sent_bytes: usize,
}

/// Source bytes per call at most.
const BATCH_BYTES: usize = 8 << 20;

impl Batch {
    pub(super) fn new(size: usize) -> Batch {
        Batch {
            size,
            files: Vec::new(),
            bytes: 0,
            sent_files: 0,
            sent_bytes: 0,
        }
    }

    pub(super) fn push(&mut self, file: Json, bytes: usize) {
        self.files.push(file);
        self.bytes += bytes;
    }

    pub(super) fn full(&self) -> bool {
        self.files.len() >= self.size.max(self.sent_files)
            || self.bytes >= BATCH_BYTES.max(self.sent_bytes)
    }

    /// Indexes the batch in one call; when the core refuses it, each file alone, so the one
    /// it refuses is reported (and left out of the files seen) and the others are written.
    pub(super) fn flush(
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
