//! Query execution: exact statistics over the live documents, then block-max WAND over every
//! segment and the delta with one shared top-k heap — reading the dictionary pages of the
//! query's terms, the blocks the cursors land in and the document pages of the candidates.
//!
//! * [`view`] — a segment as a search sees it, with its live statistics;
//! * [`plan`] — the query resolved to terms;
//! * [`cursor`] — term and phrase cursors;
//! * [`wand`] — the seeding pass and block-max WAND;
//! * [`collector`] — the shared top k;
//! * [`result`] — the hits and what the search did.

pub(crate) mod collector;
pub(crate) mod cursor;
pub(crate) mod plan;
pub(crate) mod result;
pub(crate) mod scorer;
pub(crate) mod view;
pub(crate) mod wand;

#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) use result::{Hit, SearchResult, SearchStats};
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) use view::{Pending, SegView, Src, View};

use super::interrupt::Ticker;
use super::pages::PageSource;
use super::query::Query;
use super::scoring::{idf, SearchParams, Stats};
use super::segment::TermInfo;
use crate::{Conn, Result};
use collector::{Collector, TopK};
use std::collections::{BinaryHeap, HashSet};

/// Runs a query over views (segments and the delta). Fails when the host cancels it or a
/// segment vanished under it (a concurrent merge: the caller retries).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn execute(
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
