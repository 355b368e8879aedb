//! An encoding's merge ranks, and the token count of one pre-tokenized piece.
//!
//! The tables ship as each token's two parts, a pair of lower ranks (written by `build.rs`):
//! 0.9 MB for o200k_base where a prebuilt encoder takes 32 MB. The first count of a process
//! joins the parts into one buffer of every token's bytes and indexes them in one
//! open-addressing table of `u32` slots (see [`Ranks`]), a few milliseconds: a general hash
//! map of byte slices took four times as long to build, most of it faulting in and missing the
//! cache on a table of 12 MB.
//!
//! A piece is counted as tiktoken encodes it: start from its bytes and merge, again and
//! again, the adjacent pair whose joined bytes have the lowest rank (the leftmost of equal
//! ones), until no joined pair is a token. Short pieces scan their pairs for each merge; a
//! heap of candidate pairs makes a long piece (a minified line, base64) `O(n log n)` in its
//! length.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;
use std::sync::OnceLock;

/// Pieces up to this many bytes are merged in place by scanning; longer ones through a heap.
const SHORT: usize = 64;

/// The bytes a token's part is copied in when it is no longer, as it unpacks.
const COPY: usize = 16;

/// Bits of a slot that hold a rank (plus one; 0 is an empty slot): room for 262,143 tokens.
const RANK_BITS: u32 = 18;
const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// An encoding's tokens by their bytes.
///
/// `slots` is a power-of-two table, at most half full, probed linearly from a token's hash:
/// each slot holds the token's rank plus one in its low [`RANK_BITS`] and the top bits of its
/// hash above them, so a probe compares bytes only when those bits agree. `tokens` has each
/// rank's place in the joined bytes and its length (`offset << 8 | len`).
pub(crate) struct Ranks {
    bytes: &'static [u8],
    tokens: Vec<u32>,
    slots: Vec<u32>,
    hasher: foldhash::fast::FixedState,
}

impl Ranks {
    /// The ranks of the table `packed` (the layout `build.rs` writes), built once per process
    /// into `cell`.
    pub(crate) fn of(cell: &'static OnceLock<Ranks>, packed: &[u8]) -> &'static Ranks {
        cell.get_or_init(|| Ranks::unpack(packed))
    }

    fn unpack(packed: &[u8]) -> Ranks {
        // The table was written by this crate's build: its parts are where its header says,
        // each pair names two earlier tokens, and the bytes fit the places' 24-bit offsets,
        // or the build is broken.
        let word = |at: usize| u32::from_le_bytes(packed[at..at + 4].try_into().expect("4 bytes"));
        let (n, total, bits) = (word(0) as usize, word(4) as usize, u32::from(packed[8]));
        let (singles, pairs) = packed[9..].split_at(256);
        assert!(total < 1 << 24, "the embedded token table fits 24-bit offsets");
        // The buffer runs `COPY` bytes past the table, so that a part of at most `COPY` bytes
        // is copied as `COPY` bytes: a copy of a fixed size compiles to a load and a store,
        // where a copy of the part's own length calls `memmove` (two calls a token: a fifth
        // of the build). What a copy writes past its part is overwritten by the next part,
        // or cut off at the end.
        let mut bytes = Vec::with_capacity(total + COPY);
        bytes.resize(total + COPY, 0);
        bytes[..256].copy_from_slice(singles);
        let mut tokens: Vec<u32> = Vec::with_capacity(n);
        tokens.extend((0..256).map(|rank| rank << 8 | 1));
        let mask = (1u64 << bits) - 1;
        let mut end = 256;
        for pair in 0..n - 256 {
            let bit = pair * 2 * bits as usize;
            let at = bit / 8;
            let word = u64::from_le_bytes(pairs[at..at + 8].try_into().expect("8 bytes")) >> (bit % 8);
            let start = end;
            for part in [word & mask, word >> bits & mask] {
                let place = tokens[part as usize];
                let (from, len) = ((place >> 8) as usize, (place & 0xff) as usize);
                if len <= COPY {
                    bytes.copy_within(from..from + COPY, end);
                } else {
                    bytes.copy_within(from..from + len, end);
                }
                end += len;
            }
            tokens.push((start << 8 | (end - start)) as u32);
        }
        assert_eq!(end, total, "the embedded token table unpacks");
        bytes.truncate(total);
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        assert!(tokens.len() < RANK_MASK as usize, "the embedded token table fits the slots");
        // Zeros written, not a zeroed allocation: the probes below read a slot before they
        // write it, and a page first read maps the shared zero page, so each first write
        // would copy it and flush the TLB of every core running one of the process's threads.
        let n = (tokens.len() * 2).next_power_of_two();
        let mut slots = Vec::with_capacity(n);
        slots.resize(n, 0);
        let mut ranks = Ranks {
            bytes,
            slots,
            tokens: Vec::new(),
            hasher: foldhash::fast::FixedState::default(),
        };
        let mask = ranks.slots.len() - 1;
        let homes = tokens
            .iter()
            .enumerate()
            .map(|(rank, &t)| {
                let h = ranks.hasher.hash_one(token(bytes, t));
                ((h as usize & mask) as u32, tag(h) | (rank as u32 + 1))
            })
            .collect();
        for (home, slot) in by_region(homes, ranks.slots.len()) {
            let mut i = home as usize;
            while ranks.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            ranks.slots[i] = slot;
        }
        ranks.tokens = tokens;
        ranks
    }

    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let h = self.hasher.hash_one(bytes);
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot & !RANK_MASK == tag(h) {
                let rank = (slot & RANK_MASK) - 1;
                if token(self.bytes, self.tokens[rank as usize]) == bytes {
                    return Some(rank);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The number of tokens `piece` encodes to.
    pub(crate) fn count(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 || self.rank(piece).is_some() {
            return piece.len().min(1);
        }
        if piece.len() <= SHORT {
            self.count_short(piece)
        } else {
            self.count_long(piece)
        }
    }

    /// [`Ranks::count`] for a short piece (most words and identifiers), in place on the stack:
    /// each merge scans the pairs for the lowest rank.
    fn count_short(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // (first byte, rank of the pair it starts) of each part, and the end.
        let mut parts = [(0u32, u32::MAX); SHORT + 1];
        for (i, p) in parts.iter_mut().enumerate().take(n + 1) {
            p.0 = i as u32;
        }
        let mut len = n + 1;
        let rank_at = |parts: &[(u32, u32)], len: usize, i: usize| -> u32 {
            if i + 2 < len {
                self.rank(&piece[parts[i].0 as usize..parts[i + 2].0 as usize])
                    .unwrap_or(u32::MAX)
            } else {
                u32::MAX
            }
        };
        for i in 0..n - 1 {
            parts[i].1 = rank_at(&parts, len, i);
        }
        loop {
            let (mut best, mut at) = (u32::MAX, 0);
            for (i, p) in parts[..len - 1].iter().enumerate() {
                if p.1 < best {
                    (best, at) = (p.1, i);
                }
            }
            if best == u32::MAX {
                return len - 1;
            }
            parts.copy_within(at + 2..len, at + 1);
            len -= 1;
            parts[at].1 = rank_at(&parts, len, at);
            if at > 0 {
                parts[at - 1].1 = rank_at(&parts, len, at - 1);
            }
        }
    }

    /// [`Ranks::count`] for a long piece: a heap of the candidate pairs.
    fn count_long(&self, piece: &[u8]) -> usize {
        // The parts of the piece as a list, each named by its first byte: `next[i]` is where
        // the part after it starts (its end), `prev[i]` where the one before it starts.
        let n = piece.len();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        // The rank of the pair that starts at each part, as last computed (none for a part
        // merged away): a heap entry is stale when it differs.
        let mut pair = vec![u32::MAX; n];
        let mut heap = BinaryHeap::with_capacity(n);
        let pair_rank = |next: &[usize], i: usize| -> Option<u32> {
            let j = next[i];
            (j < n).then(|| self.rank(&piece[i..next[j]])).flatten()
        };
        for (i, p) in pair.iter_mut().enumerate().take(n - 1) {
            if let Some(r) = pair_rank(&next, i) {
                *p = r;
                heap.push(Reverse((r, i)));
            }
        }
        let mut parts = n;
        while let Some(Reverse((r, i))) = heap.pop() {
            if pair[i] != r {
                continue;
            }
            // Merge the part at i with the next one.
            let j = next[i];
            pair[j] = u32::MAX;
            next[i] = next[j];
            if next[i] < n {
                prev[next[i]] = i;
            }
            parts -= 1;
            for k in [i, prev[i]] {
                if k < n {
                    pair[k] = match pair_rank(&next, k) {
                        Some(r) => {
                            heap.push(Reverse((r, k)));
                            r
                        }
                        None => u32::MAX,
                    };
                }
            }
        }
        parts
    }
}

/// Regions of the table the tokens are placed by: few enough that each has a write position
/// in the cache, many enough that a region's slots fit in it.
const REGIONS: usize = 1024;

/// `(home slot, slot)` pairs ordered by their home's region of a table of `len` slots (a
/// counting sort), so that the table is written front to back. Placed in rank order, each
/// token wrote a random slot of a 2 MB table: a cache miss apiece, most of the build. Linear
/// probing finds a token whatever order the tokens were placed in.
fn by_region(homes: Vec<(u32, u32)>, len: usize) -> Vec<(u32, u32)> {
    let shift = len.trailing_zeros().saturating_sub(REGIONS.trailing_zeros());
    let mut starts = vec![0usize; REGIONS + 1];
    for &(home, _) in &homes {
        starts[(home >> shift) as usize + 1] += 1;
    }
    for r in 1..=REGIONS {
        starts[r] += starts[r - 1];
    }
    let mut out = vec![(0, 0); homes.len()];
    for (home, slot) in homes {
        let next = &mut starts[(home >> shift) as usize];
        out[*next] = (home, slot);
        *next += 1;
    }
    out
}

/// The bytes of the token placed at `place` (see [`Ranks`]).
fn token(bytes: &[u8], place: u32) -> &[u8] {
    let at = (place >> 8) as usize;
    &bytes[at..at + (place & 0xff) as usize]
}

/// The top bits of a hash, where a slot keeps them.
fn tag(hash: u64) -> u32 {
    ((hash >> (64 - (32 - RANK_BITS))) as u32) << RANK_BITS
}

#[cfg(test)]
mod tests {
    use crate::tokens::Encoding;
    use proptest::prelude::*;

    /// Every token is found at its rank (its place in the shipped table).
    #[test]
    fn every_token_is_found_at_its_rank() {
        for e in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let r = e.ranks();
            for (rank, &place) in r.tokens.iter().enumerate() {
                assert_eq!(r.rank(super::token(r.bytes, place)), Some(rank as u32));
            }
        }
    }

    /// Each rank's bytes, joined from its two parts, are tiktoken's bytes of that rank.
    #[test]
    fn every_token_joins_to_tiktokens_bytes() {
        let refs = [
            (Encoding::O200kBase, tiktoken_rs::o200k_base_singleton()),
            (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton()),
        ];
        for (e, bpe) in refs {
            let r = e.ranks();
            for (rank, &place) in r.tokens.iter().enumerate() {
                let theirs = bpe.decode_bytes(&[rank as u32]).expect("a rank of the encoding");
                assert_eq!(super::token(r.bytes, place), theirs, "{e:?} rank {rank}");
            }
        }
    }

    /// The rank of the tokens by their bytes, as a general map holds them.
    fn reference(e: Encoding) -> std::collections::HashMap<&'static [u8], u32> {
        let r = e.ranks();
        r.tokens
            .iter()
            .enumerate()
            .map(|(rank, &place)| (super::token(r.bytes, place), rank as u32))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any bytes, token or not, have the rank a general map gives them.
        #[test]
        fn lookups_agree_with_a_map(bytes in proptest::collection::vec(
            proptest::sample::select(b"ab e_0\n\xc3\xa9\xff".to_vec()), 1..12)) {
            static MAPS: std::sync::OnceLock<[std::collections::HashMap<&'static [u8], u32>; 2]> =
                std::sync::OnceLock::new();
            let maps = MAPS.get_or_init(|| [
                reference(Encoding::O200kBase),
                reference(Encoding::Cl100kBase),
            ]);
            for (e, map) in [Encoding::O200kBase, Encoding::Cl100kBase].into_iter().zip(maps) {
                prop_assert_eq!(e.ranks().rank(&bytes), map.get(bytes.as_slice()).copied());
            }
        }

        /// Both ways of merging give the same count, on pieces around the length where
        /// one hands over to the other.
        #[test]
        fn short_and_long_pieces_merge_alike(piece in proptest::collection::vec(
            proptest::sample::select(b"aabbe eth_-0\xc3\xa9".to_vec()), 2..65)) {
            for e in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let r = e.ranks();
                if piece.len() <= super::SHORT {
                    prop_assert_eq!(r.count_short(&piece), r.count_long(&piece));
                }
            }
        }
    }
}
