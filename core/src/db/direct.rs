//! Row writes without a statement, for the calls an agent makes once per message.
//!
//! A one-row `INSERT` or `UPDATE` has a fixed cost on Postgres that is larger than the write:
//! the executor starts, every `CHECK` expression and trigger condition of the table is read
//! back from its stored text and planned again, the triggers are called, the foreign key is
//! checked by a statement of its own. Where the core has already done what those checks and
//! triggers would do, it says so in a [`Vouch`], and a host that can (Postgres) writes the
//! tuple and its index entries directly. The host writes only when the vouch covers
//! everything the statement would have run, so anything a user added to the table — a
//! trigger, a check, a policy — sends the write back to its statement.

/// What a direct write of `table` stands in for: the statement's checks and triggers whose
/// work the caller has done, by name. A host writes directly only when every `CHECK` of the
/// table, every trigger that fires on the write and every foreign key whose trigger fires is
/// named here.
#[derive(Debug)]
pub struct Vouch {
    /// The table written, as the core's statements name it.
    pub table: &'static str,
    /// The statement replaced: a new row, or new values for an existing one.
    pub write: Write,
    /// `CHECK` constraints the written values satisfy.
    pub checks: &'static [&'static str],
    /// Triggers whose work is done or not needed.
    pub triggers: &'static [&'static str],
    /// Foreign keys that hold without their check: the referenced row is locked by the same
    /// call, or the key columns do not change.
    pub foreign_keys: &'static [&'static str],
}

/// The statement a direct write replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    Insert,
    Update,
}

/// A read of one index's rows without a statement ([`crate::Conn::scan_directly`]): the rows
/// of `table` whose leading `index` columns equal `equal`, and whose next column is at least
/// `from` when it is given, or whose next columns equal each key of `each` in turn, in the
/// index's order.
#[derive(Debug)]
pub struct Scan<'a> {
    pub table: &'static str,
    pub index: &'static str,
    pub equal: &'a [crate::Value],
    pub from: Option<crate::Value>,
    /// Keys for the columns after `equal`, read one after the other in one scan (a lookup of
    /// several rows by key); `from` is not used with them.
    pub each: Option<Each<'a>>,
    /// The columns shown for each row.
    pub columns: &'static [&'static str],
    /// The table is written only where the core then says so ([`crate::Conn::table_changed`]):
    /// the host may keep the rows it read until then.
    pub kept: bool,
}

/// The keys of a [`Scan`] that looks rows up one key after the other: `width` values each,
/// for the index's columns after the scan's `equal` ones, laid end to end.
#[derive(Clone, Copy, Debug)]
pub struct Each<'a> {
    pub width: usize,
    pub keys: &'a [crate::Value],
}

impl<'a> Each<'a> {
    /// Keys of one column each.
    pub fn single(keys: &'a [crate::Value]) -> Each<'a> {
        Each { width: 1, keys }
    }

    /// The keys cut into runs a host may read as ranges, one pass of the index from a run's
    /// first key to its last, when they are integers of one column in ascending order: each
    /// key at most `gap` past the one before it joins that one's run. `None` for other keys,
    /// or when no two keys share a run.
    ///
    /// A node's neighbours were mostly written together and hold nearly consecutive keys. A
    /// B-tree that descends from its root for every key (Postgres 15's) reads such keys
    /// faster in one pass that passes over the few rows between them.
    pub fn runs(&self, gap: i64) -> Option<Vec<&'a [crate::Value]>> {
        if self.width != 1 {
            return None;
        }
        let ints = self
            .keys
            .iter()
            .map(|k| match k {
                crate::Value::Int(i) => Some(*i),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>()?;
        let mut runs = Vec::new();
        let mut start = 0;
        for i in 1..=ints.len() {
            if i < ints.len() && ints[i] <= ints[i - 1] {
                return None;
            }
            if i == ints.len() || ints[i] > ints[i - 1].saturating_add(gap) {
                runs.push(&self.keys[start..i]);
                start = i;
            }
        }
        (runs.len() < ints.len()).then_some(runs)
    }
}

#[cfg(test)]
mod tests {
    use super::Each;
    use crate::Value;

    fn runs(keys: &[i64], gap: i64) -> Option<Vec<Vec<i64>>> {
        let keys: Vec<Value> = keys.iter().map(|&k| Value::Int(k)).collect();
        Each::single(&keys).runs(gap).map(|runs| {
            runs.iter()
                .map(|r| r.iter().map(|v| v.as_i64().unwrap()).collect())
                .collect()
        })
    }

    #[test]
    fn close_keys_share_a_run() {
        assert_eq!(
            runs(&[1, 2, 3, 9, 12, 30], 4),
            Some(vec![vec![1, 2, 3], vec![9, 12], vec![30]])
        );
        assert_eq!(runs(&[5, 6], 1), Some(vec![vec![5, 6]]));
        assert_eq!(
            runs(&[i64::MIN, 0, 1, i64::MAX], 4),
            Some(vec![vec![i64::MIN], vec![0, 1], vec![i64::MAX]])
        );
    }

    #[test]
    fn keys_that_gain_nothing_or_are_not_ascending_have_no_runs() {
        assert_eq!(runs(&[1, 10, 20], 4), None);
        assert_eq!(runs(&[], 4), None);
        assert_eq!(runs(&[1, 3, 2], 4), None);
        assert_eq!(runs(&[1, 1], 4), None);
        let text = [Value::Text("a".into()), Value::Text("b".into())];
        assert!(Each::single(&text).runs(4).is_none());
        let pairs = [Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)];
        assert!(Each {
            width: 2,
            keys: &pairs
        }
        .runs(4)
        .is_none());
    }
}
