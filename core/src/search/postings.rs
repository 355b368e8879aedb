//! Block-compressed postings.
//!
//! A term's postings are cut into blocks of [`BLOCK`] documents. Per block the document
//! ordinals (indexes into the segment's sorted document keys) are delta-coded varints followed
//! by the term frequencies; positions live in a separate stream (delta-coded per document) so
//! that scoring never decodes them. Each block carries its last ordinal (for skipping) and the
//! data of its score upper bound: the largest term frequency, the smallest document length and
//! the newest `created_at` in the block. BM25's tf part grows with tf and shrinks with length,
//! and the recency factor grows with `created_at`, so the bound stays valid whatever N, avgdl,
//! idf, `now` and the recency settings of a query are.

/// Documents per block.
pub const BLOCK: usize = 128;
/// Ordinal of an exhausted cursor.
pub const END: u32 = u32::MAX;

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`; `None` when the buffer ends or the varint is too long.
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if shift >= 64 {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
    }
}

pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Per-block metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockMeta {
    pub last: u32,
    pub count: u32,
    pub max_tf: u32,
    pub min_len: u32,
    pub max_created: i64,
    /// Byte offset of the block in the postings stream.
    pub doc_off: u32,
    /// Byte offset of the block in the positions stream.
    pub pos_off: u32,
}

/// One document's entry while building.
pub struct Posting {
    pub ord: u32,
    pub positions: Vec<u32>,
}

/// One term's postings while building, flat so that a merge or a flush reuses the buffers:
/// posting `i` has ordinal `ords[i]`, term frequency `tfs[i]` and its positions already
/// encoded (delta varints, as in the positions stream) at `bytes[starts[i]..starts[i + 1]]`,
/// so a merge copies positions without decoding them.
#[derive(Clone, Debug, Default)]
pub struct TermPostings {
    pub ords: Vec<u32>,
    pub tfs: Vec<u32>,
    pub starts: Vec<u32>,
    pub bytes: Vec<u8>,
}

impl TermPostings {
    pub fn clear(&mut self) {
        self.ords.clear();
        self.tfs.clear();
        self.starts.clear();
        self.bytes.clear();
    }

    pub fn len(&self) -> usize {
        self.ords.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ords.is_empty()
    }

    /// Adds a posting with its positions (ascending, at least one).
    pub fn push(&mut self, ord: u32, positions: &[u32]) {
        self.ords.push(ord);
        self.tfs.push(positions.len() as u32);
        self.starts.push(self.bytes.len() as u32);
        let mut last_pos = 0u64;
        for &q in positions {
            put_varint(&mut self.bytes, u64::from(q) - last_pos.min(u64::from(q)));
            last_pos = u64::from(q);
        }
    }

    /// Adds a posting whose `tf` positions are already encoded.
    pub fn push_raw(&mut self, ord: u32, tf: u32, encoded: &[u8]) {
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
    pub fn is_sorted(&self) -> bool {
        self.ords.windows(2).all(|w| w[0] < w[1])
    }

    /// Copies the postings into `out` ordered by ordinal (stable).
    pub fn sorted_into(&self, out: &mut TermPostings) {
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.sort_by_key(|&i| self.ords[i]);
        out.clear();
        for i in idx {
            out.push_raw(self.ords[i], self.tfs[i], self.raw(i));
        }
    }
}

/// Appends one term's postings (sorted by ordinal, tf = number of positions ≥ 1) as blocks.
/// `lens` and `created` are indexed by ordinal.
pub fn encode_term(
    postings: &[Posting],
    lens: &[u32],
    created: &[i64],
    docs_out: &mut Vec<u8>,
    pos_out: &mut Vec<u8>,
    blocks: &mut Vec<BlockMeta>,
) {
    let mut tp = TermPostings::default();
    for p in postings {
        tp.push(p.ord, &p.positions);
    }
    encode_postings(&tp, lens, created, docs_out, pos_out, blocks);
}

/// [`encode_term`] over flat postings.
pub fn encode_postings(
    tp: &TermPostings,
    lens: &[u32],
    created: &[i64],
    docs_out: &mut Vec<u8>,
    pos_out: &mut Vec<u8>,
    blocks: &mut Vec<BlockMeta>,
) {
    let mut prev_last: u64 = 0;
    let n = tp.len();
    let mut from = 0;
    while from < n {
        let to = (from + BLOCK).min(n);
        let mut meta = BlockMeta {
            last: 0,
            count: (to - from) as u32,
            max_tf: 0,
            min_len: u32::MAX,
            max_created: i64::MIN,
            doc_off: docs_out.len() as u32,
            pos_off: pos_out.len() as u32,
        };
        let mut prev = prev_last;
        for &o in &tp.ords[from..to] {
            put_varint(docs_out, u64::from(o) - prev);
            prev = u64::from(o);
            let ord = o as usize;
            meta.min_len = meta.min_len.min(lens.get(ord).copied().unwrap_or(0));
            meta.max_created = meta
                .max_created
                .max(created.get(ord).copied().unwrap_or(i64::MAX));
        }
        for &tf in &tp.tfs[from..to] {
            put_varint(docs_out, u64::from(tf));
            meta.max_tf = meta.max_tf.max(tf);
        }
        // The block's positions are contiguous in `bytes`.
        let s = tp.starts[from] as usize;
        let e = tp.starts.get(to).map_or(tp.bytes.len(), |&e| e as usize);
        pos_out.extend_from_slice(&tp.bytes[s..e]);
        meta.last = prev as u32;
        prev_last = prev;
        blocks.push(meta);
        from = to;
    }
}

/// Decodes one block's ordinals and frequencies. `base` is the previous block's last
/// ordinal (0 for the first). Returns `None` on malformed data.
pub fn decode_block(
    docs: &[u8],
    meta: &BlockMeta,
    base: u32,
    ords: &mut Vec<u32>,
    tfs: &mut Vec<u32>,
) -> Option<()> {
    ords.clear();
    tfs.clear();
    let mut p = meta.doc_off as usize;
    let mut prev = u64::from(base);
    for _ in 0..meta.count {
        prev = prev.checked_add(get_varint(docs, &mut p)?)?;
        if prev >= u64::from(END) {
            return None;
        }
        ords.push(prev as u32);
    }
    for _ in 0..meta.count {
        let tf = get_varint(docs, &mut p)?;
        if tf == 0 || tf > u64::from(u32::MAX) {
            return None;
        }
        tfs.push(tf as u32);
    }
    Some(())
}

/// Decodes one block's positions: `starts[i]..starts[i+1]` index `out` for document `i`.
pub fn decode_positions(
    pos: &[u8],
    meta: &BlockMeta,
    tfs: &[u32],
    out: &mut Vec<u32>,
    starts: &mut Vec<u32>,
) -> Option<()> {
    out.clear();
    starts.clear();
    let mut p = meta.pos_off as usize;
    for &tf in tfs {
        starts.push(out.len() as u32);
        let mut last = 0u64;
        for _ in 0..tf {
            last = last.checked_add(get_varint(pos, &mut p)?)?;
            if last > u64::from(u32::MAX) {
                return None;
            }
            out.push(last as u32);
        }
    }
    starts.push(out.len() as u32);
    Some(())
}

/// A cursor over one term's postings in one segment.
pub struct TermCursor<'a> {
    blocks: &'a [BlockMeta],
    docs: &'a [u8],
    pos: &'a [u8],
    bi: usize,
    loaded: usize,
    ords: Vec<u32>,
    tfs: Vec<u32>,
    i: usize,
    pos_loaded: bool,
    pos_buf: Vec<u32>,
    pos_starts: Vec<u32>,
    raw_loaded: bool,
    raw_starts: Vec<u32>,
    doc: u32,
}

impl<'a> TermCursor<'a> {
    pub fn new(blocks: &'a [BlockMeta], docs: &'a [u8], pos: &'a [u8]) -> Self {
        let mut c = TermCursor {
            blocks,
            docs,
            pos,
            bi: 0,
            loaded: usize::MAX,
            ords: Vec::with_capacity(BLOCK),
            tfs: Vec::with_capacity(BLOCK),
            i: 0,
            pos_loaded: false,
            pos_buf: Vec::new(),
            pos_starts: Vec::new(),
            raw_loaded: false,
            raw_starts: Vec::new(),
            doc: END,
        };
        if !blocks.is_empty() {
            c.load(0);
        }
        c
    }

    /// Points the cursor at another term's blocks of the same segment, keeping its buffers.
    pub fn reset(&mut self, blocks: &'a [BlockMeta]) {
        self.blocks = blocks;
        self.bi = 0;
        self.loaded = usize::MAX;
        self.i = 0;
        self.pos_loaded = false;
        self.raw_loaded = false;
        self.ords.clear();
        self.tfs.clear();
        self.doc = END;
        if !blocks.is_empty() {
            self.load(0);
        }
    }

    fn load(&mut self, bi: usize) {
        self.bi = bi;
        self.i = 0;
        self.pos_loaded = false;
        self.raw_loaded = false;
        let base = if bi == 0 { 0 } else { self.blocks[bi - 1].last };
        let ok = decode_block(
            self.docs,
            &self.blocks[bi],
            base,
            &mut self.ords,
            &mut self.tfs,
        )
        .is_some()
            && !self.ords.is_empty();
        self.loaded = bi;
        if ok {
            self.doc = self.ords[0];
        } else {
            // Validated segments never get here; a corrupt block ends the list.
            self.ords.clear();
            self.tfs.clear();
            self.bi = self.blocks.len();
            self.doc = END;
        }
    }

    #[inline]
    pub fn doc(&self) -> u32 {
        self.doc
    }

    pub fn tf(&self) -> u32 {
        self.tfs.get(self.i).copied().unwrap_or(0)
    }

    pub fn next(&mut self) {
        if self.doc == END {
            return;
        }
        self.i += 1;
        if self.i < self.ords.len() {
            self.doc = self.ords[self.i];
            self.pos_loaded = false;
        } else if self.bi + 1 < self.blocks.len() {
            self.load(self.bi + 1);
        } else {
            self.doc = END;
        }
    }

    /// Moves to the first document ≥ `target`.
    pub fn advance(&mut self, target: u32) {
        if self.doc >= target {
            return;
        }
        if self.blocks[self.bi].last < target {
            let skip = self.blocks[self.bi..].partition_point(|b| b.last < target);
            let bi = self.bi + skip;
            if bi >= self.blocks.len() {
                self.bi = self.blocks.len() - 1;
                self.doc = END;
                return;
            }
            self.load(bi);
        }
        while self.i < self.ords.len() && self.ords[self.i] < target {
            self.i += 1;
        }
        self.pos_loaded = false;
        self.doc = self.ords.get(self.i).copied().unwrap_or(END);
    }

    /// The block that holds the first document ≥ `target`, without moving: its metadata.
    pub fn shallow(&self, target: u32) -> Option<&'a BlockMeta> {
        let blocks = self.blocks;
        let start = self.bi.min(blocks.len());
        let k = blocks[start..].partition_point(|b| b.last < target);
        blocks.get(start + k)
    }

    /// The current document's positions as stored (delta varints), for a merge to copy.
    pub fn raw_positions(&mut self) -> &'a [u8] {
        if self.doc == END {
            return &[];
        }
        if !self.raw_loaded {
            // Byte offsets of the block's documents: skip tf varints per document.
            self.raw_starts.clear();
            let pos = self.pos;
            let mut p = self.blocks[self.bi].pos_off as usize;
            for &tf in &self.tfs {
                self.raw_starts.push(p as u32);
                let mut k = 0;
                while k < tf && p < pos.len() {
                    if pos[p] < 0x80 {
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
        self.pos.get(s as usize..e as usize).unwrap_or(&[])
    }

    /// The positions of the current document (ascending).
    pub fn positions(&mut self) -> &[u32] {
        if self.doc == END {
            return &[];
        }
        if !self.pos_loaded {
            let meta = self.blocks[self.bi];
            if decode_positions(
                self.pos,
                &meta,
                &self.tfs,
                &mut self.pos_buf,
                &mut self.pos_starts,
            )
            .is_none()
            {
                self.pos_buf.clear();
                self.pos_starts.clear();
            }
            self.pos_loaded = true;
        }
        let (Some(&s), Some(&e)) = (self.pos_starts.get(self.i), self.pos_starts.get(self.i + 1))
        else {
            return &[];
        };
        self.pos_buf.get(s as usize..e as usize).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut b = Vec::new();
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            put_varint(&mut b, v);
        }
        let mut p = 0;
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(get_varint(&b, &mut p), Some(v));
        }
        assert_eq!(get_varint(&b, &mut p), None);
        assert_eq!(get_varint(&[0xff; 20], &mut 0), None);
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn cursor_walks_skips_and_reads_positions() {
        let n = 1000u32;
        let lens: Vec<u32> = (0..n).map(|i| 10 + i % 7).collect();
        let created: Vec<i64> = (0..n).map(i64::from).collect();
        let postings: Vec<Posting> = (0..n)
            .filter(|i| i % 3 == 0)
            .map(|i| Posting {
                ord: i,
                positions: (0..(1 + i % 4)).map(|k| k * 2 + i).collect(),
            })
            .collect();
        let (mut d, mut p, mut b) = (Vec::new(), Vec::new(), Vec::new());
        encode_term(&postings, &lens, &created, &mut d, &mut p, &mut b);
        assert_eq!(b.len(), postings.len().div_ceil(BLOCK));
        let mut c = TermCursor::new(&b, &d, &p);
        let mut seen = 0;
        while c.doc() != END {
            let i = c.doc();
            assert_eq!(i % 3, 0);
            assert_eq!(c.tf(), 1 + i % 4);
            let want: Vec<u32> = (0..(1 + i % 4)).map(|k| k * 2 + i).collect();
            assert_eq!(c.positions(), &want[..]);
            seen += 1;
            c.next();
        }
        assert_eq!(seen, postings.len());
        let mut c = TermCursor::new(&b, &d, &p);
        c.advance(500);
        assert_eq!(c.doc(), 501);
        assert_eq!(c.shallow(700).unwrap().last >= 700, true);
        c.advance(999);
        assert_eq!(c.doc(), 999);
        c.advance(1000);
        assert_eq!(c.doc(), END);
        assert!(b.iter().all(|m| m.max_tf >= 1 && m.min_len >= 10));
    }
}
