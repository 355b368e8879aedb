//! What every derived structure must say, checked against the base rows: the search index
//! (`mem_index_check()`), the thread counters (recounted from the messages) and the blocked
//! state of tasks (a naive walk over the dependency rows). The random-sequence and crash tests
//! run it after every step and every kill.

use crate::backend::{Backend, Cell};
use std::collections::{BTreeMap, BTreeSet};

/// The first column of every row, as integers.
pub fn ints(db: &mut dyn Backend, sql: &str) -> Vec<i64> {
    db.query(sql, &[])
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| match &r[0] {
            Cell::Int(i) => *i,
            Cell::Text(t) => t.parse().unwrap_or(-1),
            Cell::Null => 0,
            other => panic!("{sql}: {other:?}"),
        })
        .collect()
}

/// The first column of every row, as text.
pub fn strings(db: &mut dyn Backend, sql: &str) -> Vec<String> {
    db.query(sql, &[])
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| r[0].to_string())
        .collect()
}

/// Panics, naming `context`, unless the index, the counters and the blocked state agree with
/// the base rows.
pub fn check(db: &mut dyn Backend, context: &str) {
    let problems = strings(db, "SELECT * FROM mem_index_check()");
    assert!(problems.is_empty(), "{context}: index: {problems:?}");
    let wrong = ints(
        db,
        "SELECT count(*) FROM mem_threads t WHERE message_count <> (SELECT count(*) FROM mem_messages m WHERE m.thread_id = t.id) \
         OR token_count <> (SELECT coalesce(sum(token_count), 0) FROM mem_messages m WHERE m.thread_id = t.id) \
         OR next_message_index <= (SELECT coalesce(max(message_index), -1) FROM mem_messages m WHERE m.thread_id = t.id)",
    );
    assert_eq!(wrong, [0], "{context}: thread counters");
    let mut status: BTreeMap<String, String> = BTreeMap::new();
    for r in db.query("SELECT id, status FROM mem_tasks", &[]).unwrap() {
        status.insert(r[0].to_string(), r[1].to_string());
    }
    let deps: Vec<(String, String, String)> = db
        .query(
            "SELECT task_id, depends_on_id, type FROM mem_task_deps",
            &[],
        )
        .unwrap()
        .into_iter()
        .map(|r| (r[0].to_string(), r[1].to_string(), r[2].to_string()))
        .collect();
    fn blocked(
        t: &str,
        status: &BTreeMap<String, String>,
        deps: &[(String, String, String)],
        seen: &mut BTreeSet<String>,
    ) -> bool {
        if !seen.insert(t.to_owned()) {
            return false;
        }
        deps.iter().any(|(a, b, ty)| {
            a == t
                && ((ty == "blocks" && status.get(b).is_some_and(|s| s != "closed"))
                    || (ty == "parent-child" && blocked(b, status, deps, seen)))
        })
    }
    for r in db
        .query("SELECT id, is_blocked FROM mem_tasks", &[])
        .unwrap()
    {
        let id = r[0].to_string();
        let want = blocked(&id, &status, &deps, &mut BTreeSet::new());
        assert_eq!(
            r[1].to_string() == "1",
            want,
            "{context}: blocked state of {id}"
        );
    }
}
