//! A least-recently-used map bounded by the bytes its values weigh: the building block of
//! every cache of the search index.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// A cache's size and use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheStats {
    pub entries: usize,
    pub bytes: usize,
    pub limit: usize,
    pub hits: u64,
    pub misses: u64,
}

/// A least-recently-used map with a bound on the bytes its values weigh.
///
/// A hit only stamps its entry with the time: searches hit the caches once per page they
/// touch, so a hit must not reorder anything. The recency order (`order`) is brought up to
/// date when something is evicted: its oldest record whose entry was used since is moved to
/// that use, and the first record that is still its entry's last use is the least recently
/// used entry.
pub(crate) struct Lru<K, V> {
    map: HashMap<K, Slot<V>, foldhash::fast::RandomState>,
    order: BTreeMap<u64, K>,
    bytes: usize,
    limit: usize,
    tick: u64,
    hits: u64,
    misses: u64,
}

/// An entry: its value and weight, its last use, and the time `order` files it under.
struct Slot<V> {
    value: V,
    weight: usize,
    used: u64,
    filed: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    pub(crate) fn new(limit: usize) -> Self {
        Lru {
            map: HashMap::default(),
            order: BTreeMap::new(),
            bytes: 0,
            limit,
            tick: 0,
            hits: 0,
            misses: 0,
        }
    }

    pub(crate) fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        match self.map.get_mut(k) {
            Some(slot) => {
                slot.used = self.tick;
                self.hits += 1;
                Some(slot.value.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Inserts `v` weighing `weight` bytes, evicting the least recently used above the bound.
    pub(crate) fn put(&mut self, k: K, v: V, weight: usize) {
        self.tick += 1;
        let tick = self.tick;
        let slot = Slot {
            value: v,
            weight,
            used: tick,
            filed: tick,
        };
        if let Some(old) = self.map.insert(k.clone(), slot) {
            self.order.remove(&old.filed);
            self.bytes -= old.weight;
        }
        self.order.insert(tick, k);
        self.bytes += weight;
        self.shrink();
    }

    fn shrink(&mut self) {
        while self.bytes > self.limit {
            let Some((filed, key)) = self.order.pop_first() else {
                break;
            };
            let Some(slot) = self.map.get_mut(&key) else {
                continue;
            };
            if slot.used != filed {
                slot.filed = slot.used;
                self.order.insert(slot.used, key);
            } else {
                self.bytes -= slot.weight;
                self.map.remove(&key);
            }
        }
    }

    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        self.shrink();
    }

    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.bytes = 0;
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.map.len(),
            bytes: self.bytes,
            limit: self.limit,
            hits: self.hits,
            misses: self.misses,
        }
    }
}
