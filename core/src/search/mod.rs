//! The search engine (issue 3): a segmented BM25 + recency index stored in `mem_idx_*`
//! tables, identical on SQLite and Postgres because both run this code on the same bytes.
//!
//! * [`tokenizer`] — code-and-prose tokens (wholes, pieces, atoms) with positions.
//! * [`query`] — the query language; it never fails.
//! * [`scoring`] — BM25 (k1 1.2, b 0.75, non-negative idf) × a bounded recency boost.
//! * [`postings`], [`segment`] — immutable segments: fst dictionary, blocks of 128 postings
//!   with block-max data; a process-wide cache of decoded segments with a memory bound.
//! * [`delta`] — fresh writes, kept as rows until a flush.
//! * [`merge`] — the logarithmic merge policy.
//! * [`engine`] — exact statistics and block-max WAND top-k.
//! * [`snippet`] — highlighted snippets.
//!
//! Documents are identified by an `i64` key inside a namespace (`"msg"` for messages).
//! See docs/search.md for the formulas, defaults and the table layout.

pub mod delta;
pub mod engine;
pub mod interrupt;
pub mod merge;
pub mod postings;
pub mod query;
pub mod scoring;
pub mod segment;
pub mod snippet;
pub mod store;
pub mod tokenizer;

pub use engine::{Hit, SearchResult, SearchStats};
pub use scoring::SearchParams;
pub use snippet::{snippet, SnippetSettings};

use crate::{Conn, Error, Result};
use delta::DocTerms;
use engine::View;
use interrupt::Ticker;
use segment::Segment;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The namespace of message documents.
pub const NS_MESSAGES: &str = "msg";

fn check_ns(ns: &str) -> Result<()> {
    if ns.is_empty() || ns.len() > 64 || ns.chars().any(|c| c.is_control()) {
        return Err(Error::invalid(
            "namespace",
            "must be 1 to 64 bytes without control characters",
        ));
    }
    Ok(())
}

/// Indexes a document (insert or replace). Writes a delta row; every [`merge::FLUSH_DOCS`]
/// delta documents are flushed into a segment and the merge policy runs.
/// Cost: O(tokens) plus the amortised flush and merges.
pub fn index_doc(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    text: &str,
    created_at: i64,
) -> Result<()> {
    if !index_new(conn, ns, doc, text, created_at)? {
        let terms = delta::analyze(text);
        store::remove(conn, ns, doc)?;
        store::insert_delta(conn, ns, doc, created_at, &terms)?;
    }
    Ok(())
}

/// Indexes a document that is not indexed yet, in one statement; `false` (nothing written)
/// when the key already has a document. Row triggers use it as a booking token: a document
/// exists exactly while its row has been counted, so a handler run twice books once.
pub fn index_new(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    text: &str,
    created_at: i64,
) -> Result<bool> {
    check_ns(ns)?;
    let terms = delta::analyze(text);
    if !store::insert_new_delta(conn, ns, doc, created_at, &terms)? {
        return Ok(false);
    }
    if should_count(doc) && store::delta_count(conn, ns)? >= merge::FLUSH_DOCS as i64 {
        flush(conn, ns, false)?;
    }
    Ok(true)
}

/// Writes between two counts of the delta: counting on every write was a statement per
/// insert; the delta now reaches at most `FLUSH_DOCS + FLUSH_CHECK_EVERY − 1` documents per
/// writer before a flush.
pub const FLUSH_CHECK_EVERY: u64 = 16;

/// Whether this write counts the delta: every [`FLUSH_CHECK_EVERY`]-th key (messages' keys
/// ascend, so every 16th insert) and every 16th write of the process (any key pattern). A
/// hint only: which write flushes never changes a result.
fn should_count(doc: i64) -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    doc.rem_euclid(FLUSH_CHECK_EVERY as i64) == 0 || n % FLUSH_CHECK_EVERY == 0
}

/// Removes a document; `false` when it was not indexed. O(1) statements: a delta row is
/// deleted, a segment document is tombstoned.
pub fn remove_doc(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<bool> {
    check_ns(ns)?;
    store::remove(conn, ns, doc)
}

/// Top-k search. `filter` (built by the adapter from thread, role, time filters) is asked
/// only about documents that could enter the top k.
pub fn search(
    conn: &mut dyn Conn,
    ns: &str,
    query: &str,
    params: &SearchParams,
    filter: Option<&dyn Fn(i64) -> bool>,
) -> Result<SearchResult> {
    check_ns(ns)?;
    params.validate()?;
    let q = query::parse(query);
    if q.is_empty() || params.limit == 0 {
        return Ok(SearchResult::default());
    }
    let now = match params.now {
        Some(n) => n,
        None => conn.now_ms()?,
    };
    for _attempt in 0..8 {
        let snap = store::snapshot(conn, ns)?;
        let Some((views, seg_count, delta_docs)) = load_views(conn, ns, &snap)? else {
            continue;
        };
        let mut check = || conn.check_interrupt();
        let mut r = engine::execute(&views, &q, params, now, filter, Ticker::new(&mut check))?;
        r.stats.segments = seg_count;
        r.stats.delta_docs = delta_docs;
        return Ok(r);
    }
    Err(Error::internal(
        "search index changed under every attempt to read it; try again",
    ))
}

/// The views of a snapshot: its segments (cache or table) with their tombstones, then the
/// delta as an in-memory segment. `None` when a segment vanished (a concurrent merge).
fn load_views(
    conn: &mut dyn Conn,
    ns: &str,
    snap: &store::Snapshot,
) -> Result<Option<(Vec<View>, usize, usize)>> {
    let mut views = Vec::with_capacity(snap.segments.len() + 1);
    if let Some(uuid) = &snap.index_uuid {
        let mut dead: HashMap<&str, Vec<i64>> = HashMap::new();
        for (s, d, _) in &snap.tombstones {
            dead.entry(s.as_str()).or_default().push(*d);
        }
        for (id, _) in &snap.segments {
            let Some(seg) = store::segment(conn, uuid, ns, id)? else {
                return Ok(None);
            };
            let mut ords: Vec<u32> = dead
                .get(id.as_str())
                .map(|ks| ks.iter().filter_map(|k| seg.ord_of(*k)).collect())
                .unwrap_or_default();
            ords.sort_unstable();
            ords.dedup();
            views.push(View { seg, dead: ords });
        }
    }
    let seg_count = views.len();
    if !snap.delta.is_empty() {
        views.push(View {
            seg: Arc::new(delta_segment(&snap.delta)?),
            dead: Vec::new(),
        });
    }
    Ok(Some((views, seg_count, snap.delta.len())))
}

/// The delta rows as an in-memory segment.
fn delta_segment(rows: &[store::DeltaRow]) -> Result<Segment> {
    let docs: Vec<(i64, i64, u32, &[u8])> = rows
        .iter()
        .map(|r| (r.doc, r.created, r.len, r.payload.as_slice()))
        .collect();
    Segment::from_payloads(&docs).map_err(corrupt_delta)?
}

fn corrupt_delta(doc: i64) -> Error {
    Error::internal(format!(
        "search index delta row of document {doc} is corrupt; run mem_reindex()"
    ))
}

/// Moves the delta into a new segment (when it holds at least [`merge::FLUSH_DOCS`]
/// documents, or any when `force`), then runs the merge policy. Locks the namespace.
pub fn flush(conn: &mut dyn Conn, ns: &str, force: bool) -> Result<()> {
    check_ns(ns)?;
    let uuid = store::lock_meta(conn, ns)?;
    let rows = store::delta_rows(conn, ns)?;
    if rows.is_empty() || (!force && rows.len() < merge::FLUSH_DOCS) {
        return Ok(());
    }
    let seg = Arc::new(delta_segment(&rows)?);
    let id = store::new_id();
    store::insert_segment(conn, ns, &id, &seg)?;
    segment::cache_put(&uuid, &id, seg);
    crate::failpoint::hit(conn, crate::failpoint::FLUSH)?;
    store::move_delta(conn, ns, &id, &rows)?;
    merge_policy(conn, ns, &uuid, false)
}

/// Runs the merge policy until nothing is left to merge (or everything into one segment when
/// `all`). The caller holds the namespace lock.
fn merge_policy(conn: &mut dyn Conn, ns: &str, uuid: &str, all: bool) -> Result<()> {
    for _round in 0..64 {
        let segs = store::segment_list(conn, ns)?;
        let tombs = store::tombstones(conn, ns)?;
        let mut dead: HashMap<&str, i64> = HashMap::new();
        for (s, _, _) in &tombs {
            *dead.entry(s.as_str()).or_default() += 1;
        }
        let ids = if all {
            if segs.len() > 1 || !tombs.is_empty() {
                segs.iter().map(|s| s.0.clone()).collect()
            } else {
                Vec::new()
            }
        } else {
            let info: Vec<(String, i64, i64)> = segs
                .iter()
                .map(|(id, n)| (id.clone(), *n, dead.get(id.as_str()).copied().unwrap_or(0)))
                .collect();
            merge::pick(&info)
        };
        if ids.is_empty() {
            return Ok(());
        }
        merge_ids(conn, ns, uuid, &ids, &tombs)?;
        if all {
            return Ok(());
        }
    }
    Ok(())
}

fn merge_ids(
    conn: &mut dyn Conn,
    ns: &str,
    uuid: &str,
    ids: &[String],
    tombs: &[(String, i64, i64)],
) -> Result<()> {
    let mut inputs = Vec::with_capacity(ids.len());
    for id in ids {
        let seg = store::segment(conn, uuid, ns, id)?.ok_or_else(|| {
            Error::internal(format!("search index segment {id} vanished during a merge"))
        })?;
        let mut dead: Vec<u32> = tombs
            .iter()
            .filter(|t| &t.0 == id)
            .filter_map(|t| seg.ord_of(t.1))
            .collect();
        dead.sort_unstable();
        dead.dedup();
        inputs.push((seg, dead));
    }
    let merged = {
        let mut check = || conn.check_interrupt();
        merge::merge(&inputs, Ticker::new(&mut check))?
    };
    let new_id = store::new_id();
    if merged.doc_count() > 0 {
        store::insert_segment(conn, ns, &new_id, &merged)?;
    }
    for id in ids {
        conn.execute(
            "UPDATE mem_idx_docs SET seg_id = ?3 WHERE ns = ?1 AND seg_id = ?2",
            &[ns.into(), id.clone().into(), new_id.clone().into()],
        )?;
    }
    if merged.doc_count() > 0 {
        // Documents a concurrent writer replaced or removed after we read the tombstones
        // (Postgres only) are tombstoned in the new segment.
        let rows = conn.query(
            "SELECT doc FROM mem_idx_docs WHERE ns = ?1 AND seg_id = ?2",
            &[ns.into(), new_id.clone().into()],
        )?;
        if rows.len() != merged.doc_count() {
            let present: std::collections::HashSet<i64> = rows
                .iter()
                .filter_map(|r| r.first().and_then(|v| v.as_i64()))
                .collect();
            for (i, k) in merged.keys.iter().enumerate() {
                if !present.contains(k) {
                    store::add_tombstone(conn, ns, &new_id, *k, i64::from(merged.lens[i]))?;
                }
            }
        }
        segment::cache_put(uuid, &new_id, Arc::new(merged));
    }
    crate::failpoint::hit(conn, crate::failpoint::MERGE)?;
    for id in ids {
        store::delete_segment(conn, ns, id)?;
    }
    Ok(())
}

/// Flushes the delta and merges everything into one segment without tombstones.
pub fn optimize(conn: &mut dyn Conn, ns: &str) -> Result<()> {
    check_ns(ns)?;
    flush(conn, ns, true)?;
    let uuid = store::lock_meta(conn, ns)?;
    merge_policy(conn, ns, &uuid, true)
}

/// Documents per segment built by [`reindex`] (the merge policy then combines them).
pub const REINDEX_CHUNK: usize = 65_536;

/// Replaces the namespace's index by `docs` (key, text, created_at); a key given twice keeps
/// its last entry.
pub fn reindex(conn: &mut dyn Conn, ns: &str, docs: &[(i64, String, i64)]) -> Result<()> {
    check_ns(ns)?;
    let uuid = store::lock_meta(conn, ns)?;
    store::clear(conn, ns)?;
    let mut latest: BTreeMap<i64, usize> = BTreeMap::new();
    for (i, d) in docs.iter().enumerate() {
        latest.insert(d.0, i);
    }
    let order: Vec<usize> = latest.into_values().collect();
    for chunk in order.chunks(REINDEX_CHUNK) {
        let mut analysed: Vec<(i64, i64, DocTerms)> = Vec::with_capacity(chunk.len());
        {
            let mut check = || conn.check_interrupt();
            let mut tick = Ticker::new(&mut check);
            for &i in chunk {
                tick.ticks(64)?;
                analysed.push((docs[i].0, docs[i].2, delta::analyze(&docs[i].1)));
            }
        }
        let lens: Vec<(i64, i64, u32)> = analysed.iter().map(|d| (d.0, d.1, d.2.len)).collect();
        let seg = Segment::from_docs(analysed)?;
        let id = store::new_id();
        store::insert_segment(conn, ns, &id, &seg)?;
        segment::cache_put(&uuid, &id, Arc::new(seg));
        for (doc, created, len) in lens {
            conn.execute(
                "INSERT INTO mem_idx_docs (ns, doc, seg_id, ver, len, created_at, terms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, CAST(NULL AS @BLOB))",
                &[
                    ns.into(),
                    doc.into(),
                    id.clone().into(),
                    store::new_ver().into(),
                    i64::from(len).into(),
                    created.into(),
                ],
            )?;
        }
    }
    merge_policy(conn, ns, &uuid, false)
}

/// Compares the index with the documents it should hold (key, text, created_at) and lists
/// every problem: missing, extra and stale documents, broken segments, tombstones and
/// statistics. An empty list means the index is exact. O(index size).
pub fn check(
    conn: &mut dyn Conn,
    ns: &str,
    expected: &[(i64, String, i64)],
) -> Result<Vec<String>> {
    check_ns(ns)?;
    let mut problems = Vec::new();
    let snap = store::snapshot(conn, ns)?;
    let rows = store::all_docs(conn, ns)?;
    // Segments, with their per-document distinct-term counts.
    let mut segs: HashMap<String, (Arc<Segment>, Vec<u32>, Vec<u32>)> = HashMap::new();
    for (id, _) in &snap.segments {
        let loaded = match &snap.index_uuid {
            Some(u) => store::segment(conn, u, ns, id),
            None => Err(Error::internal("segments without a meta row")),
        };
        match loaded {
            Ok(Some(seg)) => {
                let mut counts = vec![0u32; seg.doc_count()];
                seg.for_each_posting(|_, ord, _| counts[ord as usize] += 1)?;
                segs.insert(id.clone(), (seg, Vec::new(), counts));
            }
            Ok(None) => problems.push(format!("segment {id}: vanished while checking")),
            Err(e) => problems.push(format!("segment {id}: {e}")),
        }
    }
    for (s, d, len) in &snap.tombstones {
        match segs.get_mut(s) {
            None => problems.push(format!(
                "tombstone of document {d}: segment {s} does not exist"
            )),
            Some((seg, dead, _)) => match seg.ord_of(*d) {
                None => problems.push(format!("tombstone of document {d}: not in segment {s}")),
                Some(o) => {
                    if i64::from(seg.lens[o as usize]) != *len {
                        problems.push(format!("tombstone of document {d}: wrong length"));
                    }
                    dead.push(o);
                }
            },
        }
    }
    for (_, dead, _) in segs.values_mut() {
        dead.sort_unstable();
    }
    let mut want: BTreeMap<i64, (&str, i64)> = BTreeMap::new();
    for (k, t, c) in expected {
        if want.insert(*k, (t.as_str(), *c)).is_some() {
            problems.push(format!(
                "document {k}: listed twice in the expected documents"
            ));
        }
    }
    let mut have: BTreeMap<i64, (Option<String>, i64, i64, Option<Vec<u8>>)> = BTreeMap::new();
    for (doc, seg, len, created, terms) in rows {
        have.insert(doc, (seg, len, created, terms));
    }
    let mut exp_len: u64 = 0;
    let mut check = || conn.check_interrupt();
    let mut tick = Ticker::new(&mut check);
    for (k, (text, created)) in &want {
        tick.ticks(64)?;
        let a = delta::analyze(text);
        exp_len += u64::from(a.len);
        let Some((seg, len, c, payload)) = have.get(k) else {
            problems.push(format!("document {k}: missing from the index"));
            continue;
        };
        if c != created {
            problems.push(format!(
                "document {k}: stale created_at ({c}, expected {created})"
            ));
        }
        if *len != i64::from(a.len) {
            problems.push(format!(
                "document {k}: stale length ({len}, expected {})",
                a.len
            ));
        }
        match seg {
            None => {
                let ok = payload
                    .as_ref()
                    .and_then(|p| delta::decode(p, a.len))
                    .is_some_and(|d| d.terms == a.terms);
                if !ok {
                    problems.push(format!("document {k}: stale tokens in the delta"));
                }
            }
            Some(s) => {
                let Some((seg, dead, counts)) = segs.get(s) else {
                    problems.push(format!("document {k}: its segment {s} does not exist"));
                    continue;
                };
                let Some(o) = seg.ord_of(*k) else {
                    problems.push(format!("document {k}: not in its segment {s}"));
                    continue;
                };
                if dead.binary_search(&o).is_ok() {
                    problems.push(format!("document {k}: tombstoned in its own segment {s}"));
                }
                if seg.lens[o as usize] != a.len || seg.created[o as usize] != *created {
                    problems.push(format!(
                        "document {k}: stale length or created_at in segment {s}"
                    ));
                }
                let mut same = counts[o as usize] as usize == a.terms.len();
                for (t, ps) in &a.terms {
                    if !same {
                        break;
                    }
                    same = seg.term_id(t).is_some_and(|id| {
                        let mut c = seg.cursor(id);
                        c.advance(o);
                        c.doc() == o && c.positions() == &ps[..]
                    });
                }
                if !same {
                    problems.push(format!("document {k}: stale tokens in segment {s}"));
                }
            }
        }
    }
    for k in have.keys() {
        if !want.contains_key(k) {
            problems.push(format!("document {k}: in the index but not in the table"));
        }
    }
    let mut n: u64 = 0;
    let mut total: u64 = 0;
    for (id, (seg, dead, _)) in &segs {
        for (o, key) in seg.keys.iter().enumerate() {
            if dead.binary_search(&(o as u32)).is_err()
                && have.get(key).and_then(|h| h.0.as_deref()) != Some(id)
            {
                problems.push(format!(
                    "segment {id}: document {key} is live there but indexed elsewhere"
                ));
            }
        }
        let v = View {
            seg: seg.clone(),
            dead: dead.clone(),
        };
        n += v.live_docs();
        total += v.live_len();
    }
    for r in &snap.delta {
        n += 1;
        total += u64::from(r.len);
    }
    if n != want.len() as u64 || total != exp_len {
        problems.push(format!(
            "statistics: {n} documents of total length {total}, expected {} of {exp_len}",
            want.len()
        ));
    }
    Ok(problems)
}
