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
///
/// The last call must be large too. A call much smaller than the graph keeps the closure
/// edge by edge, and its files relink references of every file sent before (a removal walks
/// again from each ancestor it reaches): the last 124 files of a 1,148-file tree, sent
/// alone, took 13.6 of its 34.9 s. So a batch is not cut while the source still to come is
/// less than half of what will have been sent: that rest joins it.
pub(super) struct Batch {
    size: usize,
    files: Vec<Json>,
    bytes: usize,
    sent_files: usize,
    sent_bytes: usize,
    /// Bytes of the files still to be read, when the pass knows them (after its walk).
    coming: Option<u64>,
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
            coming: None,
        }
    }

    /// Tells the batch that files of `bytes` bytes in all are still to be read: a warm pass
    /// counts only the files whose stat changed, so that the unchanged ones, never sent, do
    /// not make a small last batch look large.
    pub(super) fn expect(&mut self, bytes: u64) {
        self.coming = Some(bytes);
    }

    /// Takes `bytes` off the bytes still to come (a file read, whether it is sent or not).
    pub(super) fn taken(&mut self, bytes: u64) {
        if let Some(c) = &mut self.coming {
            *c = c.saturating_sub(bytes);
        }
    }

    pub(super) fn push(&mut self, file: Json, bytes: usize) {
        self.files.push(file);
        self.bytes += bytes;
    }

    pub(super) fn full(&self) -> bool {
        let large = self.files.len() >= self.size.max(self.sent_files)
            || self.bytes >= BATCH_BYTES.max(self.sent_bytes);
        let sent = (self.sent_bytes + self.bytes) as u64;
        large
            && self
                .coming
                .is_none_or(|rest| rest.saturating_mul(2) >= sent)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file(bytes: usize) -> (Json, usize) {
        (json!({"path": "f", "source": "x".repeat(bytes)}), bytes)
    }

    /// A batch at its size is full unless the source still to come is less than half of
    /// what will have been sent; with no rest known, it is full at its size.
    #[test]
    fn a_small_rest_joins_the_batch() {
        let mut unknown = Batch::new(2);
        let (f, b) = file(10);
        unknown.push(f.clone(), b);
        assert!(!unknown.full());
        unknown.push(f, b);
        assert!(unknown.full(), "no rest known: full at its size");
        for (rest, full) in [(9, false), (10, true), (100, true)] {
            let mut batch = Batch::new(2);
            batch.expect(20 + rest);
            for _ in 0..2 {
                let (f, b) = file(10);
                batch.taken(b as u64);
                batch.push(f, b);
            }
            assert_eq!(batch.full(), full, "rest of {rest} bytes after 20");
        }
    }
}
