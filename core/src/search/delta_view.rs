//! The delta as a search sees it: its new versions as an in-memory segment, reused across
//! searches.
//!
//! Building that segment means decoding every payload of the delta, which costs more than the
//! rest of a search on a small index. So the process keeps the last build of each index (a
//! *base*: the versions it holds, keyed by document and `ver`, which is random per write and so
//! names one content everywhere) and a search builds only what changed since: versions the
//! base lacks become a small segment of the query's terms, base versions that are gone or
//! replaced become deletions of the base (their terms keep the statistics exact). Once the
//! changes outgrow `32 + √(8·base)` versions the base is rebuilt, so a search decodes
//! O(√delta) payloads on average while writes and searches alternate, and none in a run of
//! searches.

use super::delta::{self, RawTerm};
use super::engine::{Pending, SegView, Src, View};
use super::lru::Lru;
use super::pages::{MemPages, Page};
use super::segment::{Dead, Segment};
use super::store::{self, DeltaRow};
use crate::{Conn, Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Memory bound of the bases of all indexes of the process.
pub(crate) const BASE_BYTES: usize = 32 * 1024 * 1024;

/// A built delta: its versions by ordinal (key order), and its pages.
pub(crate) struct Base {
    /// doc → (ver, ord)
    versions: HashMap<i64, (i64, u32)>,
    /// By ordinal: length and payload (for the terms of a version that goes).
    lens: Vec<u32>,
    payloads: Vec<Vec<u8>>,
    pages: Arc<MemPages>,
    segment: Segment,
}

impl Base {
    fn weight(&self) -> usize {
        let pages: usize = self.pages.0.values().map(|p| p.len() + 16).sum();
        let payloads: usize = self.payloads.iter().map(|p| p.len() + 24).sum();
        pages + payloads + self.versions.len() * 32
    }
}

type Key = (String, i64);

static BASES: Mutex<Option<Lru<Key, Arc<Base>>>> = Mutex::new(None);

fn cached(key: &Key) -> Option<Arc<Base>> {
    let mut g = BASES.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(|| Lru::new(BASE_BYTES)).get(key)
}

fn remember(key: Key, base: Arc<Base>) {
    let w = base.weight();
    let mut g = BASES.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(|| Lru::new(BASE_BYTES))
        .put(key, base, w);
}

/// Forgets every base (benchmarks measure cold searches this way).
pub(crate) fn clear() {
    let mut g = BASES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = g.as_mut() {
        l.clear();
    }
}

/// Changes a base absorbs before it is rebuilt.
fn rebuild_after(base_docs: usize) -> usize {
    32 + ((8 * base_docs) as f64).sqrt() as usize
}

/// The views of the delta's new versions for a search whose terms `keep` accepts: the base
/// (with deletions for the versions that changed) and the versions it lacks. `None` when the
/// delta changed between the snapshot and the payload reads (the search retries).
pub(crate) fn views(
    conn: &mut dyn Conn,
    ns: &str,
    index: i64,
    rows: &[DeltaRow],
    keep: &dyn Fn(&[u8]) -> bool,
) -> Result<Option<Vec<View>>> {
    let fresh: Vec<&DeltaRow> = rows.iter().filter(|d| d.new.is_some()).collect();
    if fresh.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let key = (ns.to_owned(), index);
    let base = cached(&key);
    if let Some(base) = &base {
        let added: Vec<&DeltaRow> = fresh
            .iter()
            .copied()
            .filter(|d| base.versions.get(&d.doc).map(|v| v.0) != Some(d.ver))
            .collect();
        let live = fresh.len() - added.len();
        let stale = base.lens.len() - live;
        if added.len() + stale <= rebuild_after(base.lens.len()) {
            return on_base(conn, ns, base, &fresh, &added, keep);
        }
    }
    let Some(payloads) = payloads_of(conn, ns, &fresh, true)? else {
        return Ok(None);
    };
    let base = Arc::new(build_base(&fresh, payloads)?);
    remember(key, base.clone());
    Ok(Some(vec![base_view(&base, Pending::default())]))
}

/// The base with deletions for its versions that are gone, and a segment of the added ones.
fn on_base(
    conn: &mut dyn Conn,
    ns: &str,
    base: &Arc<Base>,
    fresh: &[&DeltaRow],
    added: &[&DeltaRow],
    keep: &dyn Fn(&[u8]) -> bool,
) -> Result<Option<Vec<View>>> {
    let current: HashMap<i64, i64> = fresh.iter().map(|d| (d.doc, d.ver)).collect();
    let mut gone = Pending::default();
    for (doc, &(ver, ord)) in &base.versions {
        if current.get(doc) != Some(&ver) {
            gone.ords.push(ord);
            gone.len += u64::from(base.lens[ord as usize]);
            let ok = delta::for_each_raw_term(&base.payloads[ord as usize], |t: RawTerm<'_>| {
                *gone.terms.entry(t.term.to_vec()).or_default() += 1;
            });
            ok.ok_or_else(|| corrupt(*doc))?;
        }
    }
    gone.ords.sort_unstable();
    let mut out = vec![base_view(base, gone)];
    if !added.is_empty() {
        let Some(payloads) = payloads_of(conn, ns, added, added.len() * 2 > fresh.len())? else {
            return Ok(None);
        };
        let docs: Vec<delta::Pending<'_>> = added
            .iter()
            .zip(&payloads)
            .map(|(d, p)| pending(d, p))
            .collect();
        out.extend(View::in_memory(&docs, keep)?);
    }
    Ok(Some(out))
}

fn pending<'a>(d: &DeltaRow, payload: &'a [u8]) -> delta::Pending<'a> {
    let (created, len) = d.new.as_ref().map_or((0, 0), |n| (n.created, n.len));
    delta::Pending {
        key: d.doc,
        created,
        len,
        payload,
    }
}

/// The payloads of `rows`, in their order; `None` when one of them changed since the
/// snapshot. `all` reads the whole delta in one statement (cheaper than many lookups).
fn payloads_of(
    conn: &mut dyn Conn,
    ns: &str,
    rows: &[&DeltaRow],
    all: bool,
) -> Result<Option<Vec<Vec<u8>>>> {
    let docs: Vec<i64> = rows.iter().map(|d| d.doc).collect();
    let mut found = store::delta_payloads(conn, ns, if all { None } else { Some(&docs) })?;
    let mut out = Vec::with_capacity(rows.len());
    for d in rows {
        match found.remove(&d.doc) {
            Some((ver, payload)) if ver == d.ver => out.push(payload),
            _ => return Ok(None),
        }
    }
    Ok(Some(out))
}

fn build_base(fresh: &[&DeltaRow], payloads: Vec<Vec<u8>>) -> Result<Base> {
    let mut order: Vec<usize> = (0..fresh.len()).collect();
    order.sort_by_key(|&i| fresh[i].doc);
    let docs: Vec<delta::Pending<'_>> = order
        .iter()
        .map(|&i| pending(fresh[i], &payloads[i]))
        .collect();
    let mut pages = MemPages::default();
    let mut sink = |no: u32, b: &[u8]| {
        pages.0.insert(no, Page::from(b));
        Ok(())
    };
    let header = delta::build(&docs, &|_| true, &mut sink)?;
    let versions = order
        .iter()
        .enumerate()
        .map(|(ord, &i)| (fresh[i].doc, (fresh[i].ver, ord as u32)))
        .collect();
    let lens = order.iter().map(|&i| docs_len(fresh[i])).collect();
    let mut by_ord: Vec<Option<Vec<u8>>> = payloads.into_iter().map(Some).collect();
    let payloads = order
        .iter()
        .map(|&i| by_ord[i].take().unwrap_or_default())
        .collect();
    Ok(Base {
        versions,
        lens,
        payloads,
        pages: Arc::new(pages),
        segment: Segment {
            header: Arc::new(header),
        },
    })
}

fn docs_len(d: &DeltaRow) -> u32 {
    d.new.as_ref().map_or(0, |n| n.len)
}

fn base_view(base: &Arc<Base>, gone: Pending) -> View {
    View {
        seg: SegView {
            seg: base.segment.clone(),
            dead: Arc::new(Dead::default()),
            pending: gone,
        },
        src: Src::Shared(base.pages.clone()),
    }
}

fn corrupt(doc: i64) -> Error {
    Error::internal(format!(
        "search index delta row of document {doc} is corrupt; run mem_reindex()"
    ))
}
