//! Observations are searchable: each record's active observations are one document of the
//! search engine's `"obs"` namespace (keyed by the record's `seq`), kept in step by the writes
//! that change them, and `mem_search` returns them beside messages with `source` `reflection`.

use crate::message_search::{MessageHit, Request};
use crate::search::{self, SearchParams};
use crate::{Conn, Result, Value};
use std::collections::HashSet;

/// The namespace of observation documents.
pub const NS_OBSERVATIONS: &str = "obs";

/// Indexes (or re-indexes) a record's active observations; `old` is the text indexed before.
pub fn index(
    conn: &mut dyn Conn,
    seq: i64,
    observations: &str,
    at: i64,
    old: Option<&str>,
) -> Result<()> {
    search::index_doc(conn, NS_OBSERVATIONS, seq, observations, at, old)
}

/// Takes a record that is no longer active out of the index; `old` is its indexed text.
pub fn unindex(conn: &mut dyn Conn, seq: i64, old: &str) -> Result<()> {
    search::remove_doc(conn, NS_OBSERVATIONS, seq, Some(old)).map(|_| ())
}

/// Rebuilds the observation index from the active records. Returns the document count.
pub fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    let docs = search::documents(
        conn,
        "SELECT seq, active_observations, updated_at FROM mem_om_records WHERE is_active = 1 ORDER BY seq",
    )?;
    search::reindex(conn, NS_OBSERVATIONS, &docs)?;
    Ok(docs.len() as i64)
}

/// Observation hits for a `mem_search` request. Filters on role or task exclude observations
/// (they have neither); thread, resource and time filters apply to the record.
pub fn hits(conn: &mut dyn Conn, query: &str, req: &Request) -> Result<Vec<MessageHit>> {
    let f = &req.filters;
    if f.role.is_some() || f.task_id.is_some() {
        return Ok(Vec::new());
    }
    let allowed: Option<HashSet<i64>> = if f.thread_id.is_some()
        || f.resource_id.is_some()
        || f.since.is_some()
        || f.until.is_some()
    {
        let rows = conn.query(
            "SELECT seq FROM mem_om_records WHERE is_active = 1 \
               AND (CAST(?1 AS TEXT) IS NULL OR thread_id = CAST(?1 AS TEXT)) \
               AND (CAST(?2 AS TEXT) IS NULL OR resource_id = CAST(?2 AS TEXT)) \
               AND (CAST(?3 AS BIGINT) IS NULL OR updated_at >= CAST(?3 AS BIGINT)) \
               AND (CAST(?4 AS BIGINT) IS NULL OR updated_at < CAST(?4 AS BIGINT))",
            &[
                f.thread_id.clone().into(),
                f.resource_id.clone().into(),
                f.since.into(),
                f.until.into(),
            ],
        )?;
        Some(
            rows.iter()
                .filter_map(|r| r.first().and_then(Value::as_i64))
                .collect(),
        )
    } else {
        None
    };
    let filter = allowed
        .as_ref()
        .map(|set| move |doc: i64| set.contains(&doc));
    let params = SearchParams {
        ..req.params.clone()
    };
    let result = search::search(
        conn,
        NS_OBSERVATIONS,
        query,
        &params,
        filter.as_ref().map(|f| f as &dyn Fn(i64) -> bool),
    )?;
    let mut out = Vec::with_capacity(result.hits.len());
    for h in &result.hits {
        let row = conn
            .query(
                "SELECT id, thread_id, resource_id, updated_at, active_observations FROM mem_om_records WHERE seq = ?1",
                &[Value::Int(h.doc)],
            )?
            .into_iter()
            .next();
        let Some(row) = row else { continue };
        let mut it = row.into_iter();
        let mut next = || it.next().unwrap_or(Value::Null);
        let id = next().into_string().unwrap_or_default();
        let thread_id = next().into_string().unwrap_or_default();
        let resource_id = next().into_string();
        let created_at = next().as_i64().unwrap_or(0);
        let text = next().into_string().unwrap_or_default();
        out.push(MessageHit {
            seq: h.doc,
            message_id: id,
            thread_id,
            resource_id,
            role: "system".into(),
            task_id: None,
            created_at,
            message_index: 0,
            score: h.score,
            bm25: h.bm25,
            recency: h.recency,
            source: "reflection",
            snippet: String::new(),
            search_text: text.clone(),
            raw_content: text,
        });
    }
    Ok(out)
}
