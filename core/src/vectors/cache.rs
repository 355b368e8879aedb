//! Decoded chunks kept in memory, by build: a chunk row gets a new random build whenever it
//! is written, so an entry can never be stale, and a search over a warm model reads two
//! integers per chunk from the database instead of every vector. Process-wide, with a memory
//! bound; a rolled-back chunk's build is never asked for again and ages out.

use crate::search::lru::Lru;
use std::sync::{Arc, Mutex};

/// Default memory bound: 100 000 vectors of 1 024 dimensions fit.
pub(crate) const DEFAULT_BYTES: usize = 512 * 1024 * 1024;

/// A chunk's vectors, decoded: the seqs, and their floats contiguous.
pub(crate) struct Chunk {
    pub seqs: Vec<i64>,
    pub floats: Vec<f32>,
}

impl Chunk {
    /// A chunk from its stored blobs (int64 and float32, little-endian).
    pub(crate) fn decode(seqs: &[u8], floats: &[u8]) -> Chunk {
        Chunk {
            seqs: seqs
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
            floats: floats
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        }
    }

    fn weight(&self) -> usize {
        self.seqs.len() * 8 + self.floats.len() * 4 + 96
    }
}

static CACHE: Mutex<Option<Lru<i64, Arc<Chunk>>>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Lru<i64, Arc<Chunk>>) -> T) -> T {
    let mut g = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(|| Lru::new(DEFAULT_BYTES)))
}

/// The chunk of `build`, when cached.
pub(crate) fn get(build: i64) -> Option<Arc<Chunk>> {
    with(|c| c.get(&build))
}

/// Keeps the chunk of `build`.
pub(crate) fn put(build: i64, chunk: Arc<Chunk>) {
    let w = chunk.weight();
    with(|c| c.put(build, chunk, w))
}
