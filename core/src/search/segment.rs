//! Immutable segments: sorted document keys with exact lengths and `created_at`, an `fst::Map`
//! term dictionary (term → term number), per-term statistics, block metadata and the
//! block-compressed postings and positions streams (see [`super::postings`]).
//!
//! Serialized form (one BLOB in `mem_idx_segments.data`), all integers varints unless noted:
//!
//! ```text
//! "AMS1"  n_docs  total_len
//! n_docs × key delta (zigzag)   n_docs × len   n_docs × created_at delta (zigzag)
//! n_terms × (df, first_block, n_blocks, max_tf, min_len, max_created zigzag)
//! n_blocks  n_blocks × (last delta, count, max_tf, min_len, max_created zigzag, doc_off, pos_off)
//! fst_len fst-bytes  docs_len docs-bytes  pos_len pos-bytes
//! ```
//!
//! A segment is validated completely when it is decoded, so cursors never see bad data.

use super::delta::DocTerms;
use super::postings::{
    decode_block, decode_positions, encode_postings, get_varint, put_varint, unzigzag, zigzag,
    BlockMeta, Posting, TermCursor, TermPostings, BLOCK,
};
use crate::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 4] = b"AMS1";

/// Statistics of one term in one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermInfo {
    pub df: u32,
    pub first_block: u32,
    pub n_blocks: u32,
    pub max_tf: u32,
    pub min_len: u32,
    pub max_created: i64,
}

/// A decoded immutable segment.
pub struct Segment {
    pub keys: Vec<i64>,
    pub lens: Vec<u32>,
    pub created: Vec<i64>,
    pub total_len: u64,
    pub dict: fst::Map<Vec<u8>>,
    pub terms: Vec<TermInfo>,
    pub blocks: Vec<BlockMeta>,
    pub docs: Vec<u8>,
    pub pos: Vec<u8>,
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Segment({} docs, {} terms)",
            self.keys.len(),
            self.terms.len()
        )
    }
}

/// Builds a segment term by term (terms ascending).
pub struct Builder {
    keys: Vec<i64>,
    lens: Vec<u32>,
    created: Vec<i64>,
    total_len: u64,
    fb: fst::MapBuilder<Vec<u8>>,
    infos: Vec<TermInfo>,
    blocks: Vec<BlockMeta>,
    dout: Vec<u8>,
    pout: Vec<u8>,
}

impl Builder {
    /// Starts a segment of documents sorted by key (unique).
    pub fn new(docs: Vec<DocIn>) -> Result<Builder> {
        let keys: Vec<i64> = docs.iter().map(|d| d.key).collect();
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::internal(
                "segment build: document keys not strictly ascending",
            ));
        }
        let lens: Vec<u32> = docs.iter().map(|d| d.len).collect();
        let created: Vec<i64> = docs.iter().map(|d| d.created).collect();
        let total_len = lens.iter().map(|&l| u64::from(l)).sum();
        Ok(Builder {
            keys,
            lens,
            created,
            total_len,
            fb: fst::MapBuilder::memory(),
            infos: Vec::new(),
            blocks: Vec::new(),
            dout: Vec::new(),
            pout: Vec::new(),
        })
    }

    /// Adds a term (greater than the previous one) with its postings sorted by ordinal;
    /// a term without postings is skipped.
    pub fn add_term(&mut self, term: &[u8], postings: &TermPostings) -> Result<()> {
        if postings.is_empty() {
            return Ok(());
        }
        let first_block = self.blocks.len() as u32;
        encode_postings(
            postings,
            &self.lens,
            &self.created,
            &mut self.dout,
            &mut self.pout,
            &mut self.blocks,
        );
        let n_blocks = self.blocks.len() as u32 - first_block;
        let bs = &self.blocks[first_block as usize..];
        let info = TermInfo {
            df: postings.len() as u32,
            first_block,
            n_blocks,
            max_tf: bs.iter().map(|b| b.max_tf).max().unwrap_or(0),
            min_len: bs.iter().map(|b| b.min_len).min().unwrap_or(0),
            max_created: bs.iter().map(|b| b.max_created).max().unwrap_or(i64::MAX),
        };
        self.fb
            .insert(term, self.infos.len() as u64)
            .map_err(|e| Error::internal(format!("segment build: {e}")))?;
        self.infos.push(info);
        Ok(())
    }

    pub fn finish(self) -> Result<Segment> {
        if self.dout.len() > u32::MAX as usize || self.pout.len() > u32::MAX as usize {
            return Err(Error::internal("segment build: segment larger than 4 GiB"));
        }
        let bytes = self
            .fb
            .into_inner()
            .map_err(|e| Error::internal(format!("segment build: {e}")))?;
        let dict =
            fst::Map::new(bytes).map_err(|e| Error::internal(format!("segment build: {e}")))?;
        Ok(Segment {
            keys: self.keys,
            lens: self.lens,
            created: self.created,
            total_len: self.total_len,
            dict,
            terms: self.infos,
            blocks: self.blocks,
            docs: self.dout,
            pos: self.pout,
        })
    }
}

/// A document entering a segment.
pub struct DocIn {
    pub key: i64,
    pub len: u32,
    pub created: i64,
}

fn corrupt(what: &str) -> Error {
    Error::internal(format!(
        "search index segment is corrupt ({what}); run mem_reindex()"
    ))
}

impl Segment {
    pub fn doc_count(&self) -> usize {
        self.keys.len()
    }

    /// Approximate heap size, for the cache's memory bound.
    pub fn heap_bytes(&self) -> usize {
        self.keys.len() * 20
            + self.dict.as_fst().as_bytes().len()
            + self.terms.len() * std::mem::size_of::<TermInfo>()
            + self.blocks.len() * std::mem::size_of::<BlockMeta>()
            + self.docs.len()
            + self.pos.len()
            + 256
    }

    /// The ordinal of a document key.
    pub fn ord_of(&self, key: i64) -> Option<u32> {
        self.keys.binary_search(&key).ok().map(|i| i as u32)
    }

    /// The number of a term in this segment.
    pub fn term_id(&self, term: &str) -> Option<usize> {
        self.dict.get(term).map(|v| v as usize)
    }

    /// The info of a term number.
    pub fn info(&self, id: usize) -> Option<&TermInfo> {
        self.terms.get(id)
    }

    /// A cursor over a term number's postings.
    pub fn cursor(&self, id: usize) -> TermCursor<'_> {
        let blocks = match self.terms.get(id) {
            Some(t) => self
                .blocks
                .get(t.first_block as usize..(t.first_block as usize + t.n_blocks as usize))
                .unwrap_or(&[]),
            None => &[],
        };
        TermCursor::new(blocks, &self.docs, &self.pos)
    }

    /// The postings blocks of a term number (empty when unknown).
    pub fn term_blocks(&self, id: usize) -> &[BlockMeta] {
        match self.terms.get(id) {
            Some(t) => self
                .blocks
                .get(t.first_block as usize..(t.first_block as usize + t.n_blocks as usize))
                .unwrap_or(&[]),
            None => &[],
        }
    }

    /// A cursor over nothing yet, for [`TermCursor::reset`] to point at this segment's terms.
    pub fn empty_cursor(&self) -> TermCursor<'_> {
        TermCursor::new(&[], &self.docs, &self.pos)
    }

    /// Builds a segment from documents sorted by key (unique) and terms sorted ascending, each
    /// with its postings sorted by ordinal.
    pub fn build<I>(docs: Vec<DocIn>, terms: I) -> Result<Segment>
    where
        I: IntoIterator<Item = (Vec<u8>, Vec<Posting>)>,
    {
        let mut b = Builder::new(docs)?;
        let mut tp = TermPostings::default();
        for (term, postings) in terms {
            tp.clear();
            for p in &postings {
                tp.push(p.ord, &p.positions);
            }
            b.add_term(&term, &tp)?;
        }
        b.finish()
    }

    /// Builds a segment from analysed documents (the delta, a reindex).
    pub fn from_docs(mut docs: Vec<(i64, i64, DocTerms)>) -> Result<Segment> {
        docs.sort_by_key(|d| d.0);
        docs.dedup_by_key(|d| d.0);
        let metas = docs
            .iter()
            .map(|(key, created, dt)| DocIn {
                key: *key,
                len: dt.len,
                created: *created,
            })
            .collect();
        // Every (term, ord) pair, sorted by term; a stable sort keeps ordinals ascending.
        let mut entries: Vec<(&str, u32, &[u32])> = Vec::new();
        for (ord, (_, _, dt)) in docs.iter().enumerate() {
            for (t, positions) in &dt.terms {
                entries.push((t.as_str(), ord as u32, positions.as_slice()));
            }
        }
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let mut b = Builder::new(metas)?;
        let mut tp = TermPostings::default();
        let mut i = 0;
        while i < entries.len() {
            let term = entries[i].0;
            tp.clear();
            while i < entries.len() && entries[i].0 == term {
                tp.push(entries[i].1, entries[i].2);
                i += 1;
            }
            b.add_term(term.as_bytes(), &tp)?;
        }
        b.finish()
    }

    /// Builds a segment from delta payloads `(key, created_at, len, payload)`, copying the
    /// stored positions without decoding them (the payload uses the segment's encoding).
    /// `Err(key)` names a document whose payload is malformed.
    pub fn from_payloads(
        docs: &[(i64, i64, u32, &[u8])],
    ) -> std::result::Result<Result<Segment>, i64> {
        let mut order: Vec<usize> = (0..docs.len()).collect();
        order.sort_by_key(|&i| docs[i].0);
        order.dedup_by_key(|i| docs[*i].0);
        let metas: Vec<DocIn> = order
            .iter()
            .map(|&i| DocIn {
                key: docs[i].0,
                len: docs[i].2,
                created: docs[i].1,
            })
            .collect();
        // Every (term, ord) pair, sorted by term; a stable sort keeps ordinals ascending.
        let mut entries: Vec<(u32, super::delta::RawTerm<'_>)> = Vec::new();
        for (ord, &i) in order.iter().enumerate() {
            let terms = super::delta::raw_terms(docs[i].3).ok_or(docs[i].0)?;
            entries.extend(terms.into_iter().map(|t| (ord as u32, t)));
        }
        entries.sort_by(|a, b| a.1.term.cmp(b.1.term));
        let build = || {
            let mut b = Builder::new(metas)?;
            let mut tp = TermPostings::default();
            let mut i = 0;
            while i < entries.len() {
                let term = entries[i].1.term;
                tp.clear();
                while i < entries.len() && entries[i].1.term == term {
                    let (ord, t) = &entries[i];
                    tp.push_raw(*ord, t.tf, t.positions);
                    i += 1;
                }
                b.add_term(term, &tp)?;
            }
            b.finish()
        };
        Ok(build())
    }

    /// Every live posting of every term, for merges: calls `f(term, ord, positions)` in term
    /// order, then ordinal order.
    pub fn for_each_posting(&self, mut f: impl FnMut(&[u8], u32, &[u32])) -> Result<()> {
        use fst::Streamer;
        let mut stream = self.dict.stream();
        while let Some((term, id)) = stream.next() {
            let mut c = self.cursor(id as usize);
            while c.doc() != super::postings::END {
                let d = c.doc();
                f(term, d, c.positions());
                c.next();
            }
        }
        Ok(())
    }

    pub fn serialize(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(self.docs.len() + self.pos.len() + self.keys.len() * 6 + 64);
        o.extend_from_slice(MAGIC);
        put_varint(&mut o, self.keys.len() as u64);
        put_varint(&mut o, self.total_len);
        let mut prev = 0i64;
        for &k in &self.keys {
            put_varint(&mut o, zigzag(k.wrapping_sub(prev)));
            prev = k;
        }
        for &l in &self.lens {
            put_varint(&mut o, u64::from(l));
        }
        let mut prev = 0i64;
        for &c in &self.created {
            put_varint(&mut o, zigzag(c.wrapping_sub(prev)));
            prev = c;
        }
        put_varint(&mut o, self.terms.len() as u64);
        for t in &self.terms {
            for v in [t.df, t.first_block, t.n_blocks, t.max_tf, t.min_len] {
                put_varint(&mut o, u64::from(v));
            }
            put_varint(&mut o, zigzag(t.max_created));
        }
        put_varint(&mut o, self.blocks.len() as u64);
        let mut prev_last = 0u32;
        for b in &self.blocks {
            put_varint(&mut o, u64::from(b.last.wrapping_sub(prev_last)));
            prev_last = b.last;
            for v in [b.count, b.max_tf, b.min_len] {
                put_varint(&mut o, u64::from(v));
            }
            put_varint(&mut o, zigzag(b.max_created));
            put_varint(&mut o, u64::from(b.doc_off));
            put_varint(&mut o, u64::from(b.pos_off));
        }
        for part in [self.dict.as_fst().as_bytes(), &self.docs[..], &self.pos[..]] {
            put_varint(&mut o, part.len() as u64);
            o.extend_from_slice(part);
        }
        o
    }

    /// Decodes and fully validates a serialized segment.
    pub fn deserialize(buf: &[u8]) -> Result<Segment> {
        if buf.get(..4) != Some(&MAGIC[..]) {
            return Err(corrupt("bad magic"));
        }
        let mut rd = Reader { buf, p: 4 };
        let mut v = |what: &str| rd.varint(what);
        let u32v = |x: u64, what: &str| u32::try_from(x).map_err(|_| corrupt(what));
        let n = v("n_docs")?;
        if n > buf.len() as u64 {
            return Err(corrupt("n_docs"));
        }
        let n = n as usize;
        let total_len = v("total_len")?;
        let mut keys = Vec::with_capacity(n);
        let mut prev = 0i64;
        for _ in 0..n {
            prev = prev.wrapping_add(unzigzag(v("keys")?));
            keys.push(prev);
        }
        let mut lens = Vec::with_capacity(n);
        for _ in 0..n {
            lens.push(u32v(v("lens")?, "lens")?);
        }
        let mut created = Vec::with_capacity(n);
        let mut prev = 0i64;
        for _ in 0..n {
            prev = prev.wrapping_add(unzigzag(v("created")?));
            created.push(prev);
        }
        let nt = v("n_terms")?;
        if nt > buf.len() as u64 {
            return Err(corrupt("n_terms"));
        }
        let mut terms = Vec::with_capacity(nt as usize);
        for _ in 0..nt {
            terms.push(TermInfo {
                df: u32v(v("df")?, "df")?,
                first_block: u32v(v("first_block")?, "first_block")?,
                n_blocks: u32v(v("n_blocks")?, "n_blocks")?,
                max_tf: u32v(v("max_tf")?, "max_tf")?,
                min_len: u32v(v("min_len")?, "min_len")?,
                max_created: unzigzag(v("max_created")?),
            });
        }
        let nb = v("n_blocks")?;
        if nb > buf.len() as u64 {
            return Err(corrupt("n_blocks"));
        }
        let mut blocks = Vec::with_capacity(nb as usize);
        let mut prev_last = 0u32;
        for _ in 0..nb {
            let last = prev_last.wrapping_add(u32v(v("last")?, "last")?);
            prev_last = last;
            blocks.push(BlockMeta {
                last,
                count: u32v(v("count")?, "count")?,
                max_tf: u32v(v("max_tf")?, "max_tf")?,
                min_len: u32v(v("min_len")?, "min_len")?,
                max_created: unzigzag(v("max_created")?),
                doc_off: u32v(v("doc_off")?, "doc_off")?,
                pos_off: u32v(v("pos_off")?, "pos_off")?,
            });
        }
        let mut parts = Vec::with_capacity(3);
        let mut p = rd.p;
        for what in ["fst", "docs", "pos"] {
            let l = get_varint(buf, &mut p).ok_or_else(|| corrupt(what))? as usize;
            let end = p.checked_add(l).ok_or_else(|| corrupt(what))?;
            let part = buf.get(p..end).ok_or_else(|| corrupt(what))?.to_vec();
            p = end;
            parts.push(part);
        }
        if p != buf.len() {
            return Err(corrupt("trailing bytes"));
        }
        let pos = parts.pop().unwrap_or_default();
        let docs = parts.pop().unwrap_or_default();
        let fst_bytes = parts.pop().unwrap_or_default();
        let dict = fst::Map::new(fst_bytes).map_err(|_| corrupt("fst"))?;
        dict.as_fst()
            .verify()
            .map_err(|_| corrupt("fst checksum"))?;
        let seg = Segment {
            keys,
            lens,
            created,
            total_len,
            dict,
            terms,
            blocks,
            docs,
            pos,
        };
        seg.validate()?;
        Ok(seg)
    }

    /// Checks every invariant the cursors and the bounds rely on.
    pub fn validate(&self) -> Result<()> {
        use fst::Streamer;
        let n = self.keys.len();
        if self.keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(corrupt("keys not ascending"));
        }
        if self.lens.iter().map(|&l| u64::from(l)).sum::<u64>() != self.total_len {
            return Err(corrupt("total_len"));
        }
        if self.dict.len() != self.terms.len() {
            return Err(corrupt("dictionary size"));
        }
        let mut stream = self.dict.stream();
        while let Some((_, id)) = stream.next() {
            if id as usize >= self.terms.len() {
                return Err(corrupt("term number"));
            }
        }
        let (mut ords, mut tfs, mut ps, mut starts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut covered = 0usize;
        for t in &self.terms {
            let (fb, nb) = (t.first_block as usize, t.n_blocks as usize);
            if fb != covered || nb == 0 || fb + nb > self.blocks.len() {
                return Err(corrupt("term blocks"));
            }
            covered = fb + nb;
            let mut base = 0u32;
            let mut df = 0u64;
            let mut prev: Option<u32> = None;
            for b in &self.blocks[fb..fb + nb] {
                if b.count == 0 || b.count as usize > BLOCK {
                    return Err(corrupt("block count"));
                }
                decode_block(&self.docs, b, base, &mut ords, &mut tfs)
                    .ok_or_else(|| corrupt("block"))?;
                decode_positions(&self.pos, b, &tfs, &mut ps, &mut starts)
                    .ok_or_else(|| corrupt("positions"))?;
                let mut max_tf = 0;
                let mut min_len = u32::MAX;
                let mut max_created = i64::MIN;
                for (j, &o) in ords.iter().enumerate() {
                    if o as usize >= n || prev.is_some_and(|p| p >= o) {
                        return Err(corrupt("ordinals"));
                    }
                    prev = Some(o);
                    max_tf = max_tf.max(tfs[j]);
                    min_len = min_len.min(self.lens[o as usize]);
                    max_created = max_created.max(self.created[o as usize]);
                }
                if ords.last() != Some(&b.last)
                    || b.max_tf < max_tf
                    || b.min_len > min_len
                    || b.max_created < max_created
                {
                    return Err(corrupt("block bounds"));
                }
                if t.max_tf < b.max_tf || t.min_len > b.min_len || t.max_created < b.max_created {
                    return Err(corrupt("term bounds"));
                }
                base = b.last;
                df += u64::from(b.count);
            }
            if df != u64::from(t.df) {
                return Err(corrupt("df"));
            }
        }
        if covered != self.blocks.len() {
            return Err(corrupt("unused blocks"));
        }
        Ok(())
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    p: usize,
}

impl Reader<'_> {
    fn varint(&mut self, what: &str) -> Result<u64> {
        get_varint(self.buf, &mut self.p).ok_or_else(|| corrupt(what))
    }
}

/// Default memory bound of the process-wide segment cache (bytes).
pub const DEFAULT_CACHE_BYTES: usize = 256 * 1024 * 1024;

struct CacheEntry {
    seg: Arc<Segment>,
    bytes: usize,
    tick: u64,
}

struct Cache {
    map: HashMap<(String, String), CacheEntry>,
    bytes: usize,
    limit: usize,
    tick: u64,
}

static CACHE: once_cell::sync::Lazy<Mutex<Cache>> = once_cell::sync::Lazy::new(|| {
    Mutex::new(Cache {
        map: HashMap::new(),
        bytes: 0,
        limit: DEFAULT_CACHE_BYTES,
        tick: 0,
    })
});

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A cached segment by (index uuid, segment id). Segment ids are random and segments never
/// change, so an entry can never be stale; an id from a rolled-back transaction is simply
/// never asked for again.
pub fn cache_get(index: &str, seg: &str) -> Option<Arc<Segment>> {
    let mut c = cache();
    c.tick += 1;
    let tick = c.tick;
    let e = c.map.get_mut(&(index.to_owned(), seg.to_owned()))?;
    e.tick = tick;
    Some(e.seg.clone())
}

/// Puts a segment in the cache, evicting the least recently used ones above the bound.
pub fn cache_put(index: &str, seg: &str, s: Arc<Segment>) {
    let bytes = s.heap_bytes();
    let mut c = cache();
    c.tick += 1;
    let tick = c.tick;
    if let Some(old) = c.map.insert(
        (index.to_owned(), seg.to_owned()),
        CacheEntry {
            seg: s,
            bytes,
            tick,
        },
    ) {
        c.bytes -= old.bytes;
    }
    c.bytes += bytes;
    while c.bytes > c.limit && c.map.len() > 1 {
        let Some(k) = c
            .map
            .iter()
            .min_by_key(|(_, e)| e.tick)
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        if let Some(e) = c.map.remove(&k) {
            c.bytes -= e.bytes;
        }
    }
}

/// Sets the cache's memory bound in bytes (evicting on the next insert).
pub fn set_cache_limit(bytes: usize) {
    cache().limit = bytes;
}

/// (entries, bytes) held by the cache.
pub fn cache_usage() -> (usize, usize) {
    let c = cache();
    (c.map.len(), c.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::delta::analyze;

    #[test]
    fn segments_round_trip_and_reject_garbage() {
        let docs: Vec<(i64, i64, DocTerms)> = (0..300)
            .map(|i| {
                (
                    i * 3 - 100,
                    1000 + i,
                    analyze(&format!(
                        "doc {i} LoginSchema word{} src/a{}.rs",
                        i % 7,
                        i % 13
                    )),
                )
            })
            .collect();
        let s = Segment::from_docs(docs).unwrap();
        let bytes = s.serialize();
        let d = Segment::deserialize(&bytes).unwrap();
        assert_eq!(d.keys, s.keys);
        assert_eq!(d.blocks, s.blocks);
        assert_eq!(d.terms, s.terms);
        assert_eq!(d.serialize(), bytes);
        let id = d.term_id("loginschema").unwrap();
        assert_eq!(d.info(id).unwrap().df, 300);
        assert!(Segment::deserialize(&bytes[..bytes.len() - 1]).is_err());
        assert!(Segment::deserialize(b"nope").is_err());
        for i in (4..bytes.len()).step_by(97) {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            let _ = Segment::deserialize(&b); // must not panic
        }
    }
}
