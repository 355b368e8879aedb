//! Fusion of the candidate lists and the graph-neighborhood boost: pure functions over ranked
//! keys, so that they are tested against a naive reference and give the same bits on every
//! backend.

use std::collections::{BTreeMap, HashSet};

/// Which kind of list found a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Family {
    Bm25 = 0,
    Dense = 1,
    Graph = 2,
}

/// One ranked list of candidates, best first, each with the score its list gave it (the
/// engine's BM25 score, the cosine similarity; the graph list's are unused), and how much the
/// list counts.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct List<K> {
    pub family: Family,
    pub weight: f64,
    pub hits: Vec<(K, f64)>,
}

/// How the lists' candidates are combined.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Fusion {
    /// Each list adds `weight × its score on a 0–1 scale`: a BM25 score divided by its list's
    /// best, the cosine similarity (clamped to 0–1) of every candidate that has a vector,
    /// whichever list found it, and the graph list's rank as `(k + 1) / (k + rank)`. How sure
    /// a list is counts: first by a wide margin is worth more than first by a hair.
    Score,
    /// The seed's weighted reciprocal rank: each list adds `weight / (k + rank)`.
    Rank { k: f64 },
}

/// A candidate after fusion: its summed contributions and its 1-based rank in each family's
/// list (a key is in at most one list per family).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Fused<K> {
    pub key: K,
    pub sum: f64,
    pub ranks: [Option<usize>; 3],
}

/// The seed's constant `k`: a list's first place counts `w / 61`, its tenth `w / 70`.
pub(crate) const RRF_K: f64 = 60.0;

/// Every candidate of `lists` scored by `fusion`, best first (ties: by key). `similarity`
/// holds the cosine similarity of candidates outside the dense list that have a vector
/// (score fusion only). Contributions are added in list order, so the sum is the same
/// wherever it runs.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn fuse<K: Ord + Clone>(
    lists: &[List<K>],
    fusion: Fusion,
    similarity: &BTreeMap<K, f64>,
) -> Vec<Fused<K>> {
    let mut by_key: BTreeMap<K, Fused<K>> = BTreeMap::new();
    for list in lists {
        for (i, (key, _)) in list.hits.iter().enumerate() {
            by_key
                .entry(key.clone())
                .or_insert_with(|| Fused {
                    key: key.clone(),
                    sum: 0.0,
                    ranks: [None; 3],
                })
                .ranks[list.family as usize]
                .get_or_insert(i + 1);
        }
    }
    for list in lists {
        match fusion {
            Fusion::Rank { k } => {
                for (i, (key, _)) in list.hits.iter().enumerate() {
                    if let Some(f) = by_key.get_mut(key) {
                        f.sum += list.weight / (k + (i + 1) as f64);
                    }
                }
            }
            Fusion::Score => {
                let best = list.hits.first().map_or(0.0, |h| h.1);
                let listed: BTreeMap<&K, (usize, f64)> = list
                    .hits
                    .iter()
                    .enumerate()
                    .map(|(i, (k, s))| (k, (i + 1, *s)))
                    .collect();
                for (key, f) in by_key.iter_mut() {
                    let scaled = match (list.family, listed.get(key)) {
                        (Family::Bm25, Some(&(_, s))) if best > 0.0 => s / best,
                        (Family::Dense, Some(&(_, s))) => s.clamp(0.0, 1.0),
                        (Family::Dense, None) if !list.hits.is_empty() => {
                            similarity.get(key).map_or(0.0, |s| s.clamp(0.0, 1.0))
                        }
                        (Family::Graph, Some(&(rank, _))) => {
                            (RRF_K + 1.0) / (RRF_K + rank as f64)
                        }
                        _ => 0.0,
                    };
                    f.sum += list.weight * scaled;
                }
            }
        }
    }
    let mut out: Vec<Fused<K>> = by_key.into_values().collect();
    out.sort_by(|a, b| b.sum.total_cmp(&a.sum).then_with(|| a.key.cmp(&b.key)));
    out
}

/// The best fused score a candidate could reach in this fusion: first in every family that
/// found anything (and, by score, similarity 1). Dividing by it puts fused scores on the 0–1
/// scale the seed's boost (0.3) and thresholds are written for; a raw reciprocal-rank score
/// never exceeds 1/61.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn best_possible<K>(lists: &[List<K>], fusion: Fusion) -> f64 {
    let mut per_family = [0.0f64; 3];
    for l in lists.iter().filter(|l| !l.hits.is_empty()) {
        let slot = &mut per_family[l.family as usize];
        *slot = slot.max(l.weight);
    }
    let first = match fusion {
        Fusion::Score => 1.0,
        Fusion::Rank { k } => 1.0 / (k + 1.0),
    };
    per_family.iter().map(|w| w * first).sum()
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
