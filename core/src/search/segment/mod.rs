//! Immutable segments, stored as pages (see [`super::pages`]) and read a page at a time.
//!
//! * **Header** (`mem_idx_segments.header`, read once and cached by the segment's build id):
//!   counts, key range, area sizes, the first term of every dictionary page and the first key
//!   of every document page.
//! * **Dictionary pages**: terms in ascending order, prefix-compressed, each with its document
//!   frequency, block count, postings length and score bounds; a page starts with the postings
//!   offset of its first term. A lookup reads one page, found by binary search in the header.
//! * **Postings area**: the terms' postings one after another (see [`super::postings`]).
//! * **Document pages**: [`DOCS_PER_PAGE`] documents each — keys, lengths and `created_at` —
//!   read when a document is scored or looked up by key.
//!
//! A segment never changes once written; documents deleted from it are recorded beside it
//! ([`dead`]) until a merge drops them.

pub(crate) mod dead;
pub(crate) mod writer;

use super::codec::{corrupt, put_term, put_varint, zigzag, Reader};
use super::pages::{page_no, read_range, Area, PageSource};
use super::postings::{read_skip_into, skip_bytes_max, TermBounds, TermCursor};
use crate::Result;

pub(crate) use dead::Dead;
pub(crate) use writer::SegmentWriter;

/// Documents per document page.
pub(crate) const DOCS_PER_PAGE: usize = 128;

const MAGIC: &[u8; 4] = b"AMH2";

/// A document entering a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DocIn {
    pub key: i64,
    pub len: u32,
    pub created: i64,
}

/// What a segment is, in a few hundred bytes per thousand pages.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Header {
    pub doc_count: u32,
    pub total_len: u64,
    pub min_key: i64,
    pub max_key: i64,
    pub n_terms: u64,
    /// Postings (document, term pairs), for statistics (`mem_index_stats`).
    pub n_postings: u64,
    pub post_pages: u32,
    pub post_len: u64,
    pub dict_pages: u32,
    pub doc_pages: u32,
    /// The first term of each dictionary page.
    pub dict_first: Vec<Vec<u8>>,
    /// The first key of each document page.
    pub doc_first: Vec<i64>,
}

impl Header {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(64 + self.dict_first.len() * 12 + self.doc_first.len() * 4);
        o.extend_from_slice(MAGIC);
        put_varint(&mut o, u64::from(self.doc_count));
        put_varint(&mut o, self.total_len);
        put_varint(&mut o, zigzag(self.min_key));
        put_varint(&mut o, zigzag(self.max_key));
        put_varint(&mut o, self.n_terms);
        put_varint(&mut o, self.n_postings);
        put_varint(&mut o, u64::from(self.post_pages));
        put_varint(&mut o, self.post_len);
        put_varint(&mut o, u64::from(self.dict_pages));
        put_varint(&mut o, u64::from(self.doc_pages));
        let mut prev: &[u8] = &[];
        for t in &self.dict_first {
            put_term(&mut o, prev, t);
            prev = t;
        }
        let mut prev = 0i64;
        for &k in &self.doc_first {
            put_varint(&mut o, zigzag(k.wrapping_sub(prev)));
            prev = k;
        }
        o
    }

    pub(crate) fn decode(buf: &[u8]) -> Result<Header> {
        let mut r = Reader::new(buf);
        r.magic(MAGIC, "segment header")?;
        let mut h = Header {
            doc_count: r.u32("doc_count")?,
            total_len: r.varint("total_len")?,
            min_key: r.i64("min_key")?,
            max_key: r.i64("max_key")?,
            n_terms: r.varint("n_terms")?,
            n_postings: r.varint("n_postings")?,
            post_pages: r.u32("post_pages")?,
            post_len: r.varint("post_len")?,
            dict_pages: r.u32("dict_pages")?,
            doc_pages: r.u32("doc_pages")?,
            ..Header::default()
        };
        if h.dict_pages as usize > buf.len() || h.doc_pages as usize > buf.len() {
            return Err(corrupt("segment header page counts"));
        }
        if h.doc_pages as usize != (h.doc_count as usize).div_ceil(DOCS_PER_PAGE) {
            return Err(corrupt("segment header document pages"));
        }
        let mut t = Vec::new();
        for _ in 0..h.dict_pages {
            r.term(&mut t, "dictionary index")?;
            h.dict_first.push(t.clone());
        }
        let mut prev = 0i64;
        for _ in 0..h.doc_pages {
            prev = prev.wrapping_add(r.i64("document index")?);
            h.doc_first.push(prev);
        }
        if !r.at_end() {
            return Err(corrupt("segment header trailing bytes"));
        }
        Ok(h)
    }
}

/// Where a term's postings are and what bounds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TermInfo {
    pub bounds: TermBounds,
    pub post_off: u64,
    pub post_len: u64,
}

/// Every entry of a dictionary page, in term order.
pub(crate) fn read_dict_page(page: &[u8]) -> Result<Vec<(Vec<u8>, TermInfo)>> {
    let mut out = Vec::new();
    scan_dict_page(page, &mut |t, info| {
        out.push((t.to_vec(), info));
        Ok(true)
    })?;
    Ok(out)
}

/// Decodes a dictionary page entry by entry, in term order, until `f` returns false (a
/// lookup stops at the first term not below the one it wants, without allocating).
pub(crate) fn scan_dict_page(
    page: &[u8],
    f: &mut dyn FnMut(&[u8], TermInfo) -> Result<bool>,
) -> Result<()> {
    let mut r = Reader::new(page);
    let mut off = r.varint("dictionary page offset")?;
    let mut term = Vec::new();
    while !r.at_end() {
        r.term(&mut term, "dictionary term")?;
        let df = r.u32("dictionary df")?;
        let n_blocks = r.u32("dictionary blocks")?;
        let post_len = r.varint("dictionary postings length")?;
        let max_tf = r.u32("dictionary max_tf")?;
        let min_len = r.u32("dictionary min_len")?;
        let max_created = r.i64("dictionary max_created")?;
        if df == 0 || n_blocks == 0 || n_blocks as usize > df as usize {
            return Err(corrupt("dictionary entry"));
        }
        let info = TermInfo {
            bounds: TermBounds {
                df,
                n_blocks,
                max_tf,
                min_len,
                max_created,
            },
            post_off: off,
            post_len,
        };
        if !f(&term, info)? {
            return Ok(());
        }
        off = off
            .checked_add(post_len)
            .ok_or_else(|| corrupt("dictionary offsets"))?;
    }
    Ok(())
}

/// The documents of one document page.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DocPage {
    pub keys: Vec<i64>,
    pub lens: Vec<u32>,
    pub created: Vec<i64>,
}

/// Reading a segment. Holds only the header; pages come from a [`PageSource`].
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub header: std::sync::Arc<Header>,
}

impl Segment {
    pub(crate) fn doc_count(&self) -> u32 {
        self.header.doc_count
    }

    /// The dictionary page that would hold `term`.
    fn dict_page_of(&self, term: &[u8]) -> Option<u32> {
        let k = self
            .header
            .dict_first
            .partition_point(|f| f.as_slice() <= term);
        k.checked_sub(1).map(|p| p as u32)
    }

    /// A term's entry, reading one dictionary page.
    pub(crate) fn term(&self, src: &mut dyn PageSource, term: &[u8]) -> Result<Option<TermInfo>> {
        let Some(p) = self.dict_page_of(term) else {
            return Ok(None);
        };
        let page = src.page(page_no(Area::Dict, p))?;
        let mut found = None;
        scan_dict_page(&page, &mut |t, info| {
            if t == term {
                found = Some(info);
            }
            Ok(t < term)
        })?;
        Ok(found)
    }

    /// The terms starting with `prefix`, ascending, with their entries; `f` decides for each
    /// whether to keep it and returns false to stop.
    pub(crate) fn terms_with_prefix(
        &self,
        src: &mut dyn PageSource,
        prefix: &[u8],
        f: &mut dyn FnMut(&[u8], &TermInfo) -> Result<bool>,
    ) -> Result<()> {
        let start = self.dict_page_of(prefix).unwrap_or(0);
        for p in start..self.header.dict_pages {
            let page = src.page(page_no(Area::Dict, p))?;
            let mut done = false;
            scan_dict_page(&page, &mut |t, info| {
                if t < prefix {
                    return Ok(true);
                }
                done = !t.starts_with(prefix) || !f(t, &info)?;
                Ok(!done)
            })?;
            if done {
                return Ok(());
            }
        }
        Ok(())
    }

    /// A cursor over a term's postings (its skip table read first).
    pub(crate) fn cursor(&self, src: &mut dyn PageSource, info: &TermInfo) -> Result<TermCursor> {
        let mut c = TermCursor::empty();
        self.cursor_into(src, info, &mut c)?;
        Ok(c)
    }

    /// [`Segment::cursor`] reusing `c`'s buffers.
    pub(crate) fn cursor_into(
        &self,
        src: &mut dyn PageSource,
        info: &TermInfo,
        c: &mut TermCursor,
    ) -> Result<()> {
        let table = if info.bounds.n_blocks > 1 {
            let mut skip = Vec::new();
            let want = (skip_bytes_max(&info.bounds) as u64).min(info.post_len);
            read_range(
                src,
                Area::Postings,
                info.post_off,
                info.post_off + want,
                &mut skip,
            )?;
            read_skip_into(&skip, &info.bounds, info.post_len, &mut c.blocks)?
        } else {
            read_skip_into(&[], &info.bounds, info.post_len, &mut c.blocks)?
        };
        c.start(src, info.post_off + table as u64)
    }

    /// Document page `p`.
    pub(crate) fn doc_page(&self, src: &mut dyn PageSource, p: u32) -> Result<DocPage> {
        if p >= self.header.doc_pages {
            return Err(corrupt("document page number"));
        }
        let n = if p + 1 == self.header.doc_pages {
            self.header.doc_count as usize - p as usize * DOCS_PER_PAGE
        } else {
            DOCS_PER_PAGE
        };
        let page = src.page(page_no(Area::Docs, p))?;
        let mut r = Reader::new(&page);
        let mut d = DocPage::default();
        let mut key = r.i64("document key")?;
        d.keys.push(key);
        for _ in 1..n {
            let delta = r.varint("document key")?;
            key = key
                .checked_add(delta as i64)
                .filter(|_| delta > 0 && delta <= i64::MAX as u64)
                .ok_or_else(|| corrupt("document keys"))?;
            d.keys.push(key);
        }
        for _ in 0..n {
            d.lens.push(r.u32("document length")?);
        }
        let mut c = 0i64;
        for _ in 0..n {
            c = c.wrapping_add(r.i64("document created_at")?);
            d.created.push(c);
        }
        if !r.at_end() || d.keys[0] != self.header.doc_first[p as usize] {
            return Err(corrupt("document page"));
        }
        Ok(d)
    }

    /// The ordinal of a key, reading one document page; `None` when absent.
    pub(crate) fn ord_of(&self, src: &mut dyn PageSource, key: i64) -> Result<Option<u32>> {
        if self.header.doc_count == 0 || key < self.header.min_key || key > self.header.max_key {
            return Ok(None);
        }
        let k = self.header.doc_first.partition_point(|&f| f <= key);
        let Some(p) = k.checked_sub(1) else {
            return Ok(None);
        };
        let page = self.doc_page(src, p as u32)?;
        Ok(page
            .keys
            .binary_search(&key)
            .ok()
            .map(|i| (p * DOCS_PER_PAGE + i) as u32))
    }

    /// Every term with its entry, in order (merges, checks): `f` is called per term.
    #[cfg(test)]
    pub(crate) fn for_each_term(
        &self,
        src: &mut dyn PageSource,
        f: &mut dyn FnMut(&[u8], &TermInfo) -> Result<()>,
    ) -> Result<()> {
        for p in 0..self.header.dict_pages {
            let page = src.page(page_no(Area::Dict, p))?;
            for (t, info) in read_dict_page(&page)? {
                f(&t, &info)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::pages::{MemPages, Page};
    use crate::search::postings::{TermPostings, END};

    /// A segment of `n` documents in memory: term `t{i % 7}` in every document, `u{i}` in one.
    fn build(n: i64) -> (Segment, MemPages) {
        let docs: Vec<DocIn> = (0..n)
            .map(|i| DocIn {
                key: i * 3 - 100,
                len: 5 + (i % 4) as u32,
                created: 1000 + i,
            })
            .collect();
        let mut pages = MemPages::default();
        let mut sink = |no: u32, b: &[u8]| {
            pages.0.insert(no, Page::from(b));
            Ok(())
        };
        let mut w = SegmentWriter::new(&docs, &mut sink).unwrap();
        let mut terms: Vec<(String, TermPostings)> = Vec::new();
        for k in 0..7 {
            let mut tp = TermPostings::default();
            for i in (0..n).filter(|i| i % 7 == k) {
                tp.push(i as u32, &[0, 2]);
            }
            terms.push((format!("t{k}"), tp));
        }
        for i in 0..n {
            let mut tp = TermPostings::default();
            tp.push(i as u32, &[1]);
            terms.push((format!("u{i:06}"), tp));
        }
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        for (t, tp) in &terms {
            w.add_term(t.as_bytes(), tp).unwrap();
        }
        let header = w.finish().unwrap();
        let h2 = Header::decode(&header.encode()).unwrap();
        assert_eq!(h2, header);
        (
            Segment {
                header: std::sync::Arc::new(header),
            },
            pages,
        )
    }

    #[test]
    fn terms_documents_and_prefixes_read_back() {
        let (seg, mut src) = build(5000);
        assert!(seg.header.dict_pages > 1 && seg.header.post_pages > 1 && seg.header.doc_pages > 1);
        let info = seg.term(&mut src, b"t3").unwrap().unwrap();
        assert_eq!(
            info.bounds.df,
            (0..5000).filter(|i| i % 7 == 3).count() as u32
        );
        let mut c = seg.cursor(&mut src, &info).unwrap();
        let mut n = 0;
        while c.doc() != END {
            assert_eq!(c.doc() % 7, 3);
            assert_eq!(c.positions(), &[0, 2]);
            n += 1;
            c.next(&mut src).unwrap();
        }
        assert_eq!(n, info.bounds.df);
        let one = seg.term(&mut src, b"u004321").unwrap().unwrap();
        let c = seg.cursor(&mut src, &one).unwrap();
        assert_eq!(c.doc(), 4321);
        assert!(seg.term(&mut src, b"nope").unwrap().is_none());
        assert!(seg.term(&mut src, b"a").unwrap().is_none());
        let mut found = Vec::new();
        seg.terms_with_prefix(&mut src, b"u00499", &mut |t, _| {
            found.push(String::from_utf8(t.to_vec()).unwrap());
            Ok(true)
        })
        .unwrap();
        assert_eq!(found.len(), 10);
        assert_eq!(seg.ord_of(&mut src, 4321 * 3 - 100).unwrap(), Some(4321));
        assert_eq!(seg.ord_of(&mut src, 4321 * 3 - 99).unwrap(), None);
        let p = seg.doc_page(&mut src, 3).unwrap();
        assert_eq!(p.keys[0], (3 * 128) * 3 - 100);
        assert_eq!(p.created[1], 1000 + 3 * 128 + 1);
        let mut count = 0;
        seg.for_each_term(&mut src, &mut |_, _| {
            count += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(count as u64, seg.header.n_terms);
    }

    #[test]
    fn corrupt_headers_and_pages_are_errors() {
        let (seg, _) = build(300);
        let bytes = seg.header.encode();
        assert!(Header::decode(&bytes[..bytes.len() - 1]).is_err());
        for i in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            let _ = Header::decode(&b); // must not panic
        }
        assert!(read_dict_page(&[0xff; 9]).is_err());
    }
}
