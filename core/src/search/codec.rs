//! Variable-length integers, and a reader over stored bytes that names what was corrupt.

use crate::{Error, Result};

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`; `None` when the buffer ends or the varint is too long.
#[inline]
pub(crate) fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    // Most values of a postings block (ordinal deltas, frequencies, positions) take one byte.
    let b = *buf.get(*pos)?;
    if b < 0x80 {
        *pos += 1;
        return Some(u64::from(b));
    }
    get_varint_long(buf, pos)
}

fn get_varint_long(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if shift >= 64 {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
    }
}

pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A term with prefix compression: the bytes it shares with the previous term, then the rest.
pub(crate) fn put_term(out: &mut Vec<u8>, prev: &[u8], term: &[u8]) {
    let shared = prev.iter().zip(term).take_while(|(a, b)| a == b).count();
    put_varint(out, shared as u64);
    put_varint(out, (term.len() - shared) as u64);
    out.extend_from_slice(&term[shared..]);
}

/// The error of stored bytes that do not decode.
pub(crate) fn corrupt(what: &str) -> Error {
    Error::internal(format!(
        "search index is corrupt ({what}); run mem_reindex()"
    ))
}

/// Reads stored bytes in order; every failure is [`corrupt`] naming the field.
pub(crate) struct Reader<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub(crate) fn varint(&mut self, what: &str) -> Result<u64> {
        get_varint(self.buf, &mut self.pos).ok_or_else(|| corrupt(what))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        u32::try_from(self.varint(what)?).map_err(|_| corrupt(what))
    }

    pub(crate) fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(unzigzag(self.varint(what)?))
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(|| corrupt(what))?;
        let b = self.buf.get(self.pos..end).ok_or_else(|| corrupt(what))?;
        self.pos = end;
        Ok(b)
    }

    pub(crate) fn magic(&mut self, m: &[u8; 4], what: &str) -> Result<()> {
        if self.bytes(4, what)? != m {
            return Err(corrupt(what));
        }
        Ok(())
    }

    /// A prefix-compressed term after `prev` (see [`put_term`]), written into `term`.
    pub(crate) fn term(&mut self, term: &mut Vec<u8>, what: &str) -> Result<()> {
        let shared = self.varint(what)? as usize;
        let n = self.varint(what)? as usize;
        if shared > term.len() {
            return Err(corrupt(what));
        }
        let rest = self.bytes(n, what)?;
        term.truncate(shared);
        term.extend_from_slice(rest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_terms_round_trip() {
        let mut b = Vec::new();
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            put_varint(&mut b, v);
        }
        let mut p = 0;
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(get_varint(&b, &mut p), Some(v));
        }
        assert_eq!(get_varint(&b, &mut p), None);
        assert_eq!(get_varint(&[0xff; 20], &mut 0), None);
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        let mut out = Vec::new();
        put_term(&mut out, b"login", b"loginschema");
        put_term(&mut out, b"loginschema", b"logout");
        let mut r = Reader::new(&out);
        let mut t = b"login".to_vec();
        r.term(&mut t, "t").unwrap();
        assert_eq!(t, b"loginschema");
        r.term(&mut t, "t").unwrap();
        assert_eq!(t, b"logout");
        assert!(r.at_end());
    }
}
