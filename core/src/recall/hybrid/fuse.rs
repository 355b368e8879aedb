//! Weighted reciprocal rank fusion and the graph-neighborhood boost: pure functions over
//! ranked keys, so that they are tested against a naive reference and give the same bits on
//! every backend.

use std::collections::{BTreeMap, HashSet};

/// Which kind of list found a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Family {
    Bm25 = 0,
    Dense = 1,
    Graph = 2,
}

/// One ranked list of candidates, best first, and how much it counts.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct List<K> {
    pub family: Family,
    pub weight: f64,
    pub keys: Vec<K>,
}

/// A candidate after fusion: its summed contributions and its 1-based rank in each family's
/// list (a key is in at most one list per family).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Fused<K> {
    pub key: K,
    pub rrf: f64,
    pub ranks: [Option<usize>; 3],
}

/// The seed's constant `k`: a list's first place counts `w / 61`, its tenth `w / 70`.
pub(crate) const RRF_K: f64 = 60.0;

/// Every candidate of `lists` scored `Σ weight / (k + rank)`, best first (ties: by key).
/// Contributions are added in list order, so the sum is the same wherever it runs.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn fuse<K: Ord + Clone>(lists: &[List<K>], k: f64) -> Vec<Fused<K>> {
    let mut by_key: BTreeMap<K, Fused<K>> = BTreeMap::new();
    for list in lists {
        for (i, key) in list.keys.iter().enumerate() {
            let rank = i + 1;
            let f = by_key.entry(key.clone()).or_insert_with(|| Fused {
                key: key.clone(),
                rrf: 0.0,
                ranks: [None; 3],
            });
            f.rrf += list.weight / (k + rank as f64);
            f.ranks[list.family as usize].get_or_insert(rank);
        }
    }
    let mut out: Vec<Fused<K>> = by_key.into_values().collect();
    out.sort_by(|a, b| b.rrf.total_cmp(&a.rrf).then_with(|| a.key.cmp(&b.key)));
    out
}

/// The best fused score a candidate could reach in this fusion: first in every family that
/// found anything. Dividing by it puts fused scores on the 0–1 scale the seed's boost (0.3)
/// and thresholds are written for; a raw fused score never exceeds 1/61.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn best_possible<K>(lists: &[List<K>], k: f64) -> f64 {
    let mut per_family = [0.0f64; 3];
    for l in lists.iter().filter(|l| !l.keys.is_empty()) {
        let slot = &mut per_family[l.family as usize];
        *slot = slot.max(l.weight);
    }
    per_family.iter().map(|w| w / (k + 1.0)).sum()
}

/// Candidates ranked above this position are the "top results" whose files are walked.
pub(crate) const BOOST_TOP: usize = 10;

/// Candidates from position [`BOOST_TOP`] up to (not including) this one may be boosted.
pub(crate) const BOOST_END: usize = 50;

/// The seed's boost of the candidate at 0-based `position` whose related files are `files`:
/// `factor × (files among the top results' graph neighbors) / (the top results' files)`,
/// for positions `BOOST_TOP..BOOST_END` only.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn neighborhood_boost(
    position: usize,
    files: &[String],
    neighbors: &HashSet<String>,
    top_files: usize,
    factor: f64,
) -> f64 {
    if !(BOOST_TOP..BOOST_END).contains(&position) {
        return 0.0;
    }
    let n = files.iter().filter(|f| neighbors.contains(*f)).count();
    if n == 0 {
        return 0.0;
    }
    factor * (n as f64 / top_files.max(1) as f64)
}
