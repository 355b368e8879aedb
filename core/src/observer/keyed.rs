//! One scratchpad table held in memory: its rows by key, which of them changed since the
//! last checkpoint, and which rows the table holds that were evicted since. A checkpoint
//! writes the changed rows and deletes the evicted ones; between checkpoints nothing here
//! costs a statement.

use std::collections::HashMap;
use std::hash::Hash;

/// A row and what a checkpoint owes the table for it.
struct Slot<V> {
    row: V,
    changed: bool,
    stored: bool,
}

pub(crate) struct Keyed<K, V> {
    rows: HashMap<K, Slot<V>>,
    evicted: Vec<K>,
}

impl<K, V> Default for Keyed<K, V> {
    fn default() -> Self {
        Keyed { rows: HashMap::new(), evicted: Vec::new() }
    }
}

impl<K: Eq + Hash + Clone + Ord, V> Keyed<K, V> {
    /// A row read from the table.
    pub(crate) fn stored(&mut self, key: K, row: V) {
        self.rows.insert(key, Slot { row, changed: false, stored: true });
    }

    /// The row of `key` to change, made by `new` when there is none; whether it was made.
    pub(crate) fn upsert(&mut self, key: &K, new: impl FnOnce() -> V) -> (&mut V, bool) {
        let made = !self.rows.contains_key(key);
        let slot = self
            .rows
            .entry(key.clone())
            .or_insert_with(|| Slot { row: new(), changed: true, stored: false });
        slot.changed = true;
        (&mut slot.row, made)
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.rows.get(key).map(|s| &s.row)
    }

    /// The row of `key` to change, when there is one.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let slot = self.rows.get_mut(key)?;
        slot.changed = true;
        Some(&mut slot.row)
    }

    /// Changes the rows `f` answers true for.
    pub(crate) fn update(&mut self, mut f: impl FnMut(&K, &mut V) -> bool) {
        for (k, s) in &mut self.rows {
            if f(k, &mut s.row) {
                s.changed = true;
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn rows(&self) -> impl Iterator<Item = &V> {
        self.rows.values().map(|s| &s.row)
    }

    /// Drops the `n` rows of lowest `rank` (ties by key, so every backend and every replay
    /// drops the same); how many went.
    pub(crate) fn evict<R: Ord>(&mut self, n: usize, rank: impl Fn(&V) -> R) -> usize {
        let mut order: Vec<(R, &K)> = self.rows.iter().map(|(k, s)| (rank(&s.row), k)).collect();
        order.sort();
        let gone: Vec<K> = order.into_iter().take(n).map(|(_, k)| k.clone()).collect();
        for k in &gone {
            if self.rows.remove(k).is_some_and(|s| s.stored) {
                self.evicted.push(k.clone());
            }
        }
        gone.len()
    }

    /// What a checkpoint writes: the stored rows evicted since the last one (deleted first:
    /// a row may have come back since), then the changed rows, sorted by key; all of them
    /// count as stored from now on.
    pub(crate) fn take_changes(&mut self) -> (Vec<K>, Vec<(&K, &V)>) {
        let evicted = std::mem::take(&mut self.evicted);
        let mut changed: Vec<(&K, &V)> = self
            .rows
            .iter_mut()
            .filter(|(_, s)| s.changed)
            .map(|(k, s)| {
                s.changed = false;
                s.stored = true;
                (k, &s.row)
            })
            .collect();
        changed.sort_by(|a, b| a.0.cmp(b.0));
        (evicted, changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_owes_the_changed_rows_and_the_evicted_stored_ones() {
        let mut t: Keyed<&str, i64> = Keyed::default();
        t.stored("a", 5);
        t.stored("b", 1);
        *t.upsert(&"c", || 0).0 += 1;
        assert!(!t.upsert(&"a", || 0).1);
        // b (1) and c (1) are the lowest; b is stored, so its delete is owed.
        assert_eq!(t.evict(2, |v| *v), 2);
        let (evicted, changed) = t.take_changes();
        assert_eq!(evicted, vec!["b"]);
        assert_eq!(changed, vec![(&"a", &5)]);
        let (evicted, changed) = t.take_changes();
        assert!(evicted.is_empty() && changed.is_empty());
    }
}
