//! Fresh writes: a document's tokens as stored in its `mem_idx_docs` row until a flush moves
//! it into a segment.
//!
//! Payload: `varint n_terms`, then per term (ascending): `varint len, bytes, varint tf,
//! tf × varint position delta`.

use super::postings::{get_varint, put_varint};
use super::tokenizer::tokenize;

/// A document's terms (ascending) with their positions, and its length in tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocTerms {
    pub len: u32,
    pub terms: Vec<(String, Vec<u32>)>,
}

/// Tokenizes a document.
pub fn analyze(text: &str) -> DocTerms {
    let mut tokens = tokenize(text);
    let len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
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

pub fn encode(doc: &DocTerms) -> Vec<u8> {
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
pub fn decode(buf: &[u8], len: u32) -> Option<DocTerms> {
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

/// One term of a payload, without decoding its positions: the term, its tf and its positions
/// as stored (delta varints, the same encoding as a segment's positions stream).
pub struct RawTerm<'a> {
    pub term: &'a [u8],
    pub tf: u32,
    pub positions: &'a [u8],
}

/// The terms of a payload with the checks of [`decode`] (terms ascending and UTF-8, tf ≥ 1,
/// positions within u32, nothing left over); `None` when it is malformed.
pub fn raw_terms(buf: &[u8]) -> Option<Vec<RawTerm<'_>>> {
    let mut p = 0;
    let n = get_varint(buf, &mut p)?;
    let mut out: Vec<RawTerm<'_>> = Vec::with_capacity(n.min(1 << 16) as usize);
    for _ in 0..n {
        let l = get_varint(buf, &mut p)? as usize;
        let term = buf.get(p..p.checked_add(l)?)?;
        p += l;
        std::str::from_utf8(term).ok()?;
        if let Some(prev) = out.last() {
            if prev.term >= term {
                return None;
            }
        }
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
        out.push(RawTerm {
            term,
            tf: tf as u32,
            positions: &buf[start..p],
        });
    }
    if p != buf.len() {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trips() {
        let d = analyze("fix LoginSchema in src/auth/login.ts, login again");
        assert_eq!(
            d.len as usize,
            tokenize("fix LoginSchema in src/auth/login.ts, login again").len()
        );
        assert_eq!(decode(&encode(&d), d.len), Some(d.clone()));
        let enc = encode(&d);
        let raw = raw_terms(&enc).unwrap();
        assert_eq!(raw.len(), d.terms.len());
        for (r, (t, ps)) in raw.iter().zip(&d.terms) {
            assert_eq!(r.term, t.as_bytes());
            assert_eq!(r.tf as usize, ps.len());
        }
        assert!(raw_terms(&[5, 1]).is_none());
        assert_eq!(decode(&[5, 1], 0), None);
        assert_eq!(decode(&[], 0), None);
    }
}
