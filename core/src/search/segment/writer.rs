//! Building a segment: documents first (their pages stream out at once), then terms in
//! ascending order, each term's postings appended to the postings area and its entry to the
//! dictionary, pages written as they fill. Nothing is held but the page being filled, so a merge
//! of a million documents needs the memory of one term's postings.

use super::{DocIn, Header, DOCS_PER_PAGE};
use crate::search::codec::{put_term, put_varint, zigzag};
use crate::search::pages::{page_no, Area, PAGE_SIZE};
use crate::search::postings::{encode_term, EncodeScratch, TermPostings};
use crate::{Error, Result};

/// Where a writer's pages go: `(page number, bytes)`.
pub(crate) type Sink<'a> = &'a mut dyn FnMut(u32, &[u8]) -> Result<()>;

/// Builds one segment.
pub(crate) struct SegmentWriter<'a> {
    sink: Sink<'a>,
    lens: Vec<u32>,
    created: Vec<i64>,
    header: Header,
    post: Vec<u8>,
    dict: Vec<u8>,
    dict_prev: Vec<u8>,
    last_term: Vec<u8>,
    /// Reused per term: its postings, its dictionary entry, the encoder's buffers.
    scratch: Vec<u8>,
    entry: Vec<u8>,
    encode: EncodeScratch,
}

impl<'a> SegmentWriter<'a> {
    /// Starts a segment of documents sorted by key (unique) and writes their pages.
    pub(crate) fn new(docs: &[DocIn], sink: Sink<'a>) -> Result<SegmentWriter<'a>> {
        if docs.windows(2).any(|w| w[0].key >= w[1].key) {
            return Err(Error::internal(
                "segment build: document keys not strictly ascending",
            ));
        }
        if docs.len() > u32::MAX as usize / 2 {
            return Err(Error::internal("segment build: too many documents"));
        }
        let mut header = Header {
            doc_count: docs.len() as u32,
            total_len: docs.iter().map(|d| u64::from(d.len)).sum(),
            min_key: docs.first().map_or(0, |d| d.key),
            max_key: docs.last().map_or(0, |d| d.key),
            ..Header::default()
        };
        let mut page = Vec::with_capacity(PAGE_SIZE);
        for (i, chunk) in docs.chunks(DOCS_PER_PAGE).enumerate() {
            page.clear();
            put_varint(&mut page, zigzag(chunk[0].key));
            for w in chunk.windows(2) {
                put_varint(&mut page, (w[1].key - w[0].key) as u64);
            }
            for d in chunk {
                put_varint(&mut page, u64::from(d.len));
            }
            let mut prev = 0i64;
            for d in chunk {
                put_varint(&mut page, zigzag(d.created.wrapping_sub(prev)));
                prev = d.created;
            }
            sink(page_no(Area::Docs, i as u32), &page)?;
            header.doc_first.push(chunk[0].key);
        }
        header.doc_pages = header.doc_first.len() as u32;
        Ok(SegmentWriter {
            sink,
            lens: docs.iter().map(|d| d.len).collect(),
            created: docs.iter().map(|d| d.created).collect(),
            header,
            post: Vec::with_capacity(2 * PAGE_SIZE),
            dict: Vec::with_capacity(PAGE_SIZE),
            dict_prev: Vec::new(),
            last_term: Vec::new(),
            scratch: Vec::new(),
            entry: Vec::new(),
            encode: EncodeScratch::default(),
        })
    }

    /// Adds a term (greater than the previous one) with its postings sorted by ordinal; a term
    /// without postings is skipped.
    pub(crate) fn add_term(&mut self, term: &[u8], postings: &TermPostings) -> Result<()> {
        if postings.is_empty() {
            return Ok(());
        }
        if self.header.n_terms > 0 && term <= &self.last_term[..] {
            return Err(Error::internal("segment build: terms not ascending"));
        }
        self.last_term.clear();
        self.last_term.extend_from_slice(term);
        self.scratch.clear();
        let b = encode_term(
            postings,
            &self.lens,
            &self.created,
            &mut self.scratch,
            &mut self.encode,
        );
        let off = self.header.post_len;
        self.post.extend_from_slice(&self.scratch);
        self.header.post_len += self.scratch.len() as u64;
        while self.post.len() >= PAGE_SIZE {
            (self.sink)(
                page_no(Area::Postings, self.header.post_pages),
                &self.post[..PAGE_SIZE],
            )?;
            self.post.drain(..PAGE_SIZE);
            self.header.post_pages += 1;
        }
        // The entry: the term (a dictionary page starts with the postings offset of its first
        // term, whose text is written whole; the others share a prefix with the term before
        // them), then its statistics.
        let mut entry = std::mem::take(&mut self.entry);
        entry.clear();
        if !self.dict.is_empty() {
            put_term(&mut entry, &self.dict_prev, term);
        }
        let stats_at = entry.len();
        for v in [b.df, b.n_blocks] {
            put_varint(&mut entry, u64::from(v));
        }
        put_varint(&mut entry, self.scratch.len() as u64);
        put_varint(&mut entry, u64::from(b.max_tf));
        put_varint(&mut entry, u64::from(b.min_len));
        put_varint(&mut entry, zigzag(b.max_created));
        if !self.dict.is_empty() && self.dict.len() + entry.len() > PAGE_SIZE {
            self.flush_dict()?;
        }
        if self.dict.is_empty() {
            let stats = entry.split_off(stats_at);
            entry.clear();
            put_varint(&mut entry, off);
            put_term(&mut entry, &[], term);
            entry.extend_from_slice(&stats);
            self.header.dict_first.push(term.to_vec());
        }
        self.dict.extend_from_slice(&entry);
        self.entry = entry;
        self.dict_prev.clear();
        self.dict_prev.extend_from_slice(term);
        self.header.n_terms += 1;
        self.header.n_postings += u64::from(b.df);
        Ok(())
    }

    fn flush_dict(&mut self) -> Result<()> {
        if self.dict.is_empty() {
            return Ok(());
        }
        (self.sink)(page_no(Area::Dict, self.header.dict_pages), &self.dict)?;
        self.header.dict_pages += 1;
        self.dict.clear();
        Ok(())
    }

    /// Writes the last partial pages and returns the header.
    pub(crate) fn finish(mut self) -> Result<Header> {
        self.flush_dict()?;
        if !self.post.is_empty() {
            (self.sink)(page_no(Area::Postings, self.header.post_pages), &self.post)?;
            self.header.post_pages += 1;
        }
        Ok(self.header)
    }
}
