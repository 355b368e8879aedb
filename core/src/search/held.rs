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
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// One change to the held set.
enum Entry {
    /// A new version of a document (its first, or one replacing a held one).
    Put {
        ns: u8,
        doc: i64,
        version: NewVersion,
    },
    /// A held document that was deleted again before it was written.
    Drop { ns: u8, doc: i64 },
    /// A held document now in the index's tables (written, or rebuilt by a reindex).
    Stored { ns: u8, doc: i64 },
}

impl Entry {
    fn key(&self) -> (u8, i64) {
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
/// is, and where each open savepoint began (its id, the log's length and `pushed` then).
#[derive(Default)]
struct Held {
    namespaces: Vec<String>,
    log: Vec<Entry>,
    last: HashMap<(u8, i64), usize>,
    marks: Vec<(u64, usize, usize)>,
    /// Analysed bytes of the versions in the log, replaced ones included: what the held
    /// amount is measured by, in constant time.
    pushed: usize,
}

impl Held {
    fn ns_id(&mut self, ns: &str) -> u8 {
        match self.find_ns(ns) {
            Some(i) => i,
            None => {
                self.namespaces.push(ns.to_owned());
                (self.namespaces.len() - 1) as u8
            }
        }
    }

    fn find_ns(&self, ns: &str) -> Option<u8> {
        self.namespaces
            .iter()
            .position(|n| n == ns)
            .map(|i| i as u8)
    }

    fn push(&mut self, e: Entry) {
        self.pushed += e.bytes();
        self.last.insert(e.key(), self.log.len());
        self.log.push(e);
    }

    fn live(&self, key: (u8, i64)) -> Option<&NewVersion> {
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
        let mut earlier: HashMap<(u8, i64), ()> = HashMap::new();
        for e in &self.log[..from] {
            earlier.insert(e.key(), ());
        }
        let tail: Vec<(u8, i64, bool)> = self
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

static HELD: Mutex<Option<HashMap<usize, Held>>> = Mutex::new(None);

fn all() -> MutexGuard<'static, Option<HashMap<usize, Held>>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on what the connection holds, if anything.
fn existing<T>(conn: usize, f: impl FnOnce(&mut Held) -> T) -> Option<T> {
    all().as_mut().and_then(|m| m.get_mut(&conn)).map(f)
}

/// Holds a new version of `doc` (replacing a held one).
pub fn hold(conn: usize, ns: &str, doc: i64, version: NewVersion) {
    let mut g = all();
    let h = g.get_or_insert_with(HashMap::new).entry(conn).or_default();
    let ns = h.ns_id(ns);
    h.push(Entry::Put { ns, doc, version });
}

/// Whether `doc` is held (a version not yet written).
pub fn holds(conn: usize, ns: &str, doc: i64) -> bool {
    existing(conn, |h| {
        h.find_ns(ns).is_some_and(|n| h.live((n, doc)).is_some())
    })
    .unwrap_or(false)
}

/// Drops a held document; `false` when it was not held.
pub fn drop_held(conn: usize, ns: &str, doc: i64) -> bool {
    existing(conn, |h| {
        let Some(n) = h.find_ns(ns).filter(|&n| h.live((n, doc)).is_some()) else {
            return false;
        };
        h.push(Entry::Drop { ns: n, doc });
        true
    })
    .unwrap_or(false)
}

/// Analysed bytes held since the innermost open savepoint began, versions replaced since
/// included: about what [`take_top`] would write.
pub fn top_bytes(conn: usize) -> usize {
    existing(conn, |h| h.pushed - h.top().1).unwrap_or(0)
}

/// Analysed bytes the connection holds, over all its savepoint levels, versions replaced
/// since included.
pub fn total_bytes(conn: usize) -> usize {
    existing(conn, |h| h.pushed).unwrap_or(0)
}

/// Whether the connection holds any document.
pub fn any(conn: usize) -> bool {
    existing(conn, |h| {
        h.last
            .values()
            .any(|&i| matches!(h.log[i], Entry::Put { .. }))
    })
    .unwrap_or(false)
}

/// The documents held in `ns`, in key order: (doc, version).
pub fn documents(conn: usize, ns: &str) -> Vec<(i64, NewVersion)> {
    existing(conn, |h| {
        h.live_from(0)
            .into_iter()
            .find(|(n, _)| n == ns)
            .map(|(_, docs)| docs)
            .unwrap_or_default()
    })
    .unwrap_or_default()
}

/// The namespaces the connection holds documents of.
pub fn namespaces(conn: usize) -> Vec<String> {
    existing(conn, |h| {
        h.live_from(0).into_iter().map(|(ns, _)| ns).collect()
    })
    .unwrap_or_default()
}

/// Everything the connection holds, by namespace, each in key order, for the writes of a
/// committing transaction; nothing is held afterwards.
pub fn take_all(conn: usize) -> Vec<(String, Vec<(i64, NewVersion)>)> {
    let held = all().as_mut().and_then(|m| m.remove(&conn));
    held.map(|h| h.live_from(0)).unwrap_or_default()
}

/// What the connection held since the innermost open savepoint began, for a write before
/// the commit (see the module's documentation); it leaves the held set.
pub fn take_top(conn: usize) -> Vec<(String, Vec<(i64, NewVersion)>)> {
    existing(conn, |h| {
        let (top, _) = h.top();
        let docs = h.live_from(top);
        h.compact_from(top);
        docs
    })
    .unwrap_or_default()
}

/// Every held document of `ns` is now in the index's tables (a reindex rebuilt them from
/// the table rows, which hold them too).
pub fn stored(conn: usize, ns: &str) {
    existing(conn, |h| {
        let Some(n) = h.find_ns(ns) else {
            return;
        };
        let live: Vec<i64> = h
            .last
            .iter()
            .filter(|&(&(ns, _), &i)| ns == n && matches!(h.log[i], Entry::Put { .. }))
            .map(|(&(_, doc), _)| doc)
            .collect();
        for doc in live {
            h.push(Entry::Stored { ns: n, doc });
        }
    });
}

/// Forgets everything the connection holds (its transaction ended, or it closed).
pub fn discard(conn: usize) {
    if let Some(m) = all().as_mut() {
        m.remove(&conn);
    }
}

/// Savepoint `id` begins (ids grow with nesting; one that begins again ends those after it).
pub fn savepoint(conn: usize, id: u64) {
    existing(conn, |h| {
        h.marks.retain(|&(m, _, _)| m < id);
        let mark = (id, h.log.len(), h.pushed);
        h.marks.push(mark);
    });
}

/// Rolls back to where savepoint `id` began; the savepoint stays open.
pub fn rollback_to(conn: usize, id: u64) {
    existing(conn, |h| {
        // A savepoint without a mark began while nothing was held: everything came after it.
        let (at, pushed) = h
            .marks
            .iter()
            .find(|&&(m, _, _)| m == id)
            .map_or((0, 0), |&(_, at, pushed)| (at, pushed));
        if at < h.log.len() {
            h.log.truncate(at);
            h.pushed = pushed;
            h.reindex();
        }
        h.marks.retain(|&(m, _, _)| m <= id);
    });
}

/// Ends savepoint `id` (and those nested in it), keeping what they held.
pub fn release(conn: usize, id: u64) {
    existing(conn, |h| h.marks.retain(|&(m, _, _)| m < id));
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

    fn docs(conn: usize) -> Vec<(i64, u32)> {
        documents(conn, "msg")
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
        let c = 0x5eed_0001;
        hold(c, "msg", 1, v(1));
        savepoint(c, 1);
        hold(c, "msg", 2, v(2));
        assert!(drop_held(c, "msg", 1));
        savepoint(c, 2);
        hold(c, "msg", 3, v(3));
        hold(c, "msg", 2, v(4));
        assert_eq!(docs(c), [(2, 4), (3, 3)]);
        rollback_to(c, 2);
        assert_eq!(docs(c), [(2, 2)]);
        assert!(!holds(c, "msg", 1) && holds(c, "msg", 2));
        rollback_to(c, 1);
        assert_eq!(docs(c), [(1, 1)]);
        hold(c, "msg", 5, v(5));
        release(c, 1);
        rollback_to(c, 1); // no longer open: back to the start
        assert_eq!(docs(c), []);
        hold(c, "msg", 6, v(6));
        assert_eq!(lens(take_all(c)), [(6, 6)]);
        assert!(!any(c));
    }

    #[test]
    fn an_early_write_takes_the_innermost_level_only() {
        let c = 0x5eed_0004;
        hold(c, "msg", 1, v(1));
        hold(c, "msg", 2, v(2));
        savepoint(c, 7);
        hold(c, "msg", 1, v(10)); // replaces an outer one
        hold(c, "msg", 3, v(3));
        assert!(drop_held(c, "msg", 2));
        assert_eq!(top_bytes(c), 13);
        assert_eq!(total_bytes(c), 16);
        assert_eq!(lens(take_top(c)), [(1, 10), (3, 3)]);
        // 1 is stored now, 2 dropped: neither is written again; nothing else is held.
        assert_eq!(docs(c), []);
        assert!(!holds(c, "msg", 1) && !holds(c, "msg", 2));
        // Rolling back the savepoint undoes the write in the database and brings the outer
        // level back.
        rollback_to(c, 7);
        assert_eq!(docs(c), [(1, 1), (2, 2)]);
        release(c, 7);
        assert_eq!(lens(take_top(c)), [(1, 1), (2, 2)]);
        assert!(!any(c));
        discard(c);
    }

    #[test]
    fn a_reindex_stores_what_is_held() {
        let c = 0x5eed_0005;
        hold(c, "msg", 1, v(1));
        savepoint(c, 1);
        stored(c, "msg");
        assert!(!holds(c, "msg", 1));
        rollback_to(c, 1);
        assert!(holds(c, "msg", 1));
        discard(c);
    }

    #[test]
    fn connections_are_apart() {
        let (a, b) = (0x5eed_0002, 0x5eed_0003);
        hold(a, "msg", 1, v(1));
        assert!(holds(a, "msg", 1) && !holds(b, "msg", 1));
        assert!(!drop_held(b, "msg", 1));
        discard(a);
        assert!(!any(a));
    }
}
