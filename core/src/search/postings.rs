//! Block-compressed postings, read a block at a time.
//!
//! A term's postings are cut into blocks of [`BLOCK`] documents. A term with several blocks
//! starts with a skip table — per block its last ordinal, its size, the data of its score upper
//! bound (largest term frequency, smallest document length, newest `created_at`) and its byte
//! length — so a search can skip a block without reading it; a term with one block has no
//! table (the term's own bounds are the block's). A block holds, per document, the ordinal
//! delta shifted left with the low bit set when the frequency is 1 (the frequency follows
//! otherwise), then the documents' positions (delta varints). BM25's tf part grows with tf and
//! shrinks with length, and the recency factor grows with `created_at`, so the bounds stay
//! valid whatever N, avgdl, idf, `now` and the recency settings of a query are.

use super::codec::{corrupt, get_varint, put_varint, zigzag, Reader};
use super::pages::{read_range, Area, PageSource};
use crate::Result;

/// Documents per block.
pub(crate) const BLOCK: usize = 128;
/// Ordinal of an exhausted cursor.
pub(crate) const END: u32 = u32::MAX;

/// A block's bounds and place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockMeta {
    pub last: u32,
    pub count: u32,
    pub max_tf: u32,
    pub min_len: u32,
    pub max_created: i64,
    /// Byte offset of the block after the skip table.
    pub off: u32,
    /// Byte length of the block.
    pub len: u32,
}

/// A term's statistics and the bounds of all its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct TermBounds {
    pub df: u32,
    pub n_blocks: u32,
    pub max_tf: u32,
    pub min_len: u32,
    pub max_created: i64,
}

/// One term's postings while building, flat so that a merge or a flush reuses the buffers:
/// posting `i` has ordinal `ords[i]`, term frequency `tfs[i]` and its positions already
/// encoded (delta varints) at `bytes[starts[i]..starts[i + 1]]`, so a merge copies positions
/// without decoding them.
#[derive(Clone, Debug, Default)]
pub(crate) struct TermPostings {
    pub ords: Vec<u32>,
    pub tfs: Vec<u32>,
    pub starts: Vec<u32>,
    pub bytes: Vec<u8>,
}

impl TermPostings {
    pub(crate) fn clear(&mut self) {
        self.ords.clear();
        self.tfs.clear();
        self.starts.clear();
        self.bytes.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.ords.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ords.is_empty()
    }

    /// Adds a posting with its positions (ascending, at least one).
    #[cfg(test)]
    pub(crate) fn push(&mut self, ord: u32, positions: &[u32]) {
        self.ords.push(ord);
        self.tfs.push(positions.len() as u32);
        self.starts.push(self.bytes.len() as u32);
        let mut last = 0u32;
        for &q in positions {
            put_varint(&mut self.bytes, u64::from(q.saturating_sub(last)));
            last = q;
        }
    }

    /// Adds a posting whose `tf` positions are already encoded.
    pub(crate) fn push_raw(&mut self, ord: u32, tf: u32, encoded: &[u8]) {
        self.ords.push(ord);
        self.tfs.push(tf);
        self.starts.push(self.bytes.len() as u32);
        self.bytes.extend_from_slice(encoded);
    }

    fn raw(&self, i: usize) -> &[u8] {
        let s = self.starts[i] as usize;
        let e = self
            .starts
            .get(i + 1)
            .map_or(self.bytes.len(), |&e| e as usize);
        &self.bytes[s..e]
    }

    /// Whether the ordinals ascend strictly.
    pub(crate) fn is_sorted(&self) -> bool {
        self.ords.windows(2).all(|w| w[0] < w[1])
    }

    /// Copies the postings into `out` ordered by ordinal (stable).
    pub(crate) fn sorted_into(&self, out: &mut TermPostings) {
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.sort_by_key(|&i| self.ords[i]);
        out.clear();
        for i in idx {
            out.push_raw(self.ords[i], self.tfs[i], self.raw(i));
        }
    }
}

/// Buffers [`encode_term`] reuses from term to term (a segment build encodes every term of
/// its documents, most of them in one short block).
#[derive(Default)]
pub(crate) struct EncodeScratch {
    metas: Vec<BlockMeta>,
    data: Vec<u8>,
}

/// Appends one term's postings (sorted by ordinal) to `out`; `lens` and `created` are indexed
/// by ordinal. Returns the term's bounds.
pub(crate) fn encode_term(
    tp: &TermPostings,
    lens: &[u32],
    created: &[i64],
    out: &mut Vec<u8>,
    scratch: &mut EncodeScratch,
) -> TermBounds {
    let n = tp.len();
    let EncodeScratch { metas, data } = scratch;
    metas.clear();
    data.clear();
    // One block has no skip table: its bytes go straight to `out`.
    let blocks: &mut Vec<u8> = if n <= BLOCK { out } else { data };
    let base = blocks.len();
    let mut prev_last = 0u32;
    for from in (0..n).step_by(BLOCK) {
        let to = (from + BLOCK).min(n);
        let start = blocks.len() - base;
        let mut meta = BlockMeta {
            last: 0,
            count: (to - from) as u32,
            max_tf: 0,
            min_len: u32::MAX,
            max_created: i64::MIN,
            off: start as u32,
            len: 0,
        };
        let mut prev = prev_last;
        for i in from..to {
            let (o, tf) = (tp.ords[i], tp.tfs[i]);
            let delta = u64::from(o - prev);
            put_varint(blocks, (delta << 1) | u64::from(tf == 1));
            if tf != 1 {
                put_varint(blocks, u64::from(tf));
            }
            prev = o;
            meta.max_tf = meta.max_tf.max(tf);
            meta.min_len = meta.min_len.min(lens.get(o as usize).copied().unwrap_or(0));
            meta.max_created = meta
                .max_created
                .max(created.get(o as usize).copied().unwrap_or(i64::MAX));
        }
        for i in from..to {
            blocks.extend_from_slice(tp.raw(i));
        }
        meta.last = prev;
        meta.len = (blocks.len() - base - start) as u32;
        prev_last = prev;
        metas.push(meta);
    }
    let bounds = TermBounds {
        df: n as u32,
        n_blocks: metas.len() as u32,
        max_tf: metas.iter().map(|m| m.max_tf).max().unwrap_or(0),
        min_len: metas.iter().map(|m| m.min_len).min().unwrap_or(0),
        max_created: metas
            .iter()
            .map(|m| m.max_created)
            .max()
            .unwrap_or(i64::MIN),
    };
    if metas.len() > 1 {
        let mut prev = 0u32;
        for m in metas.iter() {
            put_varint(out, u64::from(m.last - prev));
            prev = m.last;
            for v in [m.count, m.max_tf, m.min_len] {
                put_varint(out, u64::from(v));
            }
            put_varint(out, zigzag(m.max_created));
            put_varint(out, u64::from(m.len));
        }
        out.extend_from_slice(data);
    }
    bounds
}

/// The skip table of a term whose postings (`post_len` bytes in all) start at `bytes` (enough
/// of them to hold the table): the blocks and the offset of the first block.
#[cfg(test)]
pub(crate) fn read_skip(bytes: &[u8], b: &TermBounds, post_len: u64) -> Result<(Vec<BlockMeta>, usize)> {
    let mut metas = Vec::with_capacity(b.n_blocks as usize);
    let table = read_skip_into(bytes, b, post_len, &mut metas)?;
    Ok((metas, table))
}

/// [`read_skip`] into `metas` (emptied first), returning the offset of the first block.
pub(crate) fn read_skip_into(
    bytes: &[u8],
    b: &TermBounds,
    post_len: u64,
    metas: &mut Vec<BlockMeta>,
) -> Result<usize> {
    metas.clear();
    if b.n_blocks <= 1 {
        let len = u32::try_from(post_len).map_err(|_| corrupt("postings length"))?;
        metas.push(BlockMeta {
            // Known once the block is read (a cursor reads its first block when it opens).
            last: END,
            count: b.df,
            max_tf: b.max_tf,
            min_len: b.min_len,
            max_created: b.max_created,
            off: 0,
            len,
        });
        return Ok(0);
    }
    let mut r = Reader::new(bytes);
    let mut prev = 0u32;
    let mut off = 0u32;
    for _ in 0..b.n_blocks {
        let last = prev
            .checked_add(r.u32("skip last")?)
            .ok_or_else(|| corrupt("skip last"))?;
        prev = last;
        let count = r.u32("skip count")?;
        let max_tf = r.u32("skip max_tf")?;
        let min_len = r.u32("skip min_len")?;
        let max_created = r.i64("skip max_created")?;
        let len = r.u32("skip len")?;
        if count == 0 || count as usize > BLOCK {
            return Err(corrupt("skip count"));
        }
        metas.push(BlockMeta {
            last,
            count,
            max_tf,
            min_len,
            max_created,
            off,
            len,
        });
        off = off.checked_add(len).ok_or_else(|| corrupt("skip len"))?;
    }
    Ok(r.pos)
}

/// Upper bound of a skip table's size in bytes (6 varints of at most 10 bytes per block).
pub(crate) fn skip_bytes_max(b: &TermBounds) -> usize {
    if b.n_blocks <= 1 {
        0
    } else {
        b.n_blocks as usize * 60
    }
}

/// Decodes a block's ordinals and frequencies from `data` (the block's bytes); `base` is the
/// previous block's last ordinal (0 for the first). Returns where the positions start.
pub(crate) fn decode_block(
    data: &[u8],
    count: u32,
    base: u32,
    ords: &mut Vec<u32>,
    tfs: &mut Vec<u32>,
) -> Result<usize> {
    ords.clear();
    tfs.clear();
    let mut p = 0;
    let mut prev = u64::from(base);
    for i in 0..count {
        let v = get_varint(data, &mut p).ok_or_else(|| corrupt("block ordinal"))?;
        let delta = v >> 1;
        if delta == 0 && !(i == 0 && base == 0) {
            return Err(corrupt("block ordinals not ascending"));
        }
        prev = prev
            .checked_add(delta)
            .filter(|&x| x < u64::from(END))
            .ok_or_else(|| corrupt("block ordinal"))?;
        let tf = if v & 1 == 1 {
            1
        } else {
            let tf = get_varint(data, &mut p).ok_or_else(|| corrupt("block tf"))?;
            if tf < 2 || tf > u64::from(u32::MAX) {
                return Err(corrupt("block tf"));
            }
            tf as u32
        };
        ords.push(prev as u32);
        tfs.push(tf);
    }
    Ok(p)
}

/// A cursor over one term's postings in one segment; blocks are read from the segment's
/// postings area when the cursor reaches them.
pub(crate) struct TermCursor {
    /// Byte offset of the term's first block in the postings area.
    data_start: u64,
    pub blocks: Vec<BlockMeta>,
    bi: usize,
    buf: Vec<u8>,
    ords: Vec<u32>,
    tfs: Vec<u32>,
    pos_start: usize,
    i: usize,
    /// The document (index in the block) whose positions `pos_buf` holds, if any.
    pos_for: Option<usize>,
    /// Where the positions of document `pos_next` start: decoding moves forward through the
    /// block only as far as the documents asked for, never the whole block per document.
    pos_next: usize,
    pos_off: usize,
    pos_buf: Vec<u32>,
    raw_starts: Vec<u32>,
    raw_loaded: bool,
    doc: u32,
    /// Bytes read from pages (for [`super::engine::SearchStats::bytes_read`]).
    pub bytes_read: u64,
}

impl TermCursor {
    /// A cursor over the blocks of a term whose first block starts at `data_start` of the
    /// postings area; positioned on its first document.
    #[cfg(test)]
    pub(crate) fn open(
        src: &mut dyn PageSource,
        data_start: u64,
        blocks: Vec<BlockMeta>,
    ) -> Result<TermCursor> {
        let mut c = TermCursor::empty();
        c.blocks = blocks;
        c.start(src, data_start)?;
        Ok(c)
    }

    /// A cursor over nothing, whose buffers [`TermCursor::start`] fills: a merge reuses one
    /// per input for every term.
    pub(crate) fn empty() -> TermCursor {
        TermCursor {
            data_start: 0,
            blocks: Vec::new(),
            bi: 0,
            buf: Vec::new(),
            ords: Vec::with_capacity(BLOCK),
            tfs: Vec::with_capacity(BLOCK),
            pos_start: 0,
            i: 0,
            pos_for: None,
            pos_next: 0,
            pos_off: 0,
            pos_buf: Vec::new(),
            raw_starts: Vec::new(),
            raw_loaded: false,
            doc: END,
            bytes_read: 0,
        }
    }

    /// Positions the cursor on the first document of the term whose blocks are in `blocks`
    /// and start at `data_start`.
    pub(crate) fn start(&mut self, src: &mut dyn PageSource, data_start: u64) -> Result<()> {
        self.data_start = data_start;
        self.doc = END;
        if !self.blocks.is_empty() {
            self.load(src, 0)?;
        }
        Ok(())
    }

    fn load(&mut self, src: &mut dyn PageSource, bi: usize) -> Result<()> {
        self.bi = bi;
        self.i = 0;
        self.pos_for = None;
        self.raw_loaded = false;
        let m = self.blocks[bi];
        let from = self.data_start + u64::from(m.off);
        self.buf.clear();
        read_range(
            src,
            Area::Postings,
            from,
            from + u64::from(m.len),
            &mut self.buf,
        )?;
        self.bytes_read += self.buf.len() as u64;
        let base = if bi == 0 { 0 } else { self.blocks[bi - 1].last };
        self.pos_start = decode_block(&self.buf, m.count, base, &mut self.ords, &mut self.tfs)?;
        (self.pos_next, self.pos_off) = (0, self.pos_start);
        let last = *self.ords.last().ok_or_else(|| corrupt("empty block"))?;
        if m.last == END {
            self.blocks[bi].last = last;
        } else if last != m.last {
            return Err(corrupt("block last ordinal"));
        }
        self.doc = self.ords[0];
        Ok(())
    }

    #[inline]
    pub(crate) fn doc(&self) -> u32 {
        self.doc
    }

    pub(crate) fn tf(&self) -> u32 {
        self.tfs.get(self.i).copied().unwrap_or(0)
    }

    pub(crate) fn next(&mut self, src: &mut dyn PageSource) -> Result<()> {
        if self.doc == END {
            return Ok(());
        }
        self.i += 1;
        if self.i < self.ords.len() {
            self.doc = self.ords[self.i];
        } else if self.bi + 1 < self.blocks.len() {
            self.load(src, self.bi + 1)?;
        } else {
            self.doc = END;
        }
        Ok(())
    }

    /// Moves to the first document ≥ `target`, reading only the block that holds it.
    pub(crate) fn advance(&mut self, src: &mut dyn PageSource, target: u32) -> Result<()> {
        if self.doc >= target {
            return Ok(());
        }
        if self.blocks[self.bi].last < target {
            let skip = self.blocks[self.bi..].partition_point(|b| b.last < target);
            let bi = self.bi + skip;
            if bi >= self.blocks.len() {
                self.bi = self.blocks.len() - 1;
                self.doc = END;
                return Ok(());
            }
            self.load(src, bi)?;
        }
        while self.i < self.ords.len() && self.ords[self.i] < target {
            self.i += 1;
        }
        self.doc = self.ords.get(self.i).copied().unwrap_or(END);
        Ok(())
    }

    /// The block that holds the first document ≥ `target`, without moving or reading.
    pub(crate) fn shallow(&self, target: u32) -> Option<&BlockMeta> {
        let start = self.bi.min(self.blocks.len());
        let k = self.blocks[start..].partition_point(|b| b.last < target);
        self.blocks.get(start + k)
    }

    /// The current document's positions as stored (delta varints), for a merge to copy.
    pub(crate) fn raw_positions(&mut self) -> &[u8] {
        if self.doc == END {
            return &[];
        }
        if !self.raw_loaded {
            self.raw_starts.clear();
            let mut p = self.pos_start;
            for &tf in &self.tfs {
                self.raw_starts.push(p as u32);
                let mut k = 0;
                while k < tf && p < self.buf.len() {
                    if self.buf[p] < 0x80 {
                        k += 1;
                    }
                    p += 1;
                }
            }
            self.raw_starts.push(p as u32);
            self.raw_loaded = true;
        }
        let (Some(&s), Some(&e)) = (self.raw_starts.get(self.i), self.raw_starts.get(self.i + 1))
        else {
            return &[];
        };
        self.buf.get(s as usize..e as usize).unwrap_or(&[])
    }

    /// The positions of the current document (ascending).
    pub(crate) fn positions(&mut self) -> &[u32] {
        if self.doc == END {
            return &[];
        }
        if self.pos_for != Some(self.i) {
            if self.pos_next > self.i {
                (self.pos_next, self.pos_off) = (0, self.pos_start);
            }
            // Skip the documents in between: a varint ends at a byte below 0x80.
            let mut p = self.pos_off;
            for &tf in &self.tfs[self.pos_next..self.i] {
                let mut k = 0;
                while k < tf && p < self.buf.len() {
                    k += u32::from(self.buf[p] < 0x80);
                    p += 1;
                }
            }
            self.pos_buf.clear();
            let mut last = 0u64;
            for _ in 0..self.tf() {
                let Some(d) = get_varint(&self.buf, &mut p) else {
                    break;
                };
                last = last.saturating_add(d).min(u64::from(u32::MAX));
                self.pos_buf.push(last as u32);
            }
            (self.pos_next, self.pos_off, self.pos_for) = (self.i + 1, p, Some(self.i));
        }
        &self.pos_buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::pages::{page_no, MemPages, Page, PAGE_SIZE};

    fn paged(bytes: &[u8]) -> MemPages {
        let mut m = MemPages::default();
        for (i, c) in bytes.chunks(PAGE_SIZE).enumerate() {
            m.0.insert(page_no(Area::Postings, i as u32), Page::from(c));
        }
        m
    }

    #[test]
    fn cursor_walks_skips_and_reads_positions() {
        for n in [1u32, 5, 1000] {
            let lens: Vec<u32> = (0..n * 3).map(|i| 10 + i % 7).collect();
            let created: Vec<i64> = (0..n * 3).map(i64::from).collect();
            let mut tp = TermPostings::default();
            for i in (0..n * 3).filter(|i| i % 3 == 0) {
                let ps: Vec<u32> = (0..(1 + i % 4)).map(|k| k * 2 + i).collect();
                tp.push(i, &ps);
            }
            let mut out = vec![0xAA; 7]; // the term starts mid-area
            let b = encode_term(
                &tp,
                &lens,
                &created,
                &mut out,
                &mut EncodeScratch::default(),
            );
            assert_eq!(b.df, n);
            let mut src = paged(&out);
            let post_len = (out.len() - 7) as u64;
            let (blocks, skip_len) = read_skip(&out[7..], &b, post_len).unwrap();
            let mut c = TermCursor::open(&mut src, 7 + skip_len as u64, blocks.clone()).unwrap();
            let mut seen = 0;
            while c.doc() != END {
                let i = c.doc();
                assert_eq!(c.tf(), 1 + i % 4);
                let want: Vec<u32> = (0..(1 + i % 4)).map(|k| k * 2 + i).collect();
                assert_eq!(c.positions(), &want[..]);
                seen += 1;
                c.next(&mut src).unwrap();
            }
            assert_eq!(seen, n);
            let mut c = TermCursor::open(&mut src, 7 + skip_len as u64, blocks).unwrap();
            c.advance(&mut src, n * 3 / 2 + 1).unwrap();
            assert!(c.doc() == END || c.doc() % 3 == 0 && c.doc() > n * 3 / 2);
            c.advance(&mut src, n * 3).unwrap();
            assert_eq!(c.doc(), END);
        }
    }

    #[test]
    fn corrupt_blocks_are_errors() {
        let mut ords = Vec::new();
        let mut tfs = Vec::new();
        assert!(decode_block(&[0xff, 0xff], 1, 0, &mut ords, &mut tfs).is_err());
        assert!(decode_block(&[(5 << 1), 1], 1, 0, &mut ords, &mut tfs).is_err());
        assert!(decode_block(&[(5 << 1) | 1, (0 << 1) | 1], 2, 0, &mut ords, &mut tfs).is_err());
    }
}
