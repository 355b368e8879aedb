//! `check`: every difference between the index and the documents it should hold. It reads the
//! whole index once — every page of every segment and the delta — and compares each document's
//! terms and positions (as a hash per document, built while the postings stream by term),
//! lengths, times, deletions and the per-term deletion counts with a fresh analysis of the
//! expected texts. O(index size) in time, O(documents) in memory.

use super::codec::corrupt;
use super::delta::{self, DocTerms};
use super::interrupt::Ticker;
use super::pages::{page_no, Area, PageSource};
use super::postings::END;
use super::segment::read_dict_page;
use super::store::{self, StoredPages};
use crate::{Conn, Error, Result};
use std::collections::{BTreeMap, HashMap};

/// FNV-1a, enough to tell a document's terms from another's.
#[derive(Clone, Copy)]
struct Hash(u64);

impl Hash {
    fn new() -> Hash {
        Hash(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
}

/// A document's terms as the index holds them: all of them with positions, and the set.
#[derive(Clone, Copy)]
struct Fingerprint {
    full: Hash,
    set: Hash,
}

impl Fingerprint {
    fn new() -> Self {
        Fingerprint {
            full: Hash::new(),
            set: Hash::new(),
        }
    }

    fn add(&mut self, term: &[u8], positions: &[u32]) {
        self.full.bytes(term);
        self.full.u32(positions.len() as u32);
        for &p in positions {
            self.full.u32(p);
        }
        self.set.bytes(term);
        self.set.u32(0);
    }

    fn of(d: &DocTerms) -> Self {
        let mut f = Fingerprint::new();
        for (t, ps) in &d.terms {
            f.add(t.as_bytes(), ps);
        }
        f
    }
}

fn set_hash(terms: &[Vec<u8>]) -> u64 {
    let mut h = Hash::new();
    for t in terms {
        h.bytes(t);
        h.u32(0);
    }
    h.0
}

/// A live document as found in the index.
struct Found {
    place: String,
    len: u32,
    created: i64,
    full: u64,
}

/// Compares the index with the documents it should hold (key, text, created_at) and lists
/// every problem: missing, extra and stale documents, broken segments, deletions and
/// statistics. An empty list means the index is exact.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn check(
    conn: &mut dyn Conn,
    ns: &str,
    expected: &[(i64, String, i64)],
) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut tick = Ticker::new();
    let delta_rows = store::delta_rows(conn, ns)?;
    let mut live: BTreeMap<i64, Vec<Found>> = BTreeMap::new();
    let mut pending: HashMap<(i64, u32), (u32, u64, i64)> = HashMap::new();
    let mut n_live: u64 = 0;
    let mut len_live: u64 = 0;
    for (doc, n) in super::held::of(conn).documents(ns) {
        match delta::decode(&n.terms, n.len) {
            Some(terms) => live.entry(doc).or_default().push(Found {
                place: "the transaction's held documents".into(),
                len: n.len,
                created: n.created,
                full: Fingerprint::of(&terms).full.0,
            }),
            None => problems.push(format!("document {doc}: corrupt held document")),
        }
        n_live += 1;
        len_live += u64::from(n.len);
    }
    for d in &delta_rows {
        if let Some(n) = &d.new {
            match delta::decode(&n.terms, n.len) {
                Some(terms) => live.entry(d.doc).or_default().push(Found {
                    place: "the delta".into(),
                    len: n.len,
                    created: n.created,
                    full: Fingerprint::of(&terms).full.0,
                }),
                None => problems.push(format!("document {}: corrupt delta row", d.doc)),
            }
        }
        if let Some(o) = &d.old {
            match delta::decode_term_set(&o.terms) {
                Some(set) => {
                    pending.insert((o.seg_no, o.ord), (o.len, set_hash(&set), d.doc));
                }
                None => problems.push(format!("document {}: corrupt deletion row", d.doc)),
            }
        }
    }
    for row in store::segments(conn, ns)? {
        let name = format!("segment {}", row.seg_no);
        match check_segment(conn, &row, &pending, &mut tick) {
            Ok(seg) => {
                problems.extend(seg.problems.into_iter().map(|p| format!("{name}: {p}")));
                for (key, f) in seg.live {
                    n_live += 1;
                    len_live += u64::from(f.len);
                    live.entry(key).or_default().push(f);
                }
            }
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    for d in &delta_rows {
        if let Some(n) = &d.new {
            n_live += 1;
            len_live += u64::from(n.len);
        }
    }
    let mut want: BTreeMap<i64, (&str, i64)> = BTreeMap::new();
    for (k, t, c) in expected {
        if want.insert(*k, (t.as_str(), *c)).is_some() {
            problems.push(format!(
                "document {k}: listed twice in the expected documents"
            ));
        }
    }
    let mut exp_len: u64 = 0;
    for (k, (text, created)) in &want {
        tick.ticks(64, || conn.check_interrupt())?;
        let a = delta::analyze(text);
        exp_len += u64::from(a.len);
        let found = live.remove(k).unwrap_or_default();
        match found.as_slice() {
            [] => problems.push(format!("document {k}: missing from the index")),
            [f] => {
                if f.created != *created {
                    problems.push(format!(
                        "document {k}: stale created_at in {} ({}, expected {created})",
                        f.place, f.created
                    ));
                }
                if f.len != a.len {
                    problems.push(format!(
                        "document {k}: stale length in {} ({}, expected {})",
                        f.place, f.len, a.len
                    ));
                }
                if f.full != Fingerprint::of(&a).full.0 {
                    problems.push(format!("document {k}: stale tokens in {}", f.place));
                }
            }
            many => problems.push(format!(
                "document {k}: live {} times ({})",
                many.len(),
                many.iter()
                    .map(|f| f.place.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    for (k, fs) in live {
        for f in fs {
            problems.push(format!("document {k}: in {} but not in the table", f.place));
        }
    }
    if n_live != want.len() as u64 || len_live != exp_len {
        problems.push(format!(
            "statistics: {n_live} documents of total length {len_live}, expected {} of {exp_len}",
            want.len()
        ));
    }
    Ok(problems)
}

struct SegmentCheck {
    problems: Vec<String>,
    live: Vec<(i64, Found)>,
}

fn check_segment(
    conn: &mut dyn Conn,
    row: &store::SegRow,
    pending: &HashMap<(i64, u32), (u32, u64, i64)>,
    tick: &mut Ticker,
) -> Result<SegmentCheck> {
    let mut problems = Vec::new();
    let seg =
        store::header(conn, row)?.ok_or_else(|| Error::internal("vanished while checking"))?;
    let dead = store::dead(conn, row)?.ok_or_else(|| Error::internal("vanished while checking"))?;
    let h = seg.header.clone();
    let mut window = store::Readahead::default();
    let mut src = StoredPages::sequential(conn, row, &mut window, 64);
    // Documents.
    let n = h.doc_count as usize;
    let mut keys = Vec::with_capacity(n);
    let mut lens = Vec::with_capacity(n);
    let mut created = Vec::with_capacity(n);
    for p in 0..h.doc_pages {
        let page = seg.doc_page(&mut src, p)?;
        keys.extend(page.keys);
        lens.extend(page.lens);
        created.extend(page.created);
    }
    if keys.len() != n || keys.windows(2).any(|w| w[0] >= w[1]) {
        return Err(corrupt("document keys"));
    }
    if lens.iter().map(|&l| u64::from(l)).sum::<u64>() != h.total_len
        || keys.first().copied().unwrap_or(0) != h.min_key
        || keys.last().copied().unwrap_or(0) != h.max_key
        || row.doc_count != i64::from(h.doc_count)
    {
        problems.push("header disagrees with its document pages".into());
    }
    if dead.ords.iter().any(|&o| o as usize >= n)
        || dead.len
            != dead
                .ords
                .iter()
                .map(|&o| u64::from(lens[o as usize]))
                .sum::<u64>()
        || row.dead_count != dead.ords.len() as i64
    {
        problems.push("deletion set disagrees with the documents".into());
    }
    // Postings, by term: a fingerprint per document and the deleted documents per term.
    let mut prints = vec![Fingerprint::new(); n];
    let mut terms_seen: u64 = 0;
    let mut postings_seen: u64 = 0;
    let mut prev_term: Option<Vec<u8>> = None;
    let mut dead_counts: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    for p in 0..h.dict_pages {
        let page = src.page(page_no(Area::Dict, p))?;
        for (t, info) in read_dict_page(&page)? {
            tick.tick(|| src.check_interrupt())?;
            terms_seen += 1;
            if prev_term.as_ref().is_some_and(|p| *p >= t) {
                problems.push("dictionary terms not ascending".into());
            }
            let mut c = seg.cursor(&mut src, &info)?;
            let mut df = 0u32;
            let mut ndead = 0u32;
            while c.doc() != END {
                let o = c.doc() as usize;
                if o >= n {
                    return Err(corrupt("postings ordinal"));
                }
                df += 1;
                let ps = c.positions().to_vec();
                if ps.len() as u32 != c.tf() {
                    return Err(corrupt("positions"));
                }
                prints[o].add(&t, &ps);
                if dead.is_dead(o as u32) {
                    ndead += 1;
                }
                c.next(&mut src)?;
            }
            postings_seen += u64::from(df);
            if df != info.bounds.df {
                problems.push(format!(
                    "term {}: df {} but {df} postings",
                    String::from_utf8_lossy(&t),
                    info.bounds.df
                ));
            }
            if ndead > 0 {
                dead_counts.insert(t.clone(), ndead);
            }
            prev_term = Some(t);
        }
    }
    if terms_seen != h.n_terms {
        problems.push("header term count disagrees with the dictionary".into());
    }
    if postings_seen != h.n_postings {
        problems.push("header postings count disagrees with the dictionary".into());
    }
    let recorded: BTreeMap<Vec<u8>, u32> = dead.terms.iter().cloned().collect();
    if recorded != dead_counts {
        problems.push("per-term deletion counts disagree with the postings".into());
    }
    let mut live = Vec::new();
    for o in 0..n {
        let ord = o as u32;
        if let Some((plen, pset, doc)) = pending.get(&(row.seg_no, ord)) {
            if dead.is_dead(ord) {
                problems.push(format!("document {doc}: deleted twice"));
            }
            if *plen != lens[o] || *pset != prints[o].set.0 || *doc != keys[o] {
                problems.push(format!(
                    "document {doc}: its pending deletion does not match the segment"
                ));
            }
            continue;
        }
        if dead.is_dead(ord) {
            continue;
        }
        live.push((
            keys[o],
            Found {
                place: format!("segment {}", row.seg_no),
                len: lens[o],
                created: created[o],
                full: prints[o].full.0,
            },
        ));
    }
    Ok(SegmentCheck { problems, live })
}
