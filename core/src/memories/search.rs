//! `mem_memory_search`: the search engine over `mem_memories` (namespace "memory"), current
//! memories only unless asked.

use super::filter::{self, Filter};
use super::lifecycle::decayed;
use super::NS_MEMORIES;
use crate::columns::row;
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::search::rows::{self, Allowed};
use crate::search::scoring::PARAM_OPTIONS;
use crate::search::SearchParams;
use crate::{Conn, Result};

row! {
    /// One row of `mem_memory_search`.
    pub(crate) struct MemoryHit {
        pub memory_id: String,
        pub resource_id: String,
        pub r#type: String,
        pub scope: String,
        pub content: String,
        /// Decayed to the time of the search.
        pub confidence: f64,
        pub score: f64,
        pub bm25: f64,
        pub recency: f64,
        pub created_at: i64,
    }
}

/// Largest `limit` accepted.
pub(crate) const MAX_LIMIT: i64 = 1000;

/// The memories a search may return (see [`Filter`]).
fn allowed(conn: &mut dyn Conn, filter: &Filter) -> Result<Allowed> {
    let mut params = Vec::new();
    match filter.sql("", &mut params) {
        None => Allowed::every(conn, "mem_memories"),
        Some(conds) => Allowed::query(
            conn,
            &format!("SELECT seq FROM mem_memories WHERE {conds}"),
            &params,
        ),
    }
}

/// `mem_memory_search(query [, options])` → the best memories for `query`: BM25 over their
/// content, tags and related files with the engine's recency boost (`score`), and each one's
/// decayed confidence. Options: `resource_id`, `types` (array), `scope`,
/// `include_deprecated` (false), and the search settings of `mem_search` (`limit` default
/// 10, `now`, weights, `half_life_days`).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn search(
    conn: &mut dyn Conn,
    query: Option<&str>,
    options: Option<&str>,
) -> Result<Vec<MemoryHit>> {
    let query = query.unwrap_or("");
    let allowed_keys: Vec<&str> = PARAM_OPTIONS.iter().chain(filter::KEYS).copied().collect();
    let o = Opts::parse("options", options, &allowed_keys)?;
    let params = SearchParams::from_options(&o, 10, MAX_LIMIT)?;
    let wanted = Filter::from_options(conn, &o)?;
    let filter = allowed(conn, &wanted)?;
    let found = rows::search_allowed(
        conn,
        NS_MEMORIES,
        wanted.resource.as_deref(),
        query,
        &params,
        &filter,
    )?;
    let seqs: Vec<i64> = found.hits.iter().map(|h| h.doc).collect();
    let mut by_seq = rows::hydrate(
        conn,
        "mem_memories",
        "id, resource_id, type, scope, content, confidence, decay_half_life_days, pinned, \
         last_accessed_at, created_at",
        &seqs,
        wanted.resource.as_deref(),
    )?;
    let now = conn.now_or(params.now)?;
    Ok(found
        .hits
        .iter()
        .filter_map(|h| {
            let mut f = Fields::new(by_seq.remove(&h.doc)?);
            let (memory_id, resource_id) =
                (f.text().unwrap_or_default(), f.text().unwrap_or_default());
            let r#type = f.text().unwrap_or_default();
            let (scope, content) = (f.text().unwrap_or_default(), f.text().unwrap_or_default());
            let conf = f.value().as_f64().unwrap_or(0.0);
            let half = f.value().as_f64();
            let pinned = f.int() == Some(1);
            let last = f.int().unwrap_or(now);
            Some(MemoryHit {
                memory_id,
                resource_id,
                r#type,
                scope,
                content,
                confidence: decayed(conf, half, pinned, last, now),
                score: h.score,
                bm25: h.bm25,
                recency: h.recency,
                created_at: f.int().unwrap_or_default(),
            })
        })
        .collect())
}
