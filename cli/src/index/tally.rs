//! What a run of the index did: the figures of its answer.

use serde_json::Value as Json;
use std::collections::BTreeMap;

/// What a run did.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) files: u64,
    pub(super) indexed: u64,
    pub(super) unchanged: u64,
    pub(super) removed: u64,
    pub(super) skipped: BTreeMap<&'static str, u64>,
    pub(super) failed: Vec<Json>,
    pub(super) symbols: u64,
    pub(super) chunks: u64,
    pub(super) edges: BTreeMap<String, u64>,
    pub(super) bytes: u64,
}

impl Tally {
    /// Counts the answer of `graph_index_files` for `n` files of `bytes` bytes.
    pub(super) fn add(&mut self, answer: &Json, n: usize, bytes: usize) {
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
