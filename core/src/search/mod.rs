//! The search engine: a segmented BM25 + recency index stored in `mem_idx_*` tables as
//! pages, identical on SQLite and Postgres because both run this code on the same bytes.
//!
//! * analysis: [`tokenizer`] (code-and-prose tokens with positions), [`query`] (the query
//!   language; it never fails);
//! * scoring: [`scoring`] (BM25 × a bounded recency boost);
//! * storage: [`pages`] (segments as numbered pages) and [`cache`] (the bounded caches),
//!   [`segment`] (header, dictionary pages, postings area, document pages, deletions),
//!   [`postings`] (blocks with block-max data, read a block at a time), [`codec`];
//! * writing: [`delta`] (fresh writes as rows until a flush), [`merge`] (the merge policy,
//!   page-by-page merges), [`store`] (every statement);
//! * reading: [`engine`] (exact statistics, block-max WAND over the pages a query touches);
//! * [`snippet`], [`interrupt`].
//!
//! Documents are identified by an `i64` key inside an index: a namespace (`"msg"` for
//! messages), or a namespace and resource in a database partitioned by resource
//! ([`names`], [`partition`]). A document is live in exactly one place: as a new version in the delta, or in one segment
//! where it is not deleted. See docs/search.md for the formulas, defaults and the layout.

pub(crate) mod cache;
pub(crate) mod check;
pub(crate) mod codec;
internal!(delta);
pub(crate) mod delta_view;
internal!(engine);
internal!(held);
pub(crate) mod interrupt;
pub(crate) mod layout;
pub(crate) mod lru;
internal!(merge);
pub(crate) mod names;
pub(crate) mod pages;
pub(crate) mod partition;
pub(crate) mod postings;
internal!(query);
pub(crate) mod rows;
internal!(scoring);
pub(crate) mod segment;
pub(crate) mod snippet;
pub(crate) mod stats;
internal!(stem);
pub(crate) mod stopwords;
pub(crate) mod store;
pub(crate) mod term_table;
internal!(tokenizer);

#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) use check::check;
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) use engine::{Hit, SearchResult};
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) use scoring::{check_weight, SearchParams};
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) use snippet::{snippet, SnippetSettings, Snippeter};

use crate::{Conn, Error, Result};
use engine::{Pending, SegView, Src, View};
use interrupt::Ticker;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use store::{DeltaRow, Lock, NewVersion, OldVersion, SegRow};

/// The namespace of message documents.
pub(crate) const NS_MESSAGES: &str = "msg";

/// An index name's namespace must be 1 to 64 bytes without control characters (its resource,
/// if any, was checked where the resource was written).
fn check_ns(index: &str) -> Result<()> {
    let ns = names::split(index).0;
    if ns.is_empty() || ns.len() > 64 || ns.chars().any(|c| c.is_control()) {
        return Err(Error::invalid(
            "namespace",
            "must be 1 to 64 bytes without control characters",
        ));
    }
    Ok(())
}

fn new_version(text: &str, created: i64) -> NewVersion {
    let (len, terms) = delta::analyze_encoded(text);
    NewVersion {
        len,
        created,
        terms,
    }
}

/// Indexes a document that is not indexed yet; `false` (nothing written) when it is. Row
/// triggers use it as a booking token: a document is live exactly while its row has been
/// counted, so a handler run twice books once. A new key (a message's next `seq`) takes one
/// statement. With `hold`, which only a caller whose host writes held documents before the
/// transaction commits may pass (see [`held`]), a new key is kept in memory instead.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn index_new(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    text: &str,
    created_at: i64,
    hold: bool,
) -> Result<bool> {
    check_ns(ns)?;
    if held::of(conn).holds(ns, doc) {
        return Ok(false);
    }
    if hold
        && holding_pays(conn)
        && held::of(conn).total_bytes() < HELD_LIMIT
        && !store::may_be_indexed(conn, ns, doc)?
    {
        let held = held::of(conn);
        held.hold(ns, doc, new_version(text, created_at));
        if held.top_bytes() >= HELD_BYTES {
            write_held_top(conn)?;
        }
        return Ok(true);
    }
    let row = DeltaRow {
        doc,
        ver: store::random_id(),
        new: Some(new_version(text, created_at)),
        old: None,
    };
    let bytes = row.payload_bytes();
    if store::insert_delta_fresh(conn, ns, &row)? {
        maybe_flush(conn, ns, bytes)?;
        return Ok(true);
    }
    store::lock_meta(conn, ns, Lock::Shared)?;
    match store::delta_row_of(conn, ns, doc)? {
        Some(r) if r.new.is_some() => Ok(false),
        Some(mut r) => {
            r.new = row.new;
            r.ver = row.ver;
            store::put_delta(conn, ns, &r)?;
            Ok(true)
        }
        None if locate(conn, ns, doc)?.is_some() => Ok(false),
        None => {
            store::put_delta(conn, ns, &row)?;
            maybe_flush(conn, ns, bytes)?;
            Ok(true)
        }
    }
}

/// Indexes a new document whose row was written without a statement (see
/// [`crate::db::direct`]), so that nothing writes held documents for it at the commit; `doc`
/// is the key of that row, which its insert found unique. Its delta row is written the same
/// way once the key is known to be unused: in a transaction of several statements by the
/// transaction's first look, which then answers from memory ([`store::may_be_indexed`]);
/// alone, by index reads ([`store::unused_directly`]). Else as [`index_new`] writes it.
pub(crate) fn index_fresh(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    text: &str,
    created_at: i64,
) -> Result<bool> {
    check_ns(ns)?;
    let unused = if conn.statement_is_transaction() {
        store::unused_directly(conn, ns, doc)?.unwrap_or(false)
    } else {
        !store::may_be_indexed(conn, ns, doc)?
    };
    if unused {
        let row = DeltaRow {
            doc,
            ver: store::random_id(),
            new: Some(new_version(text, created_at)),
            old: None,
        };
        if store::insert_delta_directly(conn, ns, &row)? {
            maybe_flush(conn, ns, row.payload_bytes())?;
            return Ok(true);
        }
    }
    index_new(conn, ns, doc, text, created_at, false)
}

/// Whether holding a new document can pay. Not for the first one of a transaction that is a
/// single statement (an autocommit call that adds one message): holding first looks whether
/// the key is stored already, which costs more than writing its delta row straight away (and
/// the look's kept plan may scan the delta). Later documents of that statement are held.
fn holding_pays(conn: &mut dyn Conn) -> bool {
    if !conn.statement_is_transaction() {
        return true;
    }
    std::mem::replace(&mut conn.session().part::<WroteStraight>().0, true)
}

/// The transaction wrote a document straight to the delta rather than hold it (see
/// [`holding_pays`]); a part of the connection's session, forgotten when a transaction ends.
#[derive(Default)]
struct WroteStraight(bool);

impl crate::db::session::Part for WroteStraight {
    fn commit(&mut self) {
        self.0 = false;
    }

    fn rollback(&mut self) {
        self.0 = false;
    }
}

/// Analysed bytes a connection holds before it writes them as a segment without waiting for
/// the commit (a transaction that writes a million messages holds at most this much).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const HELD_BYTES: usize = 4 * 1024 * 1024;

/// Analysed bytes a connection holds at most, over all its open savepoints: past it new
/// documents go straight to the delta. (Each level writes what it holds past [`HELD_BYTES`]
/// while it is innermost; a loop that wraps every insert in a savepoint of its own leaves
/// its outer level to grow.)
const HELD_LIMIT: usize = 16 * HELD_BYTES;

/// Held documents written at commit become one segment from this many documents or this many
/// analysed bytes on (a segment of a few documents would cost every search a cursor until it
/// is merged); fewer go to the delta.
const HELD_SEGMENT_DOCS: usize = 256;
const HELD_SEGMENT_BYTES: usize = 128 * 1024;

/// Writes everything the connection holds into the index's tables, for a transaction that
/// is committing: as one new segment per namespace when there are many documents, as delta
/// rows otherwise.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn write_held(conn: &mut dyn Conn) -> Result<()> {
    let docs = held::of(conn).take_all();
    write_documents(conn, docs)
}

/// Writes what the connection held since its innermost open savepoint began (see [`held`]),
/// for a transaction that holds too much or a maintenance call that reads the tables.
pub(crate) fn write_held_top(conn: &mut dyn Conn) -> Result<()> {
    let docs = held::of(conn).take_top();
    write_documents(conn, docs)
}

fn write_documents(conn: &mut dyn Conn, held: Vec<(String, Vec<(i64, NewVersion)>)>) -> Result<()> {
    for (ns, docs) in held {
        let bytes: usize = docs.iter().map(|(_, v)| v.terms.len()).sum();
        if docs.len() >= HELD_SEGMENT_DOCS || bytes >= HELD_SEGMENT_BYTES {
            let fresh: Vec<delta::Pending<'_>> =
                docs.iter().map(|(doc, v)| v.pending(*doc)).collect();
            store_segment(conn, &ns, &mut |c, sink| {
                let mut local = |no: u32, b: &[u8]| sink(c, no, b);
                delta::build(&fresh, &|_| true, &mut local)
            })?;
            if let Some((last, _)) = docs.last() {
                store::note_stored(conn, &ns, *last);
            }
            if store::lock_meta(conn, &ns, Lock::TryExclusive)? {
                merge_policy(conn, &ns, false)?;
            }
            continue;
        }
        store::put_new_versions(conn, &ns, &docs)?;
        for (_, version) in &docs {
            maybe_flush(conn, &ns, version.terms.len())?;
        }
    }
    Ok(())
}

/// Indexes a document, replacing the version it has. `old_text` is the text indexed now; it
/// is needed only when that version lives in a segment (its terms keep the statistics exact
/// until the deletion is flushed). Cost: O(tokens) plus a lookup of the old version, and the
/// amortised flush and merges.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn index_doc(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    text: &str,
    created_at: i64,
    old_text: Option<&str>,
) -> Result<()> {
    check_ns(ns)?;
    let new = new_version(text, created_at);
    let held = held::of(conn);
    if held.holds(ns, doc) {
        held.hold(ns, doc, new);
        return Ok(());
    }
    let fresh = DeltaRow {
        doc,
        ver: store::random_id(),
        new: Some(new.clone()),
        old: None,
    };
    if store::insert_delta_fresh(conn, ns, &fresh)? {
        return maybe_flush(conn, ns, fresh.payload_bytes());
    }
    store::lock_meta(conn, ns, Lock::Shared)?;
    let mut row = match store::delta_row_of(conn, ns, doc)? {
        Some(r) => r,
        None => DeltaRow {
            doc,
            ver: 0,
            new: None,
            old: old_version(conn, ns, doc, old_text)?,
        },
    };
    row.new = Some(new);
    row.ver = store::random_id();
    store::put_delta(conn, ns, &row)?;
    maybe_flush(conn, ns, row.payload_bytes())
}

/// Removes a document; `false` when it was not indexed. `old_text` as for [`index_doc`].
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn remove_doc(conn: &mut dyn Conn, ns: &str, doc: i64, old_text: Option<&str>) -> Result<bool> {
    check_ns(ns)?;
    if held::of(conn).drop_held(ns, doc) {
        return Ok(true);
    }
    store::lock_meta(conn, ns, Lock::Shared)?;
    match store::delta_row_of(conn, ns, doc)? {
        Some(mut r) if r.new.is_some() => {
            if r.old.is_some() {
                r.new = None;
                r.ver = store::random_id();
                store::put_delta(conn, ns, &r)?;
            } else {
                store::delete_delta(conn, ns, doc)?;
            }
            Ok(true)
        }
        Some(_) => Ok(false),
        None => match old_version(conn, ns, doc, old_text)? {
            Some(old) => {
                let row = DeltaRow {
                    doc,
                    ver: store::random_id(),
                    new: None,
                    old: Some(old),
                };
                store::put_delta(conn, ns, &row)?;
                maybe_flush(conn, ns, row.payload_bytes())?;
                Ok(true)
            }
            None => Ok(false),
        },
    }
}

/// The live version of a document in a segment: the segment, its ordinal and its length.
fn locate(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<Option<(SegRow, u32, u32)>> {
    for row in store::segments_covering(conn, ns, doc)? {
        let (Some(seg), Some(dead)) = (store::header(conn, &row)?, store::dead(conn, &row)?) else {
            continue;
        };
        let mut src = store::StoredPages::new(conn, &row);
        if let Some(ord) = seg.ord_of(&mut src, doc)? {
            if !dead.is_dead(ord) {
                let page = seg.doc_page(&mut src, ord / segment::DOCS_PER_PAGE as u32)?;
                let len = page.lens[ord as usize % segment::DOCS_PER_PAGE];
                return Ok(Some((row, ord, len)));
            }
        }
    }
    Ok(None)
}

/// The old version to delete when a document living in a segment changes.
fn old_version(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    old_text: Option<&str>,
) -> Result<Option<OldVersion>> {
    let Some((row, ord, len)) = locate(conn, ns, doc)? else {
        return Ok(None);
    };
    let text = old_text.ok_or_else(|| {
        Error::internal(format!(
            "search index: document {doc} of {ns} changes, but its indexed text was not given"
        ))
    })?;
    let terms = delta::analyze(text);
    if terms.len != len {
        return Err(Error::internal(format!(
            "search index: the indexed text given for document {doc} of {ns} is not the one indexed; run mem_reindex()"
        )));
    }
    Ok(Some(OldVersion {
        seg_no: row.seg_no,
        ord,
        len,
        terms: delta::encode_term_set(&terms),
    }))
}

/// Measurements of the delta per flush: a writer measures it (one statement) after writing
/// an eighth of a flush's rows or bytes, so the delta passes its bounds by at most an eighth
/// per writer process.
const CHECKS_PER_FLUSH: i64 = 8;

/// Rows and bytes written to each namespace's delta by this process since it last measured
/// the delta. A hint only: which write flushes never changes a result, so neither a rollback
/// nor another process's writes make it wrong.
static WRITTEN: std::sync::Mutex<BTreeMap<String, (i64, i64)>> =
    std::sync::Mutex::new(BTreeMap::new());

/// After a delta write of `bytes` payload bytes: measures the delta when due and flushes it
/// when full.
fn maybe_flush(conn: &mut dyn Conn, ns: &str, bytes: usize) -> Result<()> {
    let due = {
        let mut w = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
        let e = w.entry(ns.to_owned()).or_default();
        e.0 += 1;
        e.1 += bytes as i64;
        let due = e.0 * CHECKS_PER_FLUSH >= merge::FLUSH_DOCS
            || e.1 * CHECKS_PER_FLUSH >= merge::FLUSH_BYTES;
        if due {
            *e = (0, 0);
        }
        due
    };
    if due {
        let (rows, bytes) = store::delta_size(conn, ns)?;
        if merge::delta_is_full(rows, bytes) {
            flush(conn, ns, false)?;
        }
    }
    Ok(())
}

/// Top-k search of one index. `filter` (built by the caller from thread, role, time
/// filters) is asked only about documents that could enter the top k.
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn search(
    conn: &mut dyn Conn,
    ns: &str,
    query: &str,
    params: &SearchParams,
    filter: Option<&dyn Fn(i64) -> bool>,
) -> Result<SearchResult> {
    search_indexes(conn, &[ns.to_owned()], query, params, filter)
}

/// Top-k search over several indexes as one: their segments and deltas are ranked together,
/// with statistics summed over all of them (see [`partition`]).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn search_indexes(
    conn: &mut dyn Conn,
    indexes: &[String],
    query: &str,
    params: &SearchParams,
    filter: Option<&dyn Fn(i64) -> bool>,
) -> Result<SearchResult> {
    for ns in indexes {
        check_ns(ns)?;
    }
    params.validate()?;
    let q = query::parse(query).weighed(params);
    if q.is_empty() || params.limit == 0 {
        return Ok(SearchResult::default());
    }
    let now = conn.now_or(params.now)?;
    let wanted = q.terms();
    'attempt: for _attempt in 0..8 {
        let (mut all, mut segments, mut delta_docs) = (Vec::new(), 0, 0);
        for ns in indexes {
            let snap = store::snapshot(conn, ns)?;
            let Some(views) = views(conn, ns, &snap, &|t| wanted.contains(t))? else {
                continue 'attempt;
            };
            all.extend(views);
            segments += snap.segments.len();
            delta_docs += snap.delta.iter().filter(|d| d.new.is_some()).count();
        }
        let r = engine::execute(conn, &mut all, &q, params, now, filter);
        match r {
            Ok(mut r) => {
                r.stats.segments = segments;
                r.stats.delta_docs = delta_docs;
                return Ok(r);
            }
            Err(e) if store::is_vanished(&e) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::internal(
        "search index changed under every attempt to read it; try again",
    ))
}

/// The views of a snapshot: its segments with their deletions (flushed and pending), then
/// the delta's new versions (see [`delta_view`]; `keep` accepts the search's terms). `None`
/// when a segment vanished or the delta moved (a concurrent merge or write).
fn views(
    conn: &mut dyn Conn,
    ns: &str,
    snap: &store::Snapshot,
    keep: &dyn Fn(&[u8]) -> bool,
) -> Result<Option<Vec<View>>> {
    let mut pending: HashMap<i64, Pending> = HashMap::new();
    for d in &snap.delta {
        if let Some(old) = &d.old {
            let p = pending.entry(old.seg_no).or_default();
            p.ords.push(old.ord);
            p.len += u64::from(old.len);
            for t in delta::decode_term_set(&old.terms).ok_or_else(|| corrupt_delta(d.doc))? {
                *p.terms.entry(t).or_default() += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(snap.segments.len() + 1);
    for row in &snap.segments {
        let (Some(seg), Some(dead)) = (store::header(conn, row)?, store::dead(conn, row)?) else {
            return Ok(None);
        };
        let mut p = pending.remove(&row.seg_no).unwrap_or_default();
        p.ords.sort_unstable();
        out.push(View {
            seg: SegView {
                seg,
                dead,
                pending: p,
            },
            src: Src::Stored(row.clone()),
        });
    }
    let Some(delta) = delta_view::views(conn, ns, snap.index, &snap.delta, keep)? else {
        return Ok(None);
    };
    out.extend(delta);
    let held = held::of(conn).documents(ns);
    let held: Vec<delta::Pending<'_>> = held.iter().map(|(doc, v)| v.pending(*doc)).collect();
    out.extend(View::in_memory(&held, keep)?);
    Ok(Some(out))
}

fn corrupt_delta(doc: i64) -> Error {
    Error::internal(format!(
        "search index delta row of document {doc} is corrupt; run mem_reindex()"
    ))
}

/// Writes a new stored segment through `write` (which hands it a page sink) and returns its
/// number, or `None` when it came out empty (and was removed).
fn store_segment(
    conn: &mut dyn Conn,
    ns: &str,
    write: &mut dyn FnMut(
        &mut dyn Conn,
        &mut dyn FnMut(&mut dyn Conn, u32, &[u8]) -> Result<()>,
    ) -> Result<segment::Header>,
) -> Result<Option<i64>> {
    conn.reuse_freed_pages()?;
    let build = store::random_id();
    let seg_no = store::insert_segment(conn, ns, build)?;
    let mut pw = store::PageWriter::new(ns, seg_no, build);
    let header = {
        let mut sink = |c: &mut dyn Conn, no: u32, b: &[u8]| pw.put(c, no, b);
        write(conn, &mut sink)?
    };
    pw.flush(conn)?;
    if header.doc_count == 0 {
        store::delete_segment(conn, names::split(ns).1, seg_no)?;
        return Ok(None);
    }
    store::finish_segment(conn, ns, seg_no, build, &header)?;
    Ok(Some(seg_no))
}

/// Moves the delta into segments: new versions into a new segment, deletions into their
/// segments' deletion sets (when it is full, see [`merge::delta_is_full`], or any when
/// `force`); then runs the merge policy. Takes the namespace exclusively (when `force` is
/// false, only if it is free).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn flush(conn: &mut dyn Conn, ns: &str, force: bool) -> Result<()> {
    check_ns(ns)?;
    if force {
        write_held_top(conn)?;
    }
    let lock = if force {
        Lock::Exclusive
    } else {
        Lock::TryExclusive
    };
    if !store::lock_meta(conn, ns, lock)? {
        return Ok(());
    }
    let rows = store::delta_rows(conn, ns)?;
    let bytes: usize = rows.iter().map(DeltaRow::payload_bytes).sum();
    if rows.is_empty() || (!force && !merge::delta_is_full(rows.len() as i64, bytes as i64)) {
        return Ok(());
    }
    let fresh: Vec<delta::Pending<'_>> = rows
        .iter()
        .filter_map(|d| d.new.as_ref().map(|n| n.pending(d.doc)))
        .collect();
    if !fresh.is_empty() {
        store_segment(conn, ns, &mut |c, sink| {
            let mut local = |no: u32, b: &[u8]| sink(c, no, b);
            delta::build(&fresh, &|_| true, &mut local)
        })?;
    }
    crate::db::failpoint::hit(conn, crate::db::failpoint::FLUSH)?;
    record_deletions(conn, ns, &rows)?;
    store::consume_delta(conn, ns, &rows)?;
    merge_policy(conn, ns, false)?;
    Ok(())
}

/// Adds the delta's deletions to their segments' deletion sets.
fn record_deletions(conn: &mut dyn Conn, ns: &str, rows: &[DeltaRow]) -> Result<()> {
    let mut by_seg: BTreeMap<i64, Vec<(u32, u32, Vec<Vec<u8>>)>> = BTreeMap::new();
    for d in rows {
        if let Some(old) = &d.old {
            let terms = delta::decode_term_set(&old.terms).ok_or_else(|| corrupt_delta(d.doc))?;
            by_seg
                .entry(old.seg_no)
                .or_default()
                .push((old.ord, old.len, terms));
        }
    }
    if by_seg.is_empty() {
        return Ok(());
    }
    for row in store::segments(conn, ns)? {
        if let Some(more) = by_seg.get(&row.seg_no) {
            let dead = store::dead(conn, &row)?
                .ok_or_else(|| Error::internal("segment deletions changed during a flush"))?;
            store::set_dead(conn, &row, &dead.with(more))?;
        }
    }
    Ok(())
}

/// Runs the merge policy ([`merge::pick`]), or `optimize`'s merges when `all`
/// ([`merge::pick_all`]), until nothing is left or they would write more than one merge bound
/// together: the space merges free is reused from the next transaction on, so the bound on
/// one write's output is the room the files need beyond the live pages.
/// What is left waits for the next write (or call). Returns the merges run. The caller holds
/// the namespace exclusively.
fn merge_policy(conn: &mut dyn Conn, ns: &str, all: bool) -> Result<i64> {
    let share = conn.dialect().merge_share();
    let mut merges = 0;
    let mut written = 0;
    // Every round removes a segment or a segment's deletions, so this bound is never reached
    // by an index the policy kept in shape; it stops a damaged one from looping.
    for _round in 0..256 {
        let segs = store::segments(conn, ns)?;
        let info: Vec<merge::SegInfo> = segs
            .iter()
            .map(|s| (s.seg_no, s.doc_count, s.dead_count))
            .collect();
        let ids = if all {
            merge::pick_all(&info, share)
        } else {
            merge::pick(&info, share)
        };
        if ids.is_empty() {
            break;
        }
        let output = merge::live_docs(info.iter().filter(|s| ids.contains(&s.0)));
        if !merge::runs_next(written, output, merge::live_docs(&info), share) {
            break;
        }
        written += output;
        let inputs: Vec<SegRow> = segs
            .into_iter()
            .filter(|s| ids.contains(&s.seg_no))
            .collect();
        merge_segments(conn, ns, &inputs)?;
        merges += 1;
    }
    Ok(merges)
}

/// Merges segments into one and deletes them. Deletions still pending in the delta for them
/// are applied by the merge (their rows then only keep their new versions).
fn merge_segments(conn: &mut dyn Conn, ns: &str, rows: &[SegRow]) -> Result<()> {
    let pending = store::delta_rows(conn, ns)?;
    let mut inputs = Vec::with_capacity(rows.len());
    for row in rows {
        let seg = store::header(conn, row)?
            .ok_or_else(|| Error::internal("segment vanished during a merge"))?;
        let mut dead = (*store::dead(conn, row)?
            .ok_or_else(|| Error::internal("segment deletions changed during a merge"))?)
        .clone();
        let extra: Vec<(u32, u32, Vec<Vec<u8>>)> = pending
            .iter()
            .filter_map(|d| d.old.as_ref().filter(|o| o.seg_no == row.seg_no))
            .map(|o| (o.ord, o.len, Vec::new()))
            .collect();
        if !extra.is_empty() {
            dead = dead.with(&extra);
        }
        inputs.push(merge::Input {
            row: row.clone(),
            seg,
            dead: Arc::new(dead),
        });
    }
    store_segment(conn, ns, &mut |c, sink| merge::merge(c, &inputs, sink))?;
    crate::db::failpoint::hit(conn, crate::db::failpoint::MERGE)?;
    for d in &pending {
        if d.old
            .as_ref()
            .is_some_and(|o| rows.iter().any(|r| r.seg_no == o.seg_no))
        {
            if d.new.is_some() {
                let mut r = d.clone();
                r.old = None;
                store::put_delta(conn, ns, &r)?;
            } else {
                store::delete_delta(conn, ns, d.doc)?;
            }
        }
    }
    for row in rows {
        store::delete_segment(conn, &row.resource, row.seg_no)?;
    }
    Ok(())
}

/// Flushes the delta, then purges deletions and joins segments ([`merge::pick_all`]), writing
/// about one merge bound per call. Returns the merges it ran: repeated until it returns 0, it
/// leaves no deleted document and no two segments one merge could join.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn optimize(conn: &mut dyn Conn, ns: &str) -> Result<i64> {
    check_ns(ns)?;
    flush(conn, ns, true)?;
    merge_policy(conn, ns, true)
}

/// Flushes the delta and rewrites every segment that holds deleted documents on its own, so
/// that no deleted document's postings, positions or terms are left in any page: what a
/// verified forget needs (deletions are otherwise only marked until a merge). Costs the
/// segments with deletions, not the whole index as [`optimize`] does.
pub(crate) fn purge(conn: &mut dyn Conn, ns: &str) -> Result<()> {
    check_ns(ns)?;
    flush(conn, ns, true)?;
    store::lock_meta(conn, ns, Lock::Exclusive)?;
    for seg in store::segments(conn, ns)? {
        if seg.dead_count > 0 {
            merge_segments(conn, ns, std::slice::from_ref(&seg))?;
        }
    }
    Ok(())
}

/// Documents per segment built by [`reindex`] (the merge policy then combines them).
pub(crate) const REINDEX_CHUNK: usize = 65_536;

/// Replaces the namespace's index by `docs` (key, text, created_at); a key given twice keeps
/// its last entry.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn reindex(conn: &mut dyn Conn, ns: &str, docs: &[(i64, String, i64)]) -> Result<()> {
    check_ns(ns)?;
    // The documents given include those held: they are stored by this rebuild, at keys
    // this transaction may not have seen stored.
    held::of(conn).stored(ns);
    store::forget_fresh(conn);
    store::lock_meta(conn, ns, Lock::Exclusive)?;
    store::clear(conn, ns)?;
    let mut latest: BTreeMap<i64, usize> = BTreeMap::new();
    for (i, d) in docs.iter().enumerate() {
        latest.insert(d.0, i);
    }
    let order: Vec<usize> = latest.into_values().collect();
    for chunk in order.chunks(REINDEX_CHUNK) {
        let mut versions = Vec::with_capacity(chunk.len());
        let mut tick = Ticker::new();
        for &i in chunk {
            tick.ticks(64, || conn.check_interrupt())?;
            versions.push((docs[i].0, new_version(&docs[i].1, docs[i].2)));
        }
        let fresh: Vec<delta::Pending<'_>> =
            versions.iter().map(|(key, n)| n.pending(*key)).collect();
        store_segment(conn, ns, &mut |c, sink| {
            let mut local = |no: u32, b: &[u8]| sink(c, no, b);
            delta::build(&fresh, &|_| true, &mut local)
        })?;
    }
    merge_policy(conn, ns, false)?;
    Ok(())
}
