//! The top k of a search, shared by all its views: a max-heap of the worst kept hit, whose
//! score is the threshold WAND must reach.

use super::result::SearchStats;
use crate::search::interrupt::Ticker;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub score: f64,
    pub doc: i64,
    pub bm25: f64,
    pub rec: f64,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Greater = worse, so a max-heap keeps the worst on top. Ties: the larger key wins.
    fn cmp(&self, o: &Self) -> Ordering {
        o.score.total_cmp(&self.score).then(o.doc.cmp(&self.doc))
    }
}

pub(crate) struct TopK {
    pub k: usize,
    pub heap: BinaryHeap<Entry>,
}

impl TopK {
    pub(crate) fn threshold(&self) -> Option<f64> {
        if self.heap.len() >= self.k {
            self.heap.peek().map(|e| e.score)
        } else {
            None
        }
    }

    pub(crate) fn push(&mut self, e: Entry) {
        if self.heap.len() < self.k {
            self.heap.push(e);
        } else if let Some(top) = self.heap.peek() {
            if e < *top {
                self.heap.pop();
                self.heap.push(e);
            }
        }
    }
}

/// What one search accumulates across views: the top k, the statistics, the documents the
/// seeding pass scored, and the ticker that lets the host cancel.
pub(crate) struct Collector {
    pub top: TopK,
    pub stats: SearchStats,
    pub seeded: HashSet<i64>,
    pub tick: Ticker,
}
