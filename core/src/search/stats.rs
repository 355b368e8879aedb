//! Looking inside the index: `mem_index_stats()` (what each index holds and where its bytes
//! go: logical bytes of the stored pages and blobs; the database adds its own page overhead)
//! and `mem_search_cache()` (the process's caches).

use super::pages::Area;
use super::{names, store};
use super::{cache, delta_view};
use crate::{Conn, Result, Value};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;

#[derive(Default)]
struct Ns {
    segments: u64,
    documents: u64,
    deleted: u64,
    terms: u64,
    postings: u64,
    headers: u64,
    deletions: u64,
    areas: [u64; 3],
    delta_rows: u64,
    delta_bytes: u64,
}

fn int(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_i64).unwrap_or(0).max(0) as u64
}

/// Per namespace (`msg`, `task`, `obs`, …; summed over its resources' indexes in a database
/// partitioned by resource): segments, live and deleted documents, terms and postings summed
/// over segments, and bytes by part (postings, dictionary, documents,
/// headers, deletions, delta) with their total and the bytes per posting.
pub(crate) fn index_stats(conn: &mut dyn Conn) -> Result<String> {
    let mut all: BTreeMap<String, Ns> = BTreeMap::new();
    let rows = conn.query(
        "SELECT ns, resource_id, length(header), coalesce(length(dead), 0) FROM mem_idx_segments",
        &[],
    )?;
    let mut indexes: BTreeMap<String, String> = BTreeMap::new();
    for r in &rows {
        let (Some(ns), Some(resource)) = (
            r.first().and_then(Value::as_str),
            r.get(1).and_then(Value::as_str),
        ) else {
            continue;
        };
        let e = all.entry(ns.to_owned()).or_default();
        e.headers += int(r.get(2));
        e.deletions += int(r.get(3));
        indexes.insert(names::index_name(ns, resource), ns.to_owned());
    }
    for (index, ns) in &indexes {
        for seg in store::segments(conn, index)? {
            let Some(s) = store::header(conn, &seg)? else {
                continue;
            };
            let e = all.entry(ns.clone()).or_default();
            e.segments += 1;
            e.documents += (seg.doc_count - seg.dead_count).max(0) as u64;
            e.deleted += seg.dead_count.max(0) as u64;
            e.terms += s.header.n_terms;
            e.postings += s.header.n_postings;
        }
    }
    let pages = conn.query(
        "SELECT s.ns, (p.id >> 28) & 15, sum(length(p.data)) FROM mem_idx_pages p \
         JOIN mem_idx_segments s ON s.resource_id = p.resource_id AND s.seg_no = (p.id >> 32) GROUP BY s.ns, (p.id >> 28) & 15",
        &[],
    )?;
    for r in &pages {
        let (Some(ns), area) = (r.first().and_then(Value::as_str), int(r.get(1))) else {
            continue;
        };
        if let Some(slot) = all
            .entry(ns.to_owned())
            .or_default()
            .areas
            .get_mut(area as usize)
        {
            *slot += int(r.get(2));
        }
    }
    let delta = conn.query(
        "SELECT ns, count(*), coalesce(sum(length(terms)), 0) + coalesce(sum(length(old_terms)), 0) \
         FROM mem_idx_delta GROUP BY ns",
        &[],
    )?;
    for r in &delta {
        let Some(ns) = r.first().and_then(Value::as_str) else {
            continue;
        };
        let e = all.entry(ns.to_owned()).or_default();
        e.delta_rows = int(r.get(1));
        e.delta_bytes = int(r.get(2));
    }
    let mut held: BTreeMap<String, usize> = BTreeMap::new();
    for index in super::held::of(conn).namespaces() {
        let docs = super::held::of(conn).documents(&index).len();
        let ns = names::split(&index).0.to_owned();
        *held.entry(ns.clone()).or_default() += docs;
        all.entry(ns).or_default();
    }
    let mut out = Map::new();
    for (ns, e) in all {
        let held = held.get(&ns).copied().unwrap_or(0);
        let [postings, dictionary, documents] = [
            e.areas[Area::Postings as usize],
            e.areas[Area::Dict as usize],
            e.areas[Area::Docs as usize],
        ];
        let total = postings + dictionary + documents + e.headers + e.deletions + e.delta_bytes;
        out.insert(
            ns,
            json!({
                "segments": e.segments,
                "documents": e.documents,
                "deleted": e.deleted,
                "terms": e.terms,
                "postings": e.postings,
                "delta_rows": e.delta_rows,
                "held": held,
                "bytes": {
                    "postings": postings,
                    "dictionary": dictionary,
                    "documents": documents,
                    "headers": e.headers,
                    "deletions": e.deletions,
                    "delta": e.delta_bytes,
                    "total": total,
                },
                "bytes_per_posting": if e.postings > 0 {
                    Json::from((total - e.delta_bytes) as f64 / e.postings as f64)
                } else {
                    Json::Null
                },
            }),
        );
    }
    Ok(Json::Object(out).to_string())
}

/// `mem_search_cache([limit_bytes])`: sets the page cache's bound when given (0 empties and
/// disables it), then describes the caches of this process as JSON: the bound, bytes and pages
/// held, hits and misses, and the pages and bytes read from the database so far.
pub(crate) fn cache_status(limit_bytes: Option<i64>) -> crate::Result<String> {
    if let Some(l) = limit_bytes {
        if !(0..=cache::MAX_PAGE_BYTES).contains(&l) {
            return Err(crate::Error::invalid(
                "limit_bytes",
                format!("must be between 0 and {} (16 GiB)", cache::MAX_PAGE_BYTES),
            ));
        }
        cache::set_page_limit(l as usize);
        if l == 0 {
            cache::clear();
            delta_view::clear();
        }
    }
    let s = cache::page_stats();
    let (read_pages, read_bytes) = cache::reads();
    Ok(serde_json::json!({
        "limit_bytes": s.limit,
        "bytes": s.bytes,
        "pages": s.entries,
        "hits": s.hits,
        "misses": s.misses,
        "read_pages": read_pages,
        "read_bytes": read_bytes,
    })
    .to_string())
}
