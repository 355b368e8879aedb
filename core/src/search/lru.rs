//! A least-recently-used map bounded by the bytes its values weigh: the building block of
//! every cache of the search index.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// A cache's size and use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: usize,
    pub bytes: usize,
    pub limit: usize,
    pub hits: u64,
    pub misses: u64,
}

/// A least-recently-used map with a bound on the bytes its values weigh.
pub struct Lru<K, V> {
    map: HashMap<K, (V, usize, u64)>,
    order: BTreeMap<u64, K>,
    bytes: usize,
    limit: usize,
    tick: u64,
    hits: u64,
    misses: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    pub fn new(limit: usize) -> Self {
        Lru {
            map: HashMap::new(),
            order: BTreeMap::new(),
            bytes: 0,
            limit,
            tick: 0,
            hits: 0,
            misses: 0,
        }
    }

    pub fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        match self.map.get_mut(k) {
            Some((v, _, t)) => {
                self.order.remove(t);
                *t = tick;
                self.order.insert(tick, k.clone());
                self.hits += 1;
                Some(v.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Inserts `v` weighing `weight` bytes, evicting the least recently used above the bound.
    pub fn put(&mut self, k: K, v: V, weight: usize) {
        self.tick += 1;
        let tick = self.tick;
        if let Some((_, w, t)) = self.map.insert(k.clone(), (v, weight, tick)) {
            self.order.remove(&t);
            self.bytes -= w;
        }
        self.order.insert(tick, k);
        self.bytes += weight;
        self.shrink();
    }

    fn shrink(&mut self) {
        while self.bytes > self.limit {
            let Some((_, key)) = self.order.pop_first() else {
                break;
            };
            if let Some((_, w, _)) = self.map.remove(&key) {
                self.bytes -= w;
            }
        }
    }

    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        self.shrink();
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.bytes = 0;
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.map.len(),
            bytes: self.bytes,
            limit: self.limit,
            hits: self.hits,
            misses: self.misses,
        }
    }
}
