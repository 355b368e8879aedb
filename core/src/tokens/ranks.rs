//! An encoding's merge ranks, and the token count of one pre-tokenized piece.
//!
//! The tables ship as every token's bytes in rank order, deflated (written by `build.rs`):
//! 1 MB for o200k_base where a prebuilt encoder takes 32 MB. The first count of a process
//! inflates them and builds one hash table from token bytes to rank, in tens of milliseconds.
//!
//! A piece is counted as tiktoken encodes it: start from its bytes and merge, again and
//! again, the adjacent pair whose joined bytes have the lowest rank (the leftmost of equal
//! ones), until no joined pair is a token. Short pieces scan their pairs for each merge; a
//! heap of candidate pairs makes a long piece (a minified line, base64) `O(n log n)` in its
//! length.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::OnceLock;

type Table = HashMap<&'static [u8], u32, foldhash::fast::FixedState>;

/// Pieces up to this many bytes are merged in place by scanning; longer ones through a heap.
const SHORT: usize = 64;

/// An encoding's tokens by their bytes.
pub(crate) struct Ranks {
    table: Table,
}

impl Ranks {
    /// The ranks of the deflated table `packed`, built once per process into `cell`.
    pub(crate) fn of(cell: &'static OnceLock<Ranks>, packed: &[u8]) -> &'static Ranks {
        cell.get_or_init(|| Ranks::inflate(packed))
    }

    fn inflate(packed: &[u8]) -> Ranks {
        // The table was written by this crate's build: it inflates, or the build is broken.
        let bytes: &'static [u8] = Box::leak(
            miniz_oxide::inflate::decompress_to_vec(packed)
                .expect("the embedded token table inflates")
                .into_boxed_slice(),
        );
        let mut table = Table::with_capacity_and_hasher(bytes.len() / 6, Default::default());
        let mut at = 0;
        while at < bytes.len() {
            let len = bytes[at] as usize;
            table.insert(&bytes[at + 1..at + 1 + len], table.len() as u32);
            at += 1 + len;
        }
        Ranks { table }
    }

    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.table.get(bytes).copied()
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

#[cfg(test)]
mod tests {
    use crate::tokens::Encoding;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
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
