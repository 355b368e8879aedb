//! The documents deleted from a segment: their ordinals, their total length and, per term,
//! how many of them held it — so that N, avgdl and every document frequency stay exact while
//! the postings still hold them (a merge drops them later). Stored beside the segment
//! (`mem_idx_segments.dead`) under a random version, rewritten when a flush records more.

use crate::search::codec::{corrupt, put_term, put_varint, Reader};
use crate::Result;

const MAGIC: &[u8; 4] = b"AMD1";

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Dead {
    /// Deleted ordinals, ascending.
    pub ords: Vec<u32>,
    /// Their total length in tokens.
    pub len: u64,
    /// Per term (ascending), how many deleted documents hold it.
    pub terms: Vec<(Vec<u8>, u32)>,
}

impl Dead {
    pub(crate) fn is_dead(&self, ord: u32) -> bool {
        self.ords.binary_search(&ord).is_ok()
    }

    /// Deleted documents holding `term`.
    pub(crate) fn count(&self, term: &[u8]) -> u32 {
        self.terms
            .binary_search_by(|(t, _)| t.as_slice().cmp(term))
            .map_or(0, |i| self.terms[i].1)
    }

    /// These deletions plus more: `(ordinal, length, the document's distinct terms)`.
    /// Ordinals already dead are ignored.
    pub(crate) fn with(&self, more: &[(u32, u32, Vec<Vec<u8>>)]) -> Dead {
        let mut out = self.clone();
        let mut counts: std::collections::BTreeMap<Vec<u8>, u32> =
            self.terms.iter().cloned().collect();
        for (ord, len, terms) in more {
            if let Err(i) = out.ords.binary_search(ord) {
                out.ords.insert(i, *ord);
                out.len += u64::from(*len);
                for t in terms {
                    *counts.entry(t.clone()).or_default() += 1;
                }
            }
        }
        out.terms = counts.into_iter().collect();
        out
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(16 + self.ords.len() * 2 + self.terms.len() * 8);
        o.extend_from_slice(MAGIC);
        put_varint(&mut o, self.ords.len() as u64);
        let mut prev = 0u32;
        for &d in &self.ords {
            put_varint(&mut o, u64::from(d - prev));
            prev = d;
        }
        put_varint(&mut o, self.len);
        put_varint(&mut o, self.terms.len() as u64);
        let mut prev: &[u8] = &[];
        for (t, n) in &self.terms {
            put_term(&mut o, prev, t);
            put_varint(&mut o, u64::from(*n));
            prev = t;
        }
        o
    }

    pub(crate) fn decode(buf: &[u8]) -> Result<Dead> {
        if buf.is_empty() {
            return Ok(Dead::default());
        }
        let mut r = Reader::new(buf);
        r.magic(MAGIC, "deletions")?;
        let n = r.varint("deleted count")?;
        if n > buf.len() as u64 {
            return Err(corrupt("deleted count"));
        }
        let mut d = Dead::default();
        let mut prev = 0u32;
        for i in 0..n {
            let delta = r.u32("deleted ordinal")?;
            if i > 0 && delta == 0 {
                return Err(corrupt("deleted ordinals"));
            }
            prev = prev
                .checked_add(delta)
                .ok_or_else(|| corrupt("deleted ordinal"))?;
            d.ords.push(prev);
        }
        d.len = r.varint("deleted length")?;
        let nt = r.varint("deleted terms")?;
        if nt > buf.len() as u64 {
            return Err(corrupt("deleted terms"));
        }
        let mut t = Vec::new();
        for _ in 0..nt {
            r.term(&mut t, "deleted term")?;
            let c = r.u32("deleted term count")?;
            if d.terms.last().is_some_and(|(p, _)| *p >= t) {
                return Err(corrupt("deleted terms order"));
            }
            d.terms.push((t.clone(), c));
        }
        if !r.at_end() {
            return Err(corrupt("deletions trailing bytes"));
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletions_accumulate_and_round_trip() {
        let d = Dead::default().with(&[
            (5, 10, vec![b"a".to_vec(), b"b".to_vec()]),
            (2, 3, vec![b"b".to_vec()]),
        ]);
        let d = d.with(&[(5, 10, vec![b"a".to_vec()]), (9, 1, vec![b"c".to_vec()])]);
        assert_eq!(d.ords, [2, 5, 9]);
        assert_eq!(d.len, 14);
        assert_eq!(
            (d.count(b"a"), d.count(b"b"), d.count(b"c"), d.count(b"z")),
            (1, 2, 1, 0)
        );
        assert!(d.is_dead(5) && !d.is_dead(4));
        assert_eq!(Dead::decode(&d.encode()).unwrap(), d);
        assert_eq!(Dead::decode(&[]).unwrap(), Dead::default());
        assert!(Dead::decode(b"AMD1\x05").is_err());
    }
}
