//! A path as a closure row stores it: its ends are the row's key (the nodes' integer `seq`),
//! and one small binary column holds the rest — per hop its edge type and weight, and the
//! keys of the nodes between the hops. Rows so keyed are a fraction of the width of rows that
//! spell node ids out, and a file's nodes, written together, have neighbouring keys, so the
//! rows one edge adds for an ancestor share pages.
//!
//! The bytes, hop by hop: one byte for the hop — its low 7 bits the edge type's place in
//! [`KNOWN_TYPES`] plus one, or 0 for a type spelled out next (its length as a varint, then its
//! UTF-8 bytes), its high bit set when the weight is not the usual 1, the `f64`'s 8
//! little-endian bytes then following — and, between two hops, the next node's key (a zigzag
//! varint). A hop of a common type and weight 1 is one byte. Both databases store the same
//! bytes.

use super::bound;
use super::path::{EdgeType, Path, KNOWN_TYPES};
use std::borrow::Cow;
use crate::{Error, Result};

/// The high bit of a hop's byte: a weight other than 1 follows.
const WEIGHTED: u8 = 0x80;

/// A stored path: its nodes' keys, first to last, with the type and weight of each hop.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) type Stored = Path<i64>;

impl Stored {
    pub(crate) fn first(&self) -> i64 {
        self.nodes[0]
    }

    pub(crate) fn last(&self) -> i64 {
        self.nodes[self.nodes.len() - 1]
    }

    /// The hops column of this path.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.types.len() * 12);
        for (i, (ty, w)) in self.types.iter().zip(&self.weights).enumerate() {
            if i > 0 {
                varint(&mut out, zigzag(self.nodes[i]));
            }
            let known = KNOWN_TYPES.iter().position(|k| *k == ty).map_or(0, |k| k as u8 + 1);
            let weighted = if *w == 1.0 { 0 } else { WEIGHTED };
            out.push(known | weighted);
            if known == 0 {
                varint(&mut out, ty.len() as u64);
                out.extend_from_slice(ty.as_bytes());
            }
            if weighted != 0 {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        out
    }

    /// The path of a row from `first` to `last`, `depth` hops, whose hops column is `hops`.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn decode(first: i64, last: i64, depth: usize, hops: &[u8]) -> Result<Stored> {
        // The stored depth sizes the lists (bounded: the row is not trusted yet).
        let hint = depth.min(bound::MAX_DEPTH);
        let mut s = Stored {
            nodes: Vec::with_capacity(hint + 1),
            types: Vec::with_capacity(hint),
            weights: Vec::with_capacity(hint),
        };
        append(first, last, depth, hops, &mut s.nodes, &mut s.types, Some(&mut s.weights))?;
        Ok(s)
    }
}

/// Appends the path of a row (as [`Stored::decode`] reads it) to `nodes`, `types` and, when
/// given, `weights`: the lists of one path, or of many paths laid end to end. Nothing is
/// appended when the row is malformed.
pub(crate) fn append(
    first: i64,
    last: i64,
    depth: usize,
    hops: &[u8],
    nodes: &mut Vec<i64>,
    types: &mut Vec<EdgeType>,
    mut weights: Option<&mut Vec<f64>>,
) -> Result<()> {
    let bad = || Error::internal("mem_graph_closure holds a malformed hops column");
    let marks = (nodes.len(), types.len(), weights.as_ref().map_or(0, |w| w.len()));
    let mut r = Reader { bytes: hops, at: 0 };
    let mut read = || -> Result<()> {
        nodes.push(first);
        let mut count = 0;
        loop {
            let hop = *r.take(1).ok_or_else(bad)?.first().ok_or_else(bad)?;
            let ty = match usize::from(hop & !WEIGHTED) {
                0 => {
                    let len = usize::try_from(r.varint().ok_or_else(bad)?).map_err(|_| bad())?;
                    let ty = r.take(len).ok_or_else(bad)?;
                    Cow::Owned(std::str::from_utf8(ty).map_err(|_| bad())?.to_owned())
                }
                k => Cow::Borrowed(*KNOWN_TYPES.get(k - 1).ok_or_else(bad)?),
            };
            types.push(ty);
            count += 1;
            let weight = if hop & WEIGHTED == 0 {
                1.0
            } else {
                f64::from_le_bytes(r.take(8).ok_or_else(bad)?.try_into().map_err(|_| bad())?)
            };
            if let Some(w) = weights.as_deref_mut() {
                w.push(weight);
            }
            if r.at == hops.len() {
                break;
            }
            nodes.push(unzigzag(r.varint().ok_or_else(bad)?));
        }
        if count != depth {
            return Err(bad());
        }
        nodes.push(last);
        Ok(())
    };
    let outcome = read();
    if outcome.is_err() {
        nodes.truncate(marks.0);
        types.truncate(marks.1);
        if let Some(w) = weights {
            w.truncate(marks.2);
        }
    }
    outcome
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.take(1)?.first()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip() {
        for s in [
            Stored {
                nodes: vec![7, 9],
                types: vec!["imports".into()],
                weights: vec![1.0],
            },
            Stored {
                nodes: vec![1, -5, i64::MAX, i64::MIN, 300],
                types: vec!["calls".into(), "é".into(), "x".repeat(300).into(), "uses".into()],
                weights: vec![2.5, 1.0, 1e-9, 1e9],
            },
        ] {
            let bytes = s.encode();
            let (first, last) = (s.nodes[0], *s.nodes.last().unwrap());
            let back = Stored::decode(first, last, s.types.len(), &bytes).unwrap();
            assert_eq!(back, s);
        }
        let common = Stored {
            nodes: vec![1, 2, 3],
            types: vec!["imports".into(), "calls".into()],
            weights: vec![1.0, 1.0],
        };
        assert_eq!(common.encode().len(), 3, "a common hop is one byte");
    }

    #[test]
    fn malformed_columns_are_errors() {
        let good = Stored {
            nodes: vec![1, 2, 3],
            types: vec!["a".into(), "imports".into()],
            weights: vec![1.0, 3.0],
        }
        .encode();
        for cut in 0..good.len() {
            assert!(Stored::decode(1, 3, 2, &good[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Stored::decode(1, 3, 2, &good).is_ok());
        assert!(Stored::decode(1, 3, 1, &good).is_err());
        assert!(Stored::decode(1, 3, 1, &[0, 1, b'a', 7]).is_err());
        assert!(Stored::decode(1, 3, 1, &[0, 2, 0xff, 0xfe]).is_err());
        assert!(Stored::decode(1, 3, 1, &[KNOWN_TYPES.len() as u8 + 1]).is_err());
    }
}
