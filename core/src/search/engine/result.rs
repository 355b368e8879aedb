//! A search's answer: its hits, best first, and what it did to find them.

/// One hit.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Hit {
    /// The document key.
    pub doc: i64,
    /// `bm25 × recency`.
    pub score: f64,
    pub bm25: f64,
    pub recency: f64,
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct SearchStats {
    /// Documents whose score was computed in full.
    pub scored_docs: u64,
    /// Blocks skipped because their upper bound could not reach the k-th score.
    pub skipped_blocks: u64,
    /// Live documents in the namespace (N).
    pub total_docs: u64,
    /// Segments searched (not counting the delta).
    pub segments: usize,
    /// Documents in the delta.
    pub delta_docs: usize,
    /// Distinct terms the query was resolved to (after prefix expansion).
    pub terms: usize,
    /// Units of work: WAND iterations, seeded documents and the cursor moves of phrases. The
    /// cost bound of a query is asserted on it (never on time).
    pub steps: u64,
    /// Pages read from the database (not from the cache) and their bytes.
    pub pages_read: u64,
    pub bytes_read: u64,
    /// Bytes of postings blocks decoded (from the cache or the database).
    pub postings_bytes: u64,
}

/// The hits (best first) and the statistics of a search.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct SearchResult {
    pub hits: Vec<Hit>,
    pub stats: SearchStats,
}
