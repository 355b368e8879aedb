//! Pages: a segment is stored as numbered pages of at most [`PAGE_SIZE`] bytes, one row each
//! (`mem_idx_pages(id, data)`, `id = seg_no << 32 | page_no`), so a search reads the pages its
//! terms live on and nothing else — as FTS5 stores its segments in `%_data` rows, and unlike one
//! blob per segment, which a database reads whole.
//!
//! Stored pages are read through the process-wide page cache ([`super::cache`]).

use crate::{Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// Bytes per page. Below SQLite's 4 KiB page (no overflow chain) and Postgres' inline limit
/// (stored `PLAIN`, no TOAST).
pub(crate) const PAGE_SIZE: usize = 3900;

/// A segment's pages form three areas, each numbered from 0 and written as a stream: the
/// postings, the term dictionary and the documents. A page number carries its area in its top
/// bits, so a writer never needs to know one area's size before writing another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Area {
    Postings = 0,
    Dict = 1,
    Docs = 2,
}

const AREA_SHIFT: u32 = 28;

/// Page `n` of an area, as a segment-wide page number.
pub(crate) fn page_no(area: Area, n: u32) -> u32 {
    ((area as u32) << AREA_SHIFT) | n
}

/// The row id of page `page` of segment `seg`.
pub(crate) fn page_id(seg: i64, page: u32) -> i64 {
    (seg << 32) | i64::from(page)
}

/// A page's bytes.
pub(crate) type Page = Arc<[u8]>;

/// Where a segment's pages come from: the database (through the cache) or memory (the delta,
/// and a segment being built).
pub(crate) trait PageSource {
    /// Page `no`; an error when it is missing (a concurrent merge removed the segment: the
    /// search retries on a fresh snapshot).
    fn page(&mut self, no: u32) -> Result<Page>;

    /// Pages `from..to`, for sequential readers (merges, long postings); the default reads them
    /// one by one.
    fn prefetch(&mut self, _from: u32, _to: u32) -> Result<()> {
        Ok(())
    }

    /// Asks the host whether the call was cancelled (see [`super::interrupt`]).
    fn check_interrupt(&mut self) -> Result<()> {
        Ok(())
    }

    /// The build id of the stored segment these pages belong to, which keys the process-wide
    /// caches; `None` for pages that are not stored (the delta's in-memory segment).
    fn build(&self) -> Option<u64> {
        None
    }
}

/// Pages held in memory, by page number.
#[derive(Default)]
pub(crate) struct MemPages(pub HashMap<u32, Page>);

impl MemPages {
    pub(crate) fn get(&self, no: u32) -> Result<Page> {
        self.0
            .get(&no)
            .cloned()
            .ok_or_else(|| Error::internal(format!("page {no} of an in-memory segment is missing")))
    }
}

impl PageSource for MemPages {
    fn page(&mut self, no: u32) -> Result<Page> {
        self.get(no)
    }
}

/// Reads bytes `[from, to)` of an area, appending them to `out`.
pub(crate) fn read_range(
    src: &mut dyn PageSource,
    area: Area,
    from: u64,
    to: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    let base = page_no(area, 0);
    if to <= from {
        return Ok(());
    }
    let first = (from / PAGE_SIZE as u64) as u32;
    let last = ((to - 1) / PAGE_SIZE as u64) as u32;
    if last > first {
        src.prefetch(base + first, base + last + 1)?;
    }
    for p in first..=last {
        let page = src.page(base + p)?;
        let start = if p == first {
            (from % PAGE_SIZE as u64) as usize
        } else {
            0
        };
        let end = if p == last {
            ((to - 1) % PAGE_SIZE as u64) as usize + 1
        } else {
            PAGE_SIZE
        };
        let slice = page.get(start..end).ok_or_else(|| {
            Error::internal("search index page is shorter than its area says; run mem_reindex()")
        })?;
        out.extend_from_slice(slice);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cross_pages() {
        let data: Vec<u8> = (0..PAGE_SIZE * 3 + 10).map(|i| (i % 251) as u8).collect();
        let mut src = MemPages::default();
        for (i, c) in data.chunks(PAGE_SIZE).enumerate() {
            src.0.insert(page_no(Area::Dict, i as u32), Arc::from(c));
        }
        for (a, b) in [
            (0, 5),
            (PAGE_SIZE - 3, PAGE_SIZE + 7),
            (10, data.len()),
            (5, 5),
        ] {
            let mut out = Vec::new();
            read_range(&mut src, Area::Dict, a as u64, b as u64, &mut out).unwrap();
            assert_eq!(out, &data[a..b]);
        }
    }
}
