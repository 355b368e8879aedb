//! A segment as a search sees it: its header, its deletions (flushed, and pending in the
//! delta), where its pages come from, and the exact live statistics.

use crate::search::cache;
use crate::search::pages::{MemPages, Page, PageSource};
use crate::search::segment::{Dead, DocPage, Segment, TermInfo, DOCS_PER_PAGE};
use crate::search::store::{SegRow, StoredPages};
use crate::{Conn, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// Where a view's pages come from.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Src {
    /// A stored segment (through the page cache).
    Stored(SegRow),
    /// The delta, built in memory for this search.
    Mem(MemPages),
    /// The delta as built for earlier searches (see [`crate::search::delta_view`]).
    Shared(Arc<MemPages>),
}

/// Deletions recorded in the delta, not yet flushed into the segment's [`Dead`].
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Pending {
    pub ords: Vec<u32>,
    pub len: u64,
    pub terms: HashMap<Vec<u8>, u32>,
}

/// One segment (or the delta) in a search: what it holds, and where its pages come from
/// (separate, so a search can read pages while it looks at the segment).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct View {
    pub seg: SegView,
    pub src: Src,
}

/// A segment with its deletions: what a search looks at.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct SegView {
    pub seg: Segment,
    pub dead: Arc<Dead>,
    pub pending: Pending,
}

/// A view's page source for the duration of one phase of a search.
pub(crate) enum ViewSource<'c> {
    Stored(StoredPages<'c>),
    Mem(&'c MemPages),
}

impl PageSource for ViewSource<'_> {
    fn page(&mut self, no: u32) -> Result<Page> {
        match self {
            ViewSource::Stored(s) => s.page(no),
            ViewSource::Mem(m) => m.get(no),
        }
    }

    fn prefetch(&mut self, from: u32, to: u32) -> Result<()> {
        match self {
            ViewSource::Stored(s) => s.prefetch(from, to),
            ViewSource::Mem(_) => Ok(()),
        }
    }

    fn check_interrupt(&mut self) -> Result<()> {
        match self {
            ViewSource::Stored(s) => s.check_interrupt(),
            ViewSource::Mem(_) => Ok(()),
        }
    }

    fn build(&self) -> Option<u64> {
        match self {
            ViewSource::Stored(s) => s.build(),
            ViewSource::Mem(_) => None,
        }
    }
}

impl ViewSource<'_> {
    /// Pages and bytes this source read from the database.
    pub(crate) fn reads(&self) -> (u64, u64) {
        match self {
            ViewSource::Stored(s) => (s.pages_read, s.bytes_read),
            ViewSource::Mem(_) => (0, 0),
        }
    }
}

impl Src {
    pub(crate) fn open<'c>(&'c mut self, conn: &'c mut dyn Conn) -> ViewSource<'c> {
        match self {
            Src::Stored(seg) => ViewSource::Stored(StoredPages::new(conn, seg)),
            Src::Mem(m) => ViewSource::Mem(m),
            Src::Shared(m) => ViewSource::Mem(m),
        }
    }
}

impl View {
    /// Fresh documents (the delta's new versions) as a segment built in memory for one
    /// search, with postings for the terms `keep` accepts; `None` when there are none.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn in_memory(
        fresh: &[crate::search::delta::Pending<'_>],
        keep: &dyn Fn(&[u8]) -> bool,
    ) -> Result<Option<View>> {
        if fresh.is_empty() {
            return Ok(None);
        }
        let mut pages = MemPages::default();
        let mut sink = |no: u32, b: &[u8]| {
            pages.0.insert(no, Page::from(b));
            Ok(())
        };
        let header = crate::search::delta::build(fresh, keep, &mut sink)?;
        Ok(Some(View {
            seg: SegView {
                seg: Segment {
                    header: Arc::new(header),
                },
                dead: Arc::new(Dead::default()),
                pending: Pending::default(),
            },
            src: Src::Mem(pages),
        }))
    }

    pub(crate) fn live_docs(&self) -> u64 {
        self.seg.live_docs()
    }

    pub(crate) fn live_len(&self) -> u64 {
        self.seg.live_len()
    }
}

impl SegView {
    pub(crate) fn live_docs(&self) -> u64 {
        u64::from(self.seg.doc_count())
            - self.dead.ords.len() as u64
            - self.pending.ords.len() as u64
    }

    pub(crate) fn live_len(&self) -> u64 {
        self.seg.header.total_len - self.dead.len - self.pending.len
    }

    /// Live documents holding a term the segment has.
    pub(crate) fn live_df(&self, term: &[u8], info: &TermInfo) -> u64 {
        live_df(&self.dead, &self.pending, term, info)
    }

    pub(crate) fn is_dead(&self, ord: u32) -> bool {
        self.dead.is_dead(ord) || self.pending.ords.binary_search(&ord).is_ok()
    }
}

/// Live documents holding a term, given a segment's deletions.
pub(crate) fn live_df(dead: &Dead, pending: &Pending, term: &[u8], info: &TermInfo) -> u64 {
    let n = dead.count(term) + pending.terms.get(term).copied().unwrap_or(0);
    u64::from(info.bounds.df).saturating_sub(u64::from(n))
}

/// Reads documents of one view by ordinal, keeping the last page decoded. Decoded pages of
/// stored segments are shared through the process-wide cache: a search scores documents
/// scattered over many pages, and decoding a page costs more than scoring its one document.
#[derive(Default)]
pub(crate) struct Docs {
    page: Option<(u32, Arc<DocPage>)>,
}

impl Docs {
    /// `(key, length, created_at)` of ordinal `ord`.
    pub(crate) fn get(
        &mut self,
        seg: &Segment,
        src: &mut dyn PageSource,
        ord: u32,
    ) -> Result<(i64, u32, i64)> {
        let p = ord / DOCS_PER_PAGE as u32;
        if self.page.as_ref().is_none_or(|(n, _)| *n != p) {
            let page = match src.build() {
                Some(build) => match cache::doc_page(build, p) {
                    Some(d) => d,
                    None => {
                        let d = Arc::new(seg.doc_page(src, p)?);
                        cache::put_doc_page(build, p, d.clone());
                        d
                    }
                },
                None => Arc::new(seg.doc_page(src, p)?),
            };
            self.page = Some((p, page));
        }
        let (_, page) = self.page.as_ref().expect("just loaded");
        let i = (ord % DOCS_PER_PAGE as u32) as usize;
        match (page.keys.get(i), page.lens.get(i), page.created.get(i)) {
            (Some(&k), Some(&l), Some(&c)) => Ok((k, l, c)),
            _ => Err(crate::search::codec::corrupt("document ordinal")),
        }
    }
}
