//! Query execution: exact statistics over the live documents, then block-max WAND over every
//! segment and the delta with one shared top-k heap — reading the dictionary pages of the
//! query's terms, the blocks the cursors land in and the document pages of the candidates.
//!
//! * [`view`] — a segment as a search sees it, with its live statistics;
//! * [`plan`] — the query resolved to terms;
//! * [`cursor`] — term and phrase cursors;
//! * [`wand`] — the seeding pass and block-max WAND;
//! * [`collector`] — the shared top k.

pub mod collector;
pub mod cursor;
pub mod plan;
pub mod scorer;
pub mod view;
pub mod wand;

pub use view::{Pending, SegView, Src, View};

use super::interrupt::Ticker;
use super::pages::PageSource;
use super::query::Query;
use super::scoring::{idf, SearchParams, Stats};
use super::segment::TermInfo;
use crate::{Conn, Result};
use collector::{Collector, TopK};
use std::collections::{BinaryHeap, HashSet};

/// One hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The document key.
    pub doc: i64,
    /// `bm25 × recency`.
    pub score: f64,
    pub bm25: f64,
    pub recency: f64,
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchStats {
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
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub stats: SearchStats,
}

/// Runs a query over views (segments and the delta). Fails when the host cancels it or a
/// segment vanished under it (a concurrent merge: the caller retries).
pub fn execute(
    conn: &mut dyn Conn,
    views: &mut [View],
    q: &Query,
    params: &SearchParams,
    now: i64,
    filter: Option<&dyn Fn(i64) -> bool>,
) -> Result<SearchResult> {
    let stats = SearchStats {
        total_docs: views.iter().map(View::live_docs).sum(),
        ..Default::default()
    };
    if q.is_empty() || params.limit == 0 || stats.total_docs == 0 {
        return Ok(SearchResult {
            hits: Vec::new(),
            stats,
        });
    }
    let mut col = Collector {
        top: TopK {
            k: params.limit,
            heap: BinaryHeap::new(),
        },
        stats,
        seeded: HashSet::new(),
        tick: Ticker::new(),
    };
    let st = Stats {
        docs: col.stats.total_docs,
        total_len: views.iter().map(View::live_len).sum(),
    };
    let plan = plan::plan(conn, views, q, params)?;
    col.stats.terms = plan.terms.len();
    // Each view's dictionary entry of each plan term: one page per term and view.
    let mut infos: Vec<Vec<Option<TermInfo>>> = Vec::with_capacity(views.len());
    for v in views.iter_mut() {
        let mut src = v.src.open(conn);
        let mut row = Vec::with_capacity(plan.terms.len());
        for t in &plan.terms {
            col.tick.tick(|| src.check_interrupt())?;
            row.push(v.seg.seg.term(&mut src, t.as_bytes())?);
        }
        let (pages, bytes) = src.reads();
        col.stats.pages_read += pages;
        col.stats.bytes_read += bytes;
        infos.push(row);
    }
    let idfs: Vec<f64> = plan
        .terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let df: u64 = views
                .iter()
                .zip(&infos)
                .filter_map(|(v, row)| {
                    row[i]
                        .as_ref()
                        .map(|info| v.seg.live_df(t.as_bytes(), info))
                })
                .sum();
            q.weight(t, params) * idf(st.docs, df)
        })
        .collect();
    let sc = scorer::Scorer {
        k1: params.k1,
        b: params.b,
        avgdl: st.avgdl(),
        now,
        w: params.recency_weight,
        half_life: params.half_life_ms,
    };
    for (v, row) in views.iter_mut().zip(&infos) {
        if row.iter().all(Option::is_none) {
            continue;
        }
        let mut src = v.src.open(conn);
        let q = wand::ViewQuery {
            view: &v.seg,
            plan: &plan,
            infos: row,
            idfs: &idfs,
            sc: &sc,
            filter,
        };
        wand::run_view(&q, &mut src, &mut col)?;
        let (pages, bytes) = src.reads();
        col.stats.pages_read += pages;
        col.stats.bytes_read += bytes;
    }
    let mut hits = col.top.heap.into_vec();
    hits.sort();
    Ok(SearchResult {
        hits: hits
            .into_iter()
            .map(|e| Hit {
                doc: e.doc,
                score: e.score,
                bm25: e.bm25,
                recency: e.rec,
            })
            .collect(),
        stats: col.stats,
    })
}
