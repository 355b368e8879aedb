//! The merge policy, and merging stored segments into one, page by page.
//!
//! The delta is flushed into a segment once it holds [`FLUSH_BYTES`] of analysed terms or
//! [`FLUSH_DOCS`] rows: every search decodes the delta's payloads (only its own terms get
//! postings), so the bound is on bytes; the larger the flush, the fewer segments and levels.
//!
//! Policy (tiered, logarithmic): a segment's level is the smallest `l` with
//! `live docs ≤ LEVEL_DOCS · MERGE_FACTOR^l`. Whenever a level holds `MERGE_FACTOR` segments they
//! are merged into one (which lands a level higher), so there are at most `MERGE_FACTOR − 1`
//! segments per level and `O(log N)` in all; each document is rewritten once per level, which
//! bounds the write amplification at about `log_8(N / LEVEL_DOCS)` times the index size. A segment
//! whose deletions exceed a fifth of its documents is rewritten on its own (its deletion list
//! and per-term counts are rewritten at every flush that adds to them; this keeps them small).
//! Merges run inside the write that flushes (amortised) and in `optimize`.
//!
//! **The merge bound (Postgres).** A merge writes its output while its inputs are still stored
//! (a reader may be on them until the merge commits), so the largest merge of a transaction is
//! the room an index needs beyond its live pages. Postgres keeps that room in the table's file
//! for good (`VACUUM` makes it reusable, it does not give it back), so there no merge writes
//! more than [`max_merge_docs`] — an eighth of the index's live documents: a segment past half
//! of it is *full* and merges no more unless deletions shrink it, as Lucene's tiered policy
//! caps its segments, and the merges one write runs stop at one bound of output, the rest
//! waiting for the next write. The inputs' space is reused from the next transaction on (the
//! host refills the free space map itself: [`crate::Conn::reuse_freed_pages`]; a load in one
//! huge transaction reuses nothing until it commits), so the files stay within about 1.3×
//! the live pages. The price is more segments: more bytes (terms
//! repeated per segment) and a dictionary lookup more per segment and query. SQLite keeps one
//! segment per level and everything in one after `optimize`: its free list hands a merge's
//! freed pages to the next writes, and its searches and index stay at their smallest
//! ([`crate::Dialect::merge_share`]).

use super::interrupt::Ticker;
use super::pages::PageSource;
use super::postings::{TermCursor, TermPostings, END};
use super::segment::{Dead, DocIn, Header, Segment, SegmentWriter, TermInfo};
use super::store::{Readahead, SegRow, StoredPages};
use crate::{Conn, Result};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Analysed bytes in the delta that trigger a flush into a new segment.
pub(crate) const FLUSH_BYTES: i64 = 512 * 1024;
/// Delta rows that trigger a flush whatever their size.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const FLUSH_DOCS: i64 = 4096;
/// Live documents of a level-0 segment.
pub(crate) const LEVEL_DOCS: i64 = 1024;
/// Segments per level before they merge.
pub(crate) const MERGE_FACTOR: usize = 8;
/// Pages a merge reads per statement.
const READAHEAD: u32 = 64;

/// The level of a segment of `docs` live documents.
pub(crate) fn level(docs: i64) -> u32 {
    let mut l = 0;
    let mut cap = LEVEL_DOCS;
    while docs > cap && l < 30 {
        l += 1;
        cap = cap.saturating_mul(MERGE_FACTOR as i64);
    }
    l
}

/// Whether a delta of `rows` rows holding `bytes` of analysed terms is flushed.
pub(crate) fn delta_is_full(rows: i64, bytes: i64) -> bool {
    rows >= FLUSH_DOCS || bytes >= FLUSH_BYTES
}

/// The merge bound's floor: small indexes still merge into a few segments.
const MIN_MERGE_DOCS: i64 = LEVEL_DOCS * MERGE_FACTOR as i64;

/// The most live documents one merge writes, in an index of `live` live documents, when a
/// merge may write at most a `share`-th of it (none: no bound).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn max_merge_docs(live: i64, share: Option<i64>) -> i64 {
    share.map_or(i64::MAX, |n| (live / n).max(MIN_MERGE_DOCS))
}

/// A segment as the policy sees it: its number, documents and deleted documents.
pub(crate) type SegInfo = (i64, i64, i64);

/// Which segments to merge next, given [`SegInfo`]s in number order and the merge bound's
/// share; empty when the index is in shape.
pub(crate) fn pick(segs: &[SegInfo], share: Option<i64>) -> Vec<i64> {
    for &(no, docs, dead) in segs {
        if docs > 0 && dead * 5 > docs {
            return vec![no];
        }
    }
    let cap = max_merge_docs(live_docs(segs), share);
    let mut by_level: BTreeMap<u32, Vec<(i64, i64)>> = BTreeMap::new();
    for &(no, docs, dead) in segs {
        let live = docs - dead;
        if live <= cap / 2 {
            by_level.entry(level(live)).or_default().push((live, no));
        }
    }
    by_level
        .into_values()
        .find(|level| level.len() >= MERGE_FACTOR)
        .map(|level| smallest_within(level, cap, MERGE_FACTOR))
        .unwrap_or_default()
}

/// What `optimize` merges next: the smallest segments whose live documents fit the merge
/// bound together, when two or more do (with no bound, all of them); else a segment that
/// still holds deletions, rewritten on its own; empty when neither is left. Repeated, it
/// leaves no two segments that one merge could join and no deleted document.
pub(crate) fn pick_all(segs: &[SegInfo], share: Option<i64>) -> Vec<i64> {
    let cap = max_merge_docs(live_docs(segs), share);
    let by_size: Vec<(i64, i64)> = segs.iter().map(|&(no, docs, dead)| (docs - dead, no)).collect();
    let group = smallest_within(by_size, cap, usize::MAX);
    if group.len() >= 2 {
        return group;
    }
    segs.iter()
        .find(|s| s.2 > 0)
        .map(|s| vec![s.0])
        .unwrap_or_default()
}

/// Whether one transaction that has written `written` documents by merges runs another merge
/// of `output` in an index of `live` live documents: its first merge always, the next ones
/// while their outputs together stay within the bound. The rest waits for a later transaction,
/// which can reuse the space these merges free.
pub(crate) fn runs_next(written: i64, output: i64, live: i64, share: Option<i64>) -> bool {
    written == 0 || written.saturating_add(output) <= max_merge_docs(live, share)
}

/// The live documents of `segs`.
pub(crate) fn live_docs<'a>(segs: impl IntoIterator<Item = &'a SegInfo>) -> i64 {
    segs.into_iter().map(|s| s.1 - s.2).sum()
}

/// The numbers of the smallest of `(live, number)` pairs, at most `most` of them, whose live
/// documents add up to at most `cap`.
fn smallest_within(mut segs: Vec<(i64, i64)>, cap: i64, most: usize) -> Vec<i64> {
    segs.sort_unstable();
    let mut sum = 0;
    segs.into_iter()
        .take(most)
        .take_while(|&(live, _)| {
            sum += live;
            sum <= cap
        })
        .map(|(_, no)| no)
        .collect()
}

/// One input of a merge.
pub(crate) struct Input {
    pub row: SegRow,
    pub seg: Segment,
    pub dead: Arc<Dead>,
}

/// An input's dictionary, read a page at a time in term order.
struct DictStream {
    page: u32,
    entries: std::vec::IntoIter<(Vec<u8>, TermInfo)>,
    head: Option<(Vec<u8>, TermInfo)>,
}

impl DictStream {
    fn advance(&mut self, seg: &Segment, src: &mut dyn PageSource) -> Result<()> {
        loop {
            if let Some(e) = self.entries.next() {
                self.head = Some(e);
                return Ok(());
            }
            if self.page >= seg.header.dict_pages {
                self.head = None;
                return Ok(());
            }
            let page = src.page(super::pages::page_no(super::pages::Area::Dict, self.page))?;
            self.page += 1;
            self.entries = super::segment::read_dict_page(&page)?.into_iter();
        }
    }
}

fn reader<'c>(conn: &'c mut dyn Conn, i: &Input, window: &'c mut Readahead) -> StoredPages<'c> {
    StoredPages::sequential(conn, &i.row, window, READAHEAD)
}

/// Merges stored segments into one holding their live documents, written through `sink`.
/// Reads every input once, in order, and holds one term's postings at a time.
pub(crate) fn merge(
    conn: &mut dyn Conn,
    inputs: &[Input],
    sink: &mut dyn FnMut(&mut dyn Conn, u32, &[u8]) -> Result<()>,
) -> Result<Header> {
    let mut tick = Ticker::new();
    // Live documents in key order, and each input's old → new ordinals.
    let mut live: Vec<(i64, usize, u32, u32, i64)> = Vec::new();
    for (ii, input) in inputs.iter().enumerate() {
        let mut window = Readahead::default();
        let mut src = reader(conn, input, &mut window);
        for p in 0..input.seg.header.doc_pages {
            tick.tick(|| src.check_interrupt())?;
            let page = input.seg.doc_page(&mut src, p)?;
            for (i, &key) in page.keys.iter().enumerate() {
                let ord = p * super::segment::DOCS_PER_PAGE as u32 + i as u32;
                if !input.dead.is_dead(ord) {
                    live.push((key, ii, ord, page.lens[i], page.created[i]));
                }
            }
        }
    }
    live.sort_by_key(|d| d.0);
    live.dedup_by_key(|d| d.0);
    let mut maps: Vec<Vec<u32>> = inputs
        .iter()
        .map(|i| vec![END; i.seg.doc_count() as usize])
        .collect();
    let docs: Vec<DocIn> = live
        .iter()
        .enumerate()
        .map(|(new, &(key, ii, ord, len, created))| {
            maps[ii][ord as usize] = new as u32;
            DocIn { key, len, created }
        })
        .collect();
    drop(live);
    // The writer's pages wait here between terms, and go to the sink with the connection the
    // inputs are read with.
    let out: RefCell<Vec<(u32, Vec<u8>)>> = RefCell::new(Vec::new());
    let mut collect = |no: u32, b: &[u8]| {
        out.borrow_mut().push((no, b.to_vec()));
        Ok(())
    };
    let mut w = SegmentWriter::new(&docs, &mut collect)?;
    // One read-ahead window per input for its dictionary and postings, which are read in
    // order over the whole merge.
    let mut windows: Vec<Readahead> = inputs.iter().map(|_| Readahead::default()).collect();
    let mut streams: Vec<DictStream> = inputs
        .iter()
        .map(|_| DictStream {
            page: 0,
            entries: Vec::new().into_iter(),
            head: None,
        })
        .collect();
    for ((s, input), window) in streams.iter_mut().zip(inputs).zip(&mut windows) {
        let mut src = reader(conn, input, window);
        s.advance(&input.seg, &mut src)?;
    }
    let mut tp = TermPostings::default();
    let mut sorted = TermPostings::default();
    let mut cursors: Vec<TermCursor> = inputs.iter().map(|_| TermCursor::empty()).collect();
    loop {
        tick.tick(|| conn.check_interrupt())?;
        let Some(term) = streams
            .iter()
            .filter_map(|s| s.head.as_ref().map(|h| h.0.as_slice()))
            .min()
            .map(<[u8]>::to_vec)
        else {
            break;
        };
        tp.clear();
        let mut from = 0;
        for (ii, (s, input)) in streams.iter_mut().zip(inputs).enumerate() {
            let Some((t, info)) = &s.head else { continue };
            if *t != term {
                continue;
            }
            from += 1;
            let mut src = reader(conn, input, &mut windows[ii]);
            let c = &mut cursors[ii];
            input.seg.cursor_into(&mut src, info, c)?;
            let map = &maps[ii];
            while c.doc() != END {
                let new = map[c.doc() as usize];
                if new != END {
                    let tf = c.tf();
                    tp.push_raw(new, tf, c.raw_positions());
                }
                c.next(&mut src)?;
            }
            s.advance(&input.seg, &mut src)?;
        }
        if from > 1 && !tp.is_sorted() {
            tp.sorted_into(&mut sorted);
            w.add_term(&term, &sorted)?;
        } else {
            w.add_term(&term, &tp)?;
        }
        hand_over(&out, conn, sink)?;
    }
    let h = w.finish()?;
    hand_over(&out, conn, sink)?;
    Ok(h)
}

/// Hands the pages a writer produced so far to the sink.
fn hand_over(
    out: &RefCell<Vec<(u32, Vec<u8>)>>,
    conn: &mut dyn Conn,
    sink: &mut dyn FnMut(&mut dyn Conn, u32, &[u8]) -> Result<()>,
) -> Result<()> {
    let pages = std::mem::take(&mut *out.borrow_mut());
    for (no, b) in pages {
        sink(conn, no, &b)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_policy() {
        assert_eq!(level(1), 0);
        assert_eq!(level(LEVEL_DOCS), 0);
        assert_eq!(level(LEVEL_DOCS + 1), 1);
        assert_eq!(level(LEVEL_DOCS * 8), 1);
        assert_eq!(level(LEVEL_DOCS * 8 + 1), 2);
        assert!(!delta_is_full(FLUSH_DOCS - 1, FLUSH_BYTES - 1));
        assert!(delta_is_full(FLUSH_DOCS, 0) && delta_is_full(1, FLUSH_BYTES));
        let segs: Vec<(i64, i64, i64)> = (0..7).map(|i| (i, 128, 0)).collect();
        assert!(pick(&segs, None).is_empty() && pick(&segs, Some(6)).is_empty());
        let mut more = segs.clone();
        more.push((9, 100, 0));
        assert_eq!(pick(&more, None).len(), 8);
        assert_eq!(pick(&[(4, 10, 3)], Some(6)), vec![4]);
    }

    /// Applies a merge of `ids` the way the store does: one new segment of their live
    /// documents, numbered after every other.
    fn apply(segs: &mut Vec<SegInfo>, ids: &[i64], next: &mut i64) {
        let live = live_docs(segs.iter().filter(|s| ids.contains(&s.0)));
        segs.retain(|s| !ids.contains(&s.0));
        *next += 1;
        segs.push((*next, live, 0));
    }

    proptest::proptest! {
        /// Loads of flushes of any size, with deletions: no merge the policy picks writes more
        /// than the bound of the index it merges in (a rewrite of one segment for its deletions
        /// writes no more than that segment), and the segment count stays logarithmic.
        #[test]
        fn merges_stay_within_the_bound(
            flushes in proptest::collection::vec((1i64..5000, 0i64..3), 1..400),
            share in proptest::option::of(2i64..10),
        ) {
            let mut segs: Vec<SegInfo> = Vec::new();
            let mut next = 0;
            for (docs, kill) in flushes {
                next += 1;
                segs.push((next, docs, 0));
                if kill > 0 {
                    let oldest = &mut segs[0];
                    oldest.2 = (oldest.2 + oldest.1 / 7).min(oldest.1);
                }
                // As the store runs the policy: merges while one merge bound allows.
                let mut written = 0;
                loop {
                    let ids = pick(&segs, share);
                    let live = live_docs(&segs);
                    let output = live_docs(segs.iter().filter(|s| ids.contains(&s.0)));
                    if ids.is_empty() || !runs_next(written, output, live, share) {
                        break;
                    }
                    let single = ids.len() == 1;
                    proptest::prop_assert!(single || ids.len() <= MERGE_FACTOR);
                    proptest::prop_assert!(single || output <= max_merge_docs(live, share));
                    apply(&mut segs, &ids, &mut next);
                    written += output;
                }
                let live = live_docs(&segs).max(1);
                let levels = level(live) as usize + 1;
                let full = 2 * share.unwrap_or(1) as usize;
                proptest::prop_assert!(
                    segs.len() <= levels * (MERGE_FACTOR - 1) + full,
                    "{} segments for {live} documents",
                    segs.len()
                );
            }
            // Optimize, call after call: within the bound too, and then nothing is left to
            // join or purge.
            loop {
                let ids = pick_all(&segs, share);
                if ids.is_empty() {
                    break;
                }
                let output = live_docs(segs.iter().filter(|s| ids.contains(&s.0)));
                proptest::prop_assert!(
                    ids.len() == 1 || output <= max_merge_docs(live_docs(&segs), share)
                );
                apply(&mut segs, &ids, &mut next);
            }
            let cap = max_merge_docs(live_docs(&segs), share);
            proptest::prop_assert!(segs.iter().all(|s| s.2 == 0));
            proptest::prop_assert!(share.is_some() || segs.len() <= 1);
            let mut lives: Vec<i64> = segs.iter().map(|s| s.1).collect();
            lives.sort_unstable();
            proptest::prop_assert!(lives.len() < 2 || lives[0].saturating_add(lives[1]) > cap);
        }
    }
}
