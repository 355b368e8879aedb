//! The distinct terms of one document while it is analysed, and where each occurs.
//!
//! A message yields a few hundred tokens but far fewer distinct terms. Numbering each term as
//! it first appears (one hash and one compare per token) and sorting only the distinct terms
//! is cheaper than sorting every token by its bytes, which is what indexing a message used to
//! spend most of its analysis on. Positions come in ascending order, so each term's list needs
//! no sort.

/// Terms numbered in order of appearance, with their occurrences.
#[derive(Default)]
pub(crate) struct TermTable {
    /// The distinct terms' bytes, back to back.
    arena: Vec<u8>,
    /// Per term: start and length in `arena`, and its number of occurrences.
    terms: Vec<(u32, u32, u32)>,
    /// Open addressing: slot → term number + 1 (0: empty); its length is a power of two.
    slots: Vec<u32>,
    /// Every occurrence in order: (term number, position).
    occurrences: Vec<(u32, u32)>,
    /// Scratch of [`TermTable::for_each_sorted`]: terms in byte order, each term's first
    /// place in `grouped`, and the positions grouped by term.
    order: Vec<u32>,
    start: Vec<u32>,
    grouped: Vec<u32>,
    seed: u64,
}

/// Slots kept between documents; a table grown larger by a huge document is dropped.
const KEPT_SLOTS: usize = 1 << 14;

impl TermTable {
    /// Empties the table, keeping its memory.
    pub(crate) fn clear(&mut self) {
        self.arena.clear();
        self.terms.clear();
        if self.slots.len() > KEPT_SLOTS {
            self.slots = Vec::new();
        } else {
            self.slots.iter_mut().for_each(|s| *s = 0);
        }
        self.occurrences.clear();
        if self.seed == 0 {
            self.seed = crate::memo::seed();
        }
    }

    fn hash(&self, b: &[u8]) -> u64 {
        crate::memo::hash(self.seed, b)
    }

    fn bytes(&self, t: usize) -> &[u8] {
        let (start, len, _) = self.terms[t];
        &self.arena[start as usize..(start + len) as usize]
    }

    /// Records an occurrence of `term` at `pos` (positions never decrease).
    pub(crate) fn add(&mut self, term: &[u8], pos: u32) {
        if self.slots.len() < 2 * (self.terms.len() + 1) {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.hash(term) as usize & mask;
        let t = loop {
            match self.slots[i] {
                0 => {
                    let t = self.terms.len();
                    self.terms
                        .push((self.arena.len() as u32, term.len() as u32, 0));
                    self.arena.extend_from_slice(term);
                    self.slots[i] = t as u32 + 1;
                    break t;
                }
                s if self.bytes(s as usize - 1) == term => break s as usize - 1,
                _ => i = (i + 1) & mask,
            }
        };
        self.terms[t].2 += 1;
        self.occurrences.push((t as u32, pos));
    }

    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(256);
        self.slots = vec![0; n];
        let mask = n - 1;
        for t in 0..self.terms.len() {
            let mut i = self.hash(self.bytes(t)) as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = t as u32 + 1;
        }
    }

    /// Calls `f(term, positions)` for each distinct term in ascending byte order, its
    /// positions ascending.
    pub(crate) fn for_each_sorted(&mut self, mut f: impl FnMut(&[u8], &[u32])) {
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(0..self.terms.len() as u32);
        sort_by_bytes(&mut order, |t| self.bytes(t as usize));
        // Each term's occurrences, grouped by term: a counting sort, stable.
        self.start.clear();
        let mut next = 0u32;
        for &(_, _, count) in &self.terms {
            self.start.push(next);
            next += count;
        }
        self.grouped.clear();
        self.grouped.resize(self.occurrences.len(), 0);
        for &(t, pos) in &self.occurrences {
            let at = &mut self.start[t as usize];
            self.grouped[*at as usize] = pos;
            *at += 1;
        }
        for &t in &order {
            let (end, n) = (
                self.start[t as usize] as usize,
                self.terms[t as usize].2 as usize,
            );
            f(self.bytes(t as usize), &self.grouped[end - n..end]);
        }
        self.order = order;
    }

    /// Distinct terms recorded.
    pub(crate) fn len(&self) -> usize {
        self.terms.len()
    }

    /// Bytes of all distinct terms.
    pub(crate) fn term_bytes(&self) -> usize {
        self.arena.len()
    }

    /// Occurrences recorded.
    pub(crate) fn occurrences(&self) -> usize {
        self.occurrences.len()
    }
}

/// Sorts term numbers by their terms' bytes. Terms are compared by their first eight bytes as
/// one integer first, and only equal prefixes compare the rest: most comparisons of an
/// analysis or a segment build end there.
pub(crate) fn sort_by_bytes<'a>(ids: &mut [u32], bytes: impl Fn(u32) -> &'a [u8]) {
    let prefix = |b: &[u8]| {
        let mut w = [0u8; 8];
        let n = b.len().min(8);
        w[..n].copy_from_slice(&b[..n]);
        u64::from_be_bytes(w)
    };
    let mut keyed: Vec<(u64, u32)> = ids.iter().map(|&t| (prefix(bytes(t)), t)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| bytes(a.1).cmp(bytes(b.1))));
    for (slot, (_, t)) in ids.iter_mut().zip(keyed) {
        *slot = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn sorts_like_bytes() {
        let words: Vec<&[u8]> = vec![
            b"b",
            b"a",
            b"abcdefghij",
            b"abcdefgh",
            b"abcdefghi",
            b"",
            b"abcdefgh\x00",
            b"zz",
            b"abcdefgz",
            b"\xff",
            b"ab",
        ];
        let mut ids: Vec<u32> = (0..words.len() as u32).collect();
        sort_by_bytes(&mut ids, |t| words[t as usize]);
        let got: Vec<&[u8]> = ids.iter().map(|&t| words[t as usize]).collect();
        let mut want = words.clone();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn groups_like_a_sorted_map() {
        let mut t = TermTable::default();
        for round in 0..3 {
            t.clear();
            let mut want: BTreeMap<Vec<u8>, Vec<u32>> = BTreeMap::new();
            for pos in 0..2000u32 {
                let term = format!("t{}", (pos * 7919 + round) % 613).into_bytes();
                t.add(&term, pos);
                want.entry(term).or_default().push(pos);
            }
            let mut got = Vec::new();
            t.for_each_sorted(|term, ps| got.push((term.to_vec(), ps.to_vec())));
            assert_eq!(got, want.into_iter().collect::<Vec<_>>());
            assert_eq!(t.len(), 613);
            assert_eq!(t.occurrences(), 2000);
        }
    }
}
