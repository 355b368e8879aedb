//! Memos of pure functions of short byte strings, and the seeded hash they and the analysis
//! tables share.
//!
//! Writing a message computes the same small things over and over: the token count of a word
//! or of an indentation run, the stem of a prose word. A [`Memo`] remembers the last two results
//! per pair of slots (`hash(key) mod pairs`): a lookup is one hash and at most two compares of
//! inline bytes, no pointer to follow, and a collision only costs computing the value again,
//! so no input can make it slower than not having it.

/// A hash of `bytes` under a per-process `seed`, so that no input can be written to make
/// its keys share slots.
///
/// The bytes are read as little-endian words of eight, the last one zero-padded. Every term of
/// a message and every statement text goes through here, so the words are loaded whole: a
/// copy into a padded buffer cost a `memcpy` call per word.
pub(crate) fn hash(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().unwrap_or_default()));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        h = mix(h, padded(rest));
    }
    h
}

/// Folds one word into the hash: multiplied by the golden ratio's 64-bit fraction, its high
/// bits folded back into the low ones that index a table.
fn mix(h: u64, word: u64) -> u64 {
    let h = (h ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// One to seven bytes as a zero-padded little-endian word, from two loads that may overlap:
/// an overlapping byte lands on itself, so or-ing them changes nothing.
fn padded(rest: &[u8]) -> u64 {
    let n = rest.len();
    let u32_at = |i: usize| {
        u64::from(u32::from_le_bytes(
            rest[i..i + 4].try_into().unwrap_or_default(),
        ))
    };
    if n >= 4 {
        u32_at(0) | u32_at(n - 4) << (8 * (n - 4))
    } else {
        u64::from(rest[0])
            | u64::from(rest[n / 2]) << (8 * (n / 2))
            | u64::from(rest[n - 1]) << (8 * (n - 1))
    }
}

/// A random seed for [`hash`], new in every process.
pub(crate) fn seed() -> u64 {
    std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0u8) | 1
}

/// A `BuildHasher` over [`hash`], seeded per map: for maps keyed by long text the program
/// wrote itself (SQL statements), where SipHash's cost per byte shows.
#[derive(Clone)]
pub struct FastState(u64);

impl Default for FastState {
    fn default() -> Self {
        FastState(seed())
    }
}

impl std::hash::BuildHasher for FastState {
    type Hasher = FastHasher;

    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.0)
    }
}

/// The hasher of [`FastState`].
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash(self.0, bytes);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A two-way memo of keys up to `N` bytes; longer keys are never remembered. Its slots are
/// allocated on first use.
///
/// A key may live in either slot of its pair, the one used last first: two words that share
/// a pair both stay, where a direct-mapped memo would compute them again in turn (a stem costs
/// as much as several thousand lookups).
pub(crate) struct Memo<const N: usize, V> {
    slots: Vec<Slot<N, V>>,
    count: usize,
    seed: u64,
}

#[derive(Clone, Copy)]
struct Slot<const N: usize, V> {
    len: u8,
    key: [u8; N],
    value: V,
}

impl<const N: usize, V: Copy + Default> Memo<N, V> {
    /// A memo of `count` slots (a power of two, at least two).
    pub(crate) fn new(count: usize) -> Self {
        debug_assert!(count.is_power_of_two() && count >= 2 && N < 256);
        Memo {
            slots: Vec::new(),
            count,
            seed: seed(),
        }
    }

    /// The first slot of the pair `key` lives in.
    fn pair(&self, key: &[u8]) -> usize {
        (hash(self.seed, key) as usize & (self.count / 2 - 1)) * 2
    }

    /// The slot that holds `key`, if one does.
    fn find(&self, key: &[u8]) -> Option<usize> {
        if key.len() > N || self.slots.is_empty() {
            return None;
        }
        let p = self.pair(key);
        (p..p + 2).find(|&i| {
            let s = &self.slots[i];
            usize::from(s.len) == key.len() && &s.key[..key.len()] == key
        })
    }

    /// The value remembered for `key`.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &[u8]) -> Option<V> {
        self.find(key).map(|i| self.slots[i].value)
    }

    /// Remembers `value` for `key` (a key of more than `N` bytes, or an empty one, is not), in
    /// the first slot of its pair; the key that was there moves to the second.
    fn put(&mut self, key: &[u8], value: V) {
        if key.len() > N || key.is_empty() {
            return;
        }
        if self.slots.is_empty() {
            let empty = Slot {
                len: 0,
                key: [0; N],
                value: V::default(),
            };
            self.slots = vec![empty; self.count];
        }
        let p = self.pair(key);
        self.slots[p + 1] = self.slots[p];
        let s = &mut self.slots[p];
        s.len = key.len() as u8;
        s.key[..key.len()].copy_from_slice(key);
        s.value = value;
    }

    /// The value for `key`, computed by `f` and remembered when it was not. A key found in
    /// the second slot of its pair moves to the first.
    pub(crate) fn get_or(&mut self, key: &[u8], f: impl FnOnce() -> V) -> V {
        match self.find(key) {
            Some(i) => {
                if i % 2 == 1 {
                    self.slots.swap(i - 1, i);
                    return self.slots[i - 1].value;
                }
                self.slots[i].value
            }
            None => {
                let v = f();
                self.put(key, v);
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The hash's rule read the simplest way: each run of eight bytes copied into a
    /// zero-padded word.
    fn padded_words_hash(seed: u64, bytes: &[u8]) -> u64 {
        let mut h = seed ^ bytes.len() as u64;
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            h = mix(h, u64::from_le_bytes(w));
        }
        h
    }

    proptest! {
        #[test]
        fn hash_reads_zero_padded_words(
            seed: u64,
            bytes in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            prop_assert_eq!(hash(seed, &bytes), padded_words_hash(seed, &bytes));
        }
    }

    #[test]
    fn remembers_short_keys_only() {
        let mut m: Memo<4, u32> = Memo::new(8);
        assert_eq!(m.get(b"ab"), None);
        m.put(b"ab", 7);
        assert_eq!(m.get(b"ab"), Some(7));
        assert_eq!(m.get(b"abc"), None);
        m.put(b"abcde", 9);
        assert_eq!(m.get(b"abcde"), None);
        let mut calls = 0;
        for _ in 0..3 {
            assert_eq!(
                m.get_or(b"xy", || {
                    calls += 1;
                    5
                }),
                5
            );
        }
        assert_eq!(calls, 1);
        // Two keys of one pair both stay, where one slot would hold only the last.
        let mut two: Memo<4, u32> = Memo::new(2);
        two.put(b"a", 1);
        two.put(b"b", 2);
        assert_eq!((two.get(b"a"), two.get(b"b")), (Some(1), Some(2)));
        assert_eq!(two.get_or(b"a", || 9), 1);
        two.put(b"c", 3);
        assert_eq!(
            (two.get(b"a"), two.get(b"b"), two.get(b"c")),
            (Some(1), None, Some(3)),
            "the key used last stays"
        );
        // Whatever collides, every answer is the function's.
        for i in 0..1000u32 {
            let k = i.to_le_bytes();
            assert_eq!(m.get_or(&k[..3], || i & 0xff_ffff), i & 0xff_ffff);
        }
    }
}
