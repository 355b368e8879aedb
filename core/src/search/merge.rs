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
//! Merges run inside the write that flushes (amortised) and fully in `optimize`.

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

/// Which segments to merge next, given (segment number, documents, deleted) in number order;
/// empty when the index is in shape.
pub(crate) fn pick(segs: &[(i64, i64, i64)]) -> Vec<i64> {
    for &(no, docs, dead) in segs {
        if docs > 0 && dead * 5 > docs {
            return vec![no];
        }
    }
    let mut by_level: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
    for &(no, docs, dead) in segs {
        by_level.entry(level(docs - dead)).or_default().push(no);
    }
    by_level
        .into_values()
        .find(|ids| ids.len() >= MERGE_FACTOR)
        .map(|ids| ids.into_iter().take(MERGE_FACTOR).collect())
        .unwrap_or_default()
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
        assert!(pick(&segs).is_empty());
        let mut more = segs.clone();
        more.push((9, 100, 0));
        assert_eq!(pick(&more).len(), 8);
        assert_eq!(pick(&[(4, 10, 3)]), vec![4]);
    }
}
