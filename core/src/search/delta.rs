//! Fresh writes: a document's tokens as stored in its `mem_idx_delta` row until a flush moves
//! it into a segment, and the distinct terms of a deleted version (exact statistics until the
//! flush records the deletion).
//!
//! Payload: `varint n_terms`, then per term (ascending): `varint len, bytes, varint tf,
//! tf × varint position delta`. Term set: `varint n`, then prefix-compressed terms ascending.

use super::codec::{get_varint, put_term, put_varint, Reader};
use super::term_table::TermTable;
use super::tokenizer::{scan, tokenize, Kind};
use std::collections::HashMap;

/// A document's terms (ascending) with their positions, and its length in tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct DocTerms {
    pub len: u32,
    pub terms: Vec<(String, Vec<u32>)>,
}

/// Tokenizes a document. Its length counts every token but stems.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn analyze(text: &str) -> DocTerms {
    let mut tokens = tokenize(text);
    let stems = tokens.iter().filter(|t| t.kind == Kind::Stem).count();
    let len = u32::try_from(tokens.len() - stems).unwrap_or(u32::MAX);
    // Sorting the tokens groups each term's positions in order without a map.
    tokens.sort_unstable_by(|a, b| a.text.cmp(&b.text).then(a.pos.cmp(&b.pos)));
    let mut terms: Vec<(String, Vec<u32>)> = Vec::new();
    for t in tokens {
        match terms.last_mut() {
            Some((last, ps)) if *last == t.text => ps.push(t.pos),
            _ => terms.push((t.text, vec![t.pos])),
        }
    }
    DocTerms { len, terms }
}

/// [`analyze`] then [`encode`], without building the terms: the path every indexed write
/// takes. Returns the length and the payload.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn analyze_encoded(text: &str) -> (u32, Vec<u8>) {
    TERMS.with(|t| {
        let mut t = t.borrow_mut();
        t.clear();
        let mut len = 0u32;
        scan(text, &mut |term, pos, _, _, kind| {
            if kind != Kind::Stem {
                len = len.saturating_add(1);
            }
            t.add(term.as_bytes(), pos);
        });
        let mut out = Vec::with_capacity(t.term_bytes() + 3 * t.occurrences() + 2 * t.len() + 4);
        put_varint(&mut out, t.len() as u64);
        t.for_each_sorted(|term, positions| {
            put_varint(&mut out, term.len() as u64);
            out.extend_from_slice(term);
            put_varint(&mut out, positions.len() as u64);
            let mut last = 0u32;
            for &p in positions {
                put_varint(&mut out, u64::from(p.saturating_sub(last)));
                last = p;
            }
        });
        (len, out)
    })
}

thread_local! {
    /// The table [`analyze_encoded`] reuses from document to document.
    static TERMS: std::cell::RefCell<TermTable> = std::cell::RefCell::default();
}

#[cfg(any(test, feature = "testing"))]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn encode(doc: &DocTerms) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, doc.terms.len() as u64);
    for (t, ps) in &doc.terms {
        put_varint(&mut out, t.len() as u64);
        out.extend_from_slice(t.as_bytes());
        put_varint(&mut out, ps.len() as u64);
        let mut last = 0u32;
        for &p in ps {
            put_varint(&mut out, u64::from(p.saturating_sub(last)));
            last = p;
        }
    }
    out
}

/// Decodes a payload; `None` when it is malformed.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn decode(buf: &[u8], len: u32) -> Option<DocTerms> {
    let mut p = 0;
    let n = get_varint(buf, &mut p)?;
    let mut terms = Vec::with_capacity(n.min(1 << 16) as usize);
    for _ in 0..n {
        let l = get_varint(buf, &mut p)? as usize;
        let bytes = buf.get(p..p.checked_add(l)?)?;
        p += l;
        let t = std::str::from_utf8(bytes).ok()?.to_owned();
        let tf = get_varint(buf, &mut p)?;
        if tf == 0 || tf > buf.len() as u64 {
            return None;
        }
        let mut ps = Vec::with_capacity(tf as usize);
        let mut last = 0u64;
        for _ in 0..tf {
            last += get_varint(buf, &mut p)?;
            ps.push(u32::try_from(last).ok()?);
        }
        if let Some((prev, _)) = terms.last() {
            if *prev >= t {
                return None;
            }
        }
        terms.push((t, ps));
    }
    if p != buf.len() {
        return None;
    }
    Some(DocTerms { len, terms })
}

/// The distinct terms of a document, as a deletion records them.
pub(crate) fn encode_term_set(doc: &DocTerms) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, doc.terms.len() as u64);
    let mut prev: &[u8] = &[];
    for (t, _) in &doc.terms {
        put_term(&mut out, prev, t.as_bytes());
        prev = t.as_bytes();
    }
    out
}

/// Decodes [`encode_term_set`]; `None` when malformed.
pub(crate) fn decode_term_set(buf: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut r = Reader::new(buf);
    let n = r.varint("term set").ok()?;
    if n > buf.len() as u64 {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut t = Vec::new();
    for _ in 0..n {
        r.term(&mut t, "term set").ok()?;
        if out.last().is_some_and(|p: &Vec<u8>| *p >= t) {
            return None;
        }
        out.push(t.clone());
    }
    r.at_end().then_some(out)
}

/// One term of a payload, without decoding its positions: the term, its tf and its positions
/// as stored (delta varints, the same encoding as a segment's positions stream).
pub(crate) struct RawTerm<'a> {
    pub term: &'a [u8],
    pub tf: u32,
    pub positions: &'a [u8],
}

/// The terms of a payload with the checks of [`decode`] (terms ascending and UTF-8, tf ≥ 1,
/// positions within u32, nothing left over); `None` when it is malformed.
#[cfg(test)]
pub(crate) fn raw_terms(buf: &[u8]) -> Option<Vec<RawTerm<'_>>> {
    let mut out = Vec::new();
    for_each_raw_term(buf, |t| out.push(t))?;
    Some(out)
}

/// Calls `f` with each term of a payload, checked as by [`raw_terms`] (without collecting
/// them: a search's delta keeps few of them); `None` when it is malformed (`f` may have seen
/// some terms).
pub(crate) fn for_each_raw_term<'a>(buf: &'a [u8], mut f: impl FnMut(RawTerm<'a>)) -> Option<()> {
    let mut p = 0;
    let n = get_varint(buf, &mut p)?;
    let mut prev: Option<&[u8]> = None;
    for _ in 0..n {
        let l = get_varint(buf, &mut p)? as usize;
        let term = buf.get(p..p.checked_add(l)?)?;
        p += l;
        std::str::from_utf8(term).ok()?;
        if prev.is_some_and(|pr| pr >= term) {
            return None;
        }
        prev = Some(term);
        let tf = get_varint(buf, &mut p)?;
        if tf == 0 || tf > buf.len() as u64 {
            return None;
        }
        let start = p;
        let mut last = 0u64;
        for _ in 0..tf {
            last += get_varint(buf, &mut p)?;
            if last > u64::from(u32::MAX) {
                return None;
            }
        }
        f(RawTerm {
            term,
            tf: tf as u32,
            positions: &buf[start..p],
        });
    }
    (p == buf.len()).then_some(())
}

/// A document entering a segment from the delta: key, `created_at`, length and payload.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Pending<'a> {
    pub key: i64,
    pub created: i64,
    pub len: u32,
    pub payload: &'a [u8],
}

/// Builds a segment from delta documents (a flush, and the delta a search looks at), copying
/// the stored positions without decoding them (the payload uses the segment's encoding).
/// Only the terms `keep` accepts get postings (a search keeps its own terms); every document
/// counts in the statistics. A key given twice keeps its first entry.
pub(crate) fn build(
    docs: &[Pending<'_>],
    keep: &dyn Fn(&[u8]) -> bool,
    sink: &mut dyn FnMut(u32, &[u8]) -> crate::Result<()>,
) -> crate::Result<super::segment::Header> {
    use super::postings::TermPostings;
    use super::segment::{DocIn, SegmentWriter};
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by_key(|&i| docs[i].key);
    order.dedup_by_key(|i| docs[*i].key);
    let metas: Vec<DocIn> = order
        .iter()
        .map(|&i| DocIn {
            key: docs[i].key,
            len: docs[i].len,
            created: docs[i].created,
        })
        .collect();
    // Every (term, ord) pair, grouped by term: terms are numbered as they come, the distinct
    // ones sorted once, and the pairs placed by a counting sort over the term numbers (the
    // documents come in ord order, so each term's pairs stay in ord order).
    let mut ids: HashMap<&[u8], u32, foldhash::fast::RandomState> = HashMap::default();
    let mut distinct: Vec<&[u8]> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    let mut entries: Vec<(u32, u32, RawTerm<'_>)> = Vec::new();
    for (ord, &i) in order.iter().enumerate() {
        let ok = for_each_raw_term(docs[i].payload, |t| {
            if keep(t.term) {
                let id = *ids.entry(t.term).or_insert_with(|| {
                    distinct.push(t.term);
                    counts.push(0);
                    distinct.len() as u32 - 1
                });
                counts[id as usize] += 1;
                entries.push((id, ord as u32, t));
            }
        });
        if ok.is_none() {
            return Err(crate::Error::internal(format!(
                "search index delta row of document {} is corrupt; run mem_reindex()",
                docs[i].key
            )));
        }
    }
    let mut by_term: Vec<u32> = (0..distinct.len() as u32).collect();
    super::term_table::sort_by_bytes(&mut by_term, |id| distinct[id as usize]);
    let mut start = Vec::with_capacity(distinct.len());
    let mut next = 0u32;
    for &c in &counts {
        start.push(next);
        next += c;
    }
    let mut grouped: Vec<Option<(u32, RawTerm<'_>)>> = (0..entries.len()).map(|_| None).collect();
    for (id, ord, t) in entries {
        let at = &mut start[id as usize];
        grouped[*at as usize] = Some((ord, t));
        *at += 1;
    }
    let mut w = SegmentWriter::new(&metas, sink)?;
    let mut tp = TermPostings::default();
    for id in by_term {
        tp.clear();
        let end = start[id as usize] as usize;
        for (ord, t) in grouped[end - counts[id as usize] as usize..end]
            .iter()
            .flatten()
        {
            tp.push_raw(*ord, t.tf, t.positions);
        }
        w.add_term(distinct[id as usize], &tp)?;
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_encoding_matches() {
        for text in [
            "",
            "fix LoginSchema in src/auth/login.ts, logins again and again",
            "東京タワー naïve Ünïcödé tests testing tested",
            &"word ".repeat(300),
        ] {
            let d = analyze(text);
            assert_eq!(analyze_encoded(text), (d.len, encode(&d)), "{text}");
        }
    }

    #[test]
    fn payload_round_trips() {
        let d = analyze("fix LoginSchema in src/auth/login.ts, logins again");
        let tokens = tokenize("fix LoginSchema in src/auth/login.ts, logins again");
        let stems = tokens.iter().filter(|t| t.kind == Kind::Stem).count();
        assert_eq!(stems, 1); // ~login
        assert_eq!(d.len as usize, tokens.len() - stems);
        assert_eq!(decode(&encode(&d), d.len), Some(d.clone()));
        let enc = encode(&d);
        let raw = raw_terms(&enc).unwrap();
        assert_eq!(raw.len(), d.terms.len());
        for (r, (t, ps)) in raw.iter().zip(&d.terms) {
            assert_eq!(r.term, t.as_bytes());
            assert_eq!(r.tf as usize, ps.len());
        }
        assert!(raw_terms(&[5, 1]).is_none());
        let set = decode_term_set(&encode_term_set(&d)).unwrap();
        assert_eq!(set.len(), d.terms.len());
        assert!(decode_term_set(&[3, 0]).is_none());
        assert_eq!(decode(&[5, 1], 0), None);
        assert_eq!(decode(&[], 0), None);
    }
}
