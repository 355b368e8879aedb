//! Merging segments and the merge policy.
//!
//! Policy (tiered, logarithmic): a segment's level is the smallest `l` with
//! `doc_count ≤ FLUSH_DOCS · MERGE_FACTOR^l`. Whenever a level holds `MERGE_FACTOR` segments
//! they are merged into one (which lands a level higher), so there are at most
//! `MERGE_FACTOR − 1` segments per level and `O(log N)` segments in all; each document is
//! rewritten `O(log N)` times. A segment whose tombstones exceed half its documents is
//! rewritten on its own. Merges run inside the write that flushes (amortised) and fully in
//! `optimize`.

use super::interrupt::Ticker;
use super::postings::{TermPostings, END};
use super::segment::{Builder, DocIn, Segment};
use crate::Result;
use std::sync::Arc;

/// Delta documents that trigger a flush into a new segment.
pub const FLUSH_DOCS: usize = 128;
/// Segments per level before they merge.
pub const MERGE_FACTOR: usize = 8;

/// The level of a segment of `docs` documents.
pub fn level(docs: i64) -> u32 {
    let mut l = 0;
    let mut cap = FLUSH_DOCS as i64;
    while docs > cap && l < 30 {
        l += 1;
        cap = cap.saturating_mul(MERGE_FACTOR as i64);
    }
    l
}

/// Which segments to merge next, given (id, doc_count, dead_count) sorted by id; empty when
/// the index is in shape.
pub fn pick(segs: &[(String, i64, i64)]) -> Vec<String> {
    for (id, docs, dead) in segs {
        if *docs > 0 && dead * 2 > *docs {
            return vec![id.clone()];
        }
    }
    let mut by_level: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for (id, docs, dead) in segs {
        by_level
            .entry(level(docs - dead))
            .or_default()
            .push(id.clone());
    }
    by_level
        .into_values()
        .find(|ids| ids.len() >= MERGE_FACTOR)
        .map(|ids| ids.into_iter().take(MERGE_FACTOR).collect())
        .unwrap_or_default()
}

/// Merges segments (each with its sorted dead ordinals) into one holding their live documents.
/// A key live in two inputs (never produced by the engine) is kept once, from the first.
pub fn merge(inputs: &[(Arc<Segment>, Vec<u32>)], mut tick: Ticker<'_>) -> Result<Segment> {
    use fst::{IntoStreamer, Streamer};
    let mut live: Vec<(i64, usize, u32)> = Vec::new();
    for (si, (seg, dead)) in inputs.iter().enumerate() {
        for ord in 0..seg.doc_count() as u32 {
            if dead.binary_search(&ord).is_err() {
                live.push((seg.keys[ord as usize], si, ord));
            }
        }
    }
    live.sort();
    live.dedup_by_key(|x| x.0);
    let mut maps: Vec<Vec<u32>> = inputs
        .iter()
        .map(|(s, _)| vec![END; s.doc_count()])
        .collect();
    let mut docs = Vec::with_capacity(live.len());
    for (new, &(key, si, ord)) in live.iter().enumerate() {
        maps[si][ord as usize] = new as u32;
        let s = &inputs[si].0;
        docs.push(DocIn {
            key,
            len: s.lens[ord as usize],
            created: s.created[ord as usize],
        });
    }
    let mut op = fst::map::OpBuilder::new();
    for (s, _) in inputs {
        op = op.add(&s.dict);
    }
    let mut union = op.union().into_stream();
    // Terms stream in order; one term's postings at a time, in buffers reused for every term
    // (one cursor per input, re-pointed at each term).
    let mut b = Builder::new(docs)?;
    let mut cursors: Vec<_> = inputs.iter().map(|(s, _)| s.empty_cursor()).collect();
    let mut tp = TermPostings::default();
    let mut sorted = TermPostings::default();
    while let Some((term, ivs)) = union.next() {
        tick.tick()?;
        tp.clear();
        for iv in ivs {
            let map = &maps[iv.index];
            let c = &mut cursors[iv.index];
            c.reset(inputs[iv.index].0.term_blocks(iv.value as usize));
            while c.doc() != END {
                let new = map[c.doc() as usize];
                if new != END {
                    let tf = c.tf();
                    tp.push_raw(new, tf, c.raw_positions());
                }
                c.next();
            }
        }
        if ivs.len() > 1 && !tp.is_sorted() {
            tp.sorted_into(&mut sorted);
            b.add_term(term, &sorted)?;
        } else {
            b.add_term(term, &tp)?;
        }
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_policy() {
        assert_eq!(level(1), 0);
        assert_eq!(level(128), 0);
        assert_eq!(level(129), 1);
        assert_eq!(level(1024), 1);
        assert_eq!(level(1025), 2);
        let segs: Vec<(String, i64, i64)> = (0..7).map(|i| (format!("s{i}"), 128, 0)).collect();
        assert!(pick(&segs).is_empty());
        let mut more = segs.clone();
        more.push(("s9".into(), 100, 0));
        assert_eq!(pick(&more).len(), 8);
        assert_eq!(pick(&[("a".into(), 10, 6)]), vec!["a".to_string()]);
    }
}
