//! New documents a transaction holds back from the index's tables until it commits.
//!
//! Writing each new message into the delta as it arrives costs a row write, and the flush
//! that follows reads that row back, decodes it and deletes it (in Postgres the deleted rows
//! also stay behind as dead tuples that every later look at the delta walks over). A
//! transaction that writes many messages can instead keep their analysed terms in memory and
//! write them once, when it commits: as one new segment when there are many, as delta rows
//! otherwise.
//!
//! Only a connection whose host writes what it holds before the transaction commits holds
//! documents (SQLite: the transaction hooks of a virtual table the message triggers write to;
//! Postgres: a deferred trigger, and a commit that fails if it did not run). Searches on that
//! connection see held documents as one more in-memory segment.
//!
//! **Savepoints.** Held documents follow the transaction's savepoints (statement-level ones
//! included): the state is a log of changes, and rolling back to a savepoint cuts the log back
//! to where the savepoint began, as the database undoes its writes. A transaction may also
//! have to write held documents before it commits (it holds too much, or a maintenance call
//! needs the index's tables complete). Only what was held since the innermost open savepoint
//! began is written then ([`take_top`]): a rollback that undoes that write also cuts those
//! entries from the log, while what outer levels hold stays in memory, to be written at the
//! commit or when their own level is innermost again. The written entries leave the log; a
//! document that an outer level also held keeps a small marker (written, or dropped) so that
//! its outer entry is not written a second time.

use super::store::NewVersion;
use crate::db::session::Part;
use crate::Conn;
use std::collections::HashMap;

/// One change to the held set.
enum Entry {
    /// A new version of a document (its first, or one replacing a held one).
    Put {
        ns: u32,
        doc: i64,
        version: NewVersion,
    },
    /// A held document that was deleted again before it was written.
    Drop { ns: u32, doc: i64 },
    /// A held document now in the index's tables (written, or rebuilt by a reindex).
    Stored { ns: u32, doc: i64 },
}

impl Entry {
    fn key(&self) -> (u32, i64) {
        match self {
            Entry::Put { ns, doc, .. } | Entry::Drop { ns, doc } | Entry::Stored { ns, doc } => {
                (*ns, *doc)
            }
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Entry::Put { version, .. } => version.terms.len(),
            _ => 0,
        }
    }
}

/// What one connection holds: the log of changes in order, where each document's last change
/// is, and where each open savepoint began (its id, the log's length and `pushed` then). A
/// part of the connection's session, which drops it when the transaction ends and follows its
/// savepoints.
#[derive(Default)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Held {
    namespaces: Vec<String>,
    /// Each index name's position in `namespaces` (a load may hold many resources' indexes).
    ids: HashMap<String, u32>,
    log: Vec<Entry>,
    last: HashMap<(u32, i64), usize>,
    marks: Vec<(u64, usize, usize)>,
    /// Analysed bytes of the versions in the log, replaced ones included: what the held
    /// amount is measured by, in constant time.
    pushed: usize,
}

impl Held {
    fn ns_id(&mut self, ns: &str) -> u32 {
        match self.find_ns(ns) {
            Some(i) => i,
            None => {
                let id = self.namespaces.len() as u32;
                self.namespaces.push(ns.to_owned());
                self.ids.insert(ns.to_owned(), id);
                id
            }
        }
    }

    fn find_ns(&self, ns: &str) -> Option<u32> {
        self.ids.get(ns).copied()
    }

    fn push(&mut self, e: Entry) {
        self.pushed += e.bytes();
        self.last.insert(e.key(), self.log.len());
        self.log.push(e);
    }

    fn live(&self, key: (u32, i64)) -> Option<&NewVersion> {
        match self.log.get(*self.last.get(&key)?)? {
            Entry::Put { version, .. } => Some(version),
            _ => None,
        }
    }

    /// Where the innermost open savepoint began (0: none is open), and `pushed` then.
    fn top(&self) -> (usize, usize) {
        self.marks
            .last()
            .map_or((0, 0), |&(_, at, pushed)| (at, pushed))
    }

    fn reindex(&mut self) {
        self.last.clear();
        for (i, e) in self.log.iter().enumerate() {
            self.last.insert(e.key(), i);
        }
    }

    /// The live versions whose last change is at or after `from`, by namespace, in key
    /// order.
    fn live_from(&self, from: usize) -> Vec<(String, Vec<(i64, NewVersion)>)> {
        let mut by_ns: Vec<Vec<(i64, NewVersion)>> =
            self.namespaces.iter().map(|_| Vec::new()).collect();
        for (&(ns, doc), &i) in &self.last {
            if let (true, Entry::Put { version, .. }) = (i >= from, &self.log[i]) {
                by_ns[ns as usize].push((doc, version.clone()));
            }
        }
        self.namespaces
            .iter()
            .cloned()
            .zip(by_ns)
            .filter(|(_, docs)| !docs.is_empty())
            .map(|(ns, mut docs)| {
                docs.sort_unstable_by_key(|d| d.0);
                (ns, docs)
            })
            .collect()
    }

    /// Replaces the entries from `from` on, which have just been written, by markers for the
    /// documents an earlier entry also names.
    fn compact_from(&mut self, from: usize) {
        let mut earlier: HashMap<(u32, i64), ()> = HashMap::new();
        for e in &self.log[..from] {
            earlier.insert(e.key(), ());
        }
        let tail: Vec<(u32, i64, bool)> = self
            .last
            .iter()
            .filter(|&(key, &i)| i >= from && earlier.contains_key(key))
            .map(|(&(ns, doc), &i)| (ns, doc, matches!(self.log[i], Entry::Drop { .. })))
            .collect();
        self.log.truncate(from);
        self.pushed = self.top().1;
        for (ns, doc, dropped) in tail {
            self.log.push(if dropped {
                Entry::Drop { ns, doc }
            } else {
                Entry::Stored { ns, doc }
            });
        }
        self.reindex();
    }
}

impl Part for Held {
    /// A committed transaction wrote what it held first (the host's job); nothing is left.
    fn commit(&mut self) {
        *self = Held::default();
    }

    fn rollback(&mut self) {
        *self = Held::default();
    }

    fn savepoint(&mut self, id: u64) {
        self.marks.retain(|&(m, _, _)| m < id);
        let mark = (id, self.log.len(), self.pushed);
        self.marks.push(mark);
    }

    fn release(&mut self, id: u64) {
        self.marks.retain(|&(m, _, _)| m < id);
    }

    fn rollback_to(&mut self, id: u64) {
        // A savepoint without a mark began while nothing was held: everything came after it.
        let (at, pushed) = self
            .marks
            .iter()
            .find(|&&(m, _, _)| m == id)
            .map_or((0, 0), |&(_, at, pushed)| (at, pushed));
        if at < self.log.len() {
            self.log.truncate(at);
            self.pushed = pushed;
            self.reindex();
        }
        self.marks.retain(|&(m, _, _)| m <= id);
    }
}

/// What the connection holds.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn of(conn: &mut dyn Conn) -> &mut Held {
    conn.session().part::<Held>()
}

impl Held {
    /// Holds a new version of `doc` (replacing a held one).
    pub(crate) fn hold(&mut self, ns: &str, doc: i64, version: NewVersion) {
        let ns = self.ns_id(ns);
        self.push(Entry::Put { ns, doc, version });
    }

    /// Whether `doc` is held (a version not yet written).
    pub(crate) fn holds(&self, ns: &str, doc: i64) -> bool {
        self.find_ns(ns)
            .is_some_and(|n| self.live((n, doc)).is_some())
    }

    /// Drops a held document; `false` when it was not held.
    pub(crate) fn drop_held(&mut self, ns: &str, doc: i64) -> bool {
        let Some(n) = self.find_ns(ns).filter(|&n| self.live((n, doc)).is_some()) else {
            return false;
        };
        self.push(Entry::Drop { ns: n, doc });
        true
    }

    /// Analysed bytes held since the innermost open savepoint began, versions replaced since
    /// included: about what [`Held::take_top`] would write.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn top_bytes(&self) -> usize {
        self.pushed - self.top().1
    }

    /// Analysed bytes held over all savepoint levels, versions replaced since included.
    pub(crate) fn total_bytes(&self) -> usize {
        self.pushed
    }

    /// Whether any document is held.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn any(&self) -> bool {
        self.last
            .values()
            .any(|&i| matches!(self.log[i], Entry::Put { .. }))
    }

    /// The documents held in `ns`, in key order: (doc, version).
    pub(crate) fn documents(&self, ns: &str) -> Vec<(i64, NewVersion)> {
        self.live_from(0)
            .into_iter()
            .find(|(n, _)| n == ns)
            .map(|(_, docs)| docs)
            .unwrap_or_default()
    }

    /// The namespaces documents are held of.
    pub(crate) fn namespaces(&self) -> Vec<String> {
        self.live_from(0).into_iter().map(|(ns, _)| ns).collect()
    }

    /// Everything held, by namespace, each in key order, for the writes of a committing
    /// transaction; nothing is held afterwards.
    pub(crate) fn take_all(&mut self) -> Vec<(String, Vec<(i64, NewVersion)>)> {
        std::mem::take(self).live_from(0)
    }

    /// What was held since the innermost open savepoint began, for a write before the commit
    /// (see the module's documentation); it leaves the held set.
    pub(crate) fn take_top(&mut self) -> Vec<(String, Vec<(i64, NewVersion)>)> {
        let (top, _) = self.top();
        let docs = self.live_from(top);
        self.compact_from(top);
        docs
    }

    /// Every held document of `ns` is now in the index's tables (a reindex rebuilt them from
    /// the table rows, which hold them too).
    pub(crate) fn stored(&mut self, ns: &str) {
        let Some(n) = self.find_ns(ns) else {
            return;
        };
        let live: Vec<i64> = self
            .last
            .iter()
            .filter(|&(&(ns, _), &i)| ns == n && matches!(self.log[i], Entry::Put { .. }))
            .map(|(&(_, doc), _)| doc)
            .collect();
        for doc in live {
            self.push(Entry::Stored { ns: n, doc });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u32) -> NewVersion {
        NewVersion {
            len: n,
            created: 0,
            terms: vec![0; n as usize],
        }
    }

    fn docs(h: &Held) -> Vec<(i64, u32)> {
        h.documents("msg")
            .into_iter()
            .map(|(d, v)| (d, v.len))
            .collect()
    }

    fn lens(taken: Vec<(String, Vec<(i64, NewVersion)>)>) -> Vec<(i64, u32)> {
        taken
            .into_iter()
            .flat_map(|(_, d)| d)
            .map(|(d, v)| (d, v.len))
            .collect()
    }

    #[test]
    fn savepoints_cut_the_log_back() {
        let mut h = Held::default();
        h.hold("msg", 1, v(1));
        h.savepoint(1);
        h.hold("msg", 2, v(2));
        assert!(h.drop_held("msg", 1));
        h.savepoint(2);
        h.hold("msg", 3, v(3));
        h.hold("msg", 2, v(4));
        assert_eq!(docs(&h), [(2, 4), (3, 3)]);
        h.rollback_to(2);
        assert_eq!(docs(&h), [(2, 2)]);
        assert!(!h.holds("msg", 1) && h.holds("msg", 2));
        h.rollback_to(1);
        assert_eq!(docs(&h), [(1, 1)]);
        h.hold("msg", 5, v(5));
        h.release(1);
        h.rollback_to(1); // no longer open: back to the start
        assert_eq!(docs(&h), []);
        h.hold("msg", 6, v(6));
        assert_eq!(lens(h.take_all()), [(6, 6)]);
        assert!(!h.any());
    }

    #[test]
    fn an_early_write_takes_the_innermost_level_only() {
        let mut h = Held::default();
        h.hold("msg", 1, v(1));
        h.hold("msg", 2, v(2));
        h.savepoint(7);
        h.hold("msg", 1, v(10)); // replaces an outer one
        h.hold("msg", 3, v(3));
        assert!(h.drop_held("msg", 2));
        assert_eq!(h.top_bytes(), 13);
        assert_eq!(h.total_bytes(), 16);
        assert_eq!(lens(h.take_top()), [(1, 10), (3, 3)]);
        // 1 is stored now, 2 dropped: neither is written again; nothing else is held.
        assert_eq!(docs(&h), []);
        assert!(!h.holds("msg", 1) && !h.holds("msg", 2));
        // Rolling back the savepoint undoes the write in the database and brings the outer
        // level back.
        h.rollback_to(7);
        assert_eq!(docs(&h), [(1, 1), (2, 2)]);
        h.release(7);
        assert_eq!(lens(h.take_top()), [(1, 1), (2, 2)]);
        assert!(!h.any());
    }

    #[test]
    fn a_reindex_stores_what_is_held() {
        let mut h = Held::default();
        h.hold("msg", 1, v(1));
        h.savepoint(1);
        h.stored("msg");
        assert!(!h.holds("msg", 1));
        h.rollback_to(1);
        assert!(h.holds("msg", 1));
    }

    #[test]
    fn the_transaction_end_drops_everything() {
        let mut h = Held::default();
        h.hold("msg", 1, v(1));
        h.commit();
        assert!(!h.any());
        h.hold("msg", 2, v(2));
        h.savepoint(3);
        h.rollback();
        assert!(!h.any() && h.marks.is_empty());
    }
}
