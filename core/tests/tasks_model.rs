//! Task memory against a naive reference: random sequences of creates, dependency adds and
//! removes, closes, reopens, claims and plain-SQL writes run on a real SQLite database (the
//! system libsqlite3 through rusqlite) with the migrations' triggers calling the core, and
//! after every step the incrementally kept blocked state, `task_ready` and every `isBlocked`
//! must equal a from-scratch graph walk.

mod common;

use agentmem_core::tasks::{ops, query};
use agentmem_core::{Conn, Error, Result};
use common::Sq;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

fn open() -> Sq {
    common::open_with_triggers()
}

fn err_text(e: &Error) -> String {
    e.to_string()
}

// ---------------------------------------------------------------- the reference

#[derive(Debug, Default)]
struct Model {
    status: BTreeMap<String, String>,
    deps: Vec<(String, String, String)>,
    row: HashMap<String, (i64, i64, String, i64, i64, i64, Option<i64>)>,
}

fn load_model(c: &mut Sq) -> Model {
    let mut m = Model::default();
    for r in c
        .query(
            "SELECT id, status, priority, created_at, type, is_blocked, open_blockers, blocked_parents, defer_until FROM mem_tasks",
            &[],
        )
        .unwrap()
    {
        let s = |i: usize| r[i].as_str().unwrap().to_owned();
        let n = |i: usize| r[i].as_i64().unwrap();
        m.status.insert(s(0), s(1));
        m.row.insert(s(0), (n(2), n(3), s(4), n(5), n(6), n(7), r[8].as_i64()));
    }
    for r in c
        .query(
            "SELECT task_id, depends_on_id, type FROM mem_task_deps",
            &[],
        )
        .unwrap()
    {
        let s = |i: usize| r[i].as_str().unwrap().to_owned();
        m.deps.push((s(0), s(1), s(2)));
    }
    m
}

/// Blocked from scratch: an open `blocks` target, or a blocked parent (recursively).
fn reference_blocked(m: &Model) -> BTreeMap<String, bool> {
    fn walk(m: &Model, t: &str, memo: &mut HashMap<String, bool>, depth: usize) -> bool {
        assert!(depth < 10_000, "cycle in the dependency graph at {t}");
        if let Some(&b) = memo.get(t) {
            return b;
        }
        let mut b = false;
        for (task, on, ty) in &m.deps {
            if task != t {
                continue;
            }
            if ty == "blocks" && m.status.get(on).is_some_and(|s| s != "closed") {
                b = true;
            }
            if ty == "parent-child" && m.status.contains_key(on) && walk(m, on, memo, depth + 1) {
                b = true;
            }
        }
        memo.insert(t.to_owned(), b);
        b
    }
    let mut memo = HashMap::new();
    m.status
        .keys()
        .map(|t| (t.clone(), walk(m, t, &mut memo, 0)))
        .collect()
}

fn check(c: &mut Sq, step: &str) {
    let m = load_model(c);
    let blocked = reference_blocked(&m);
    for (t, &b) in &blocked {
        let (_, _, _, is_blocked, ob, bp, _) = m.row[t];
        assert_eq!(is_blocked != 0, b, "{step}: is_blocked of {t}");
        let want_ob = m
            .deps
            .iter()
            .filter(|(x, on, ty)| {
                x == t && ty == "blocks" && m.status.get(on).is_some_and(|s| s != "closed")
            })
            .count() as i64;
        let want_bp = m
            .deps
            .iter()
            .filter(|(x, on, ty)| x == t && ty == "parent-child" && blocked.get(on) == Some(&true))
            .count() as i64;
        assert_eq!((ob, bp), (want_ob, want_bp), "{step}: counters of {t}");
        let show: serde_json::Value = serde_json::from_str(&query::show(c, t).unwrap()).unwrap();
        assert_eq!(
            show["isBlocked"],
            serde_json::json!(b),
            "{step}: isBlocked of {t}"
        );
        let blockers = show["blockingTasks"].as_array().unwrap().len();
        assert_eq!(blockers > 0, b, "{step}: blockingTasks of {t}");
    }
    // Every dependency names existing tasks (deletes cascade).
    for (t, on, _) in &m.deps {
        assert!(
            m.status.contains_key(t) && m.status.contains_key(on),
            "{step}: dangling {t}->{on}"
        );
    }
    let now = 1_000_000;
    let mut want: Vec<(i64, i64, String)> = m
        .status
        .iter()
        .filter(|(t, s)| {
            let r = &m.row[*t];
            *s == "open" && !blocked[*t] && r.2 != "epic" && r.6.is_none_or(|d| d <= now)
        })
        .map(|(t, _)| (m.row[t].0, m.row[t].1, t.clone()))
        .collect();
    want.sort();
    let want: Vec<String> = want.into_iter().map(|w| w.2).collect();
    let got: Vec<String> = query::ready(c, Some(r#"{"limit":1000,"now":1000000}"#))
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(got, want, "{step}: task_ready");
}

// ---------------------------------------------------------------- random operations

#[derive(Clone, Debug)]
enum Op {
    Create {
        priority: i64,
        epic: bool,
        parent: Option<usize>,
        defer: bool,
    },
    Dep {
        a: usize,
        b: usize,
        ty: usize,
    },
    DepSql {
        a: usize,
        b: usize,
        ty: usize,
    },
    Remove {
        a: usize,
        b: usize,
    },
    RemoveSql {
        a: usize,
    },
    Close(usize),
    CloseSql(usize),
    Reopen(usize),
    Claim(usize, usize),
    Release(usize),
    Delete(usize),
}

const TYPES: [&str; 3] = ["blocks", "parent-child", "related"];

fn op() -> impl Strategy<Value = Op> {
    let i = 0..16usize;
    prop_oneof![
        3 => (0..5i64, any::<bool>(), proptest::option::of(0..16usize), proptest::bool::weighted(0.1))
            .prop_map(|(priority, e, parent, defer)| Op::Create { priority, epic: e && priority == 4, parent, defer }),
        5 => (i.clone(), i.clone(), 0..3usize).prop_map(|(a, b, ty)| Op::Dep { a, b, ty }),
        2 => (i.clone(), i.clone(), 0..3usize).prop_map(|(a, b, ty)| Op::DepSql { a, b, ty }),
        2 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Remove { a, b }),
        1 => i.clone().prop_map(|a| Op::RemoveSql { a }),
        2 => i.clone().prop_map(Op::Close),
        1 => i.clone().prop_map(Op::CloseSql),
        2 => i.clone().prop_map(Op::Reopen),
        2 => (i.clone(), 0..3usize).prop_map(|(t, s)| Op::Claim(t, s)),
        1 => i.clone().prop_map(Op::Release),
        1 => i.prop_map(Op::Delete),
    ]
}

/// Applies one operation; refusals (cycles, unknown tasks, claimed tasks) are expected.
fn apply(c: &mut Sq, op: &Op, made: &mut usize) {
    let id = |i: usize| format!("t{i:02}");
    let r: Result<()> = match op {
        Op::Create { priority, epic, parent, defer } => {
            let mut o = serde_json::json!({
                "id": id(*made), "priority": priority, "created_at": (*made as i64 * 7) % 5,
                "type": if *epic { "epic" } else { "task" },
            });
            if let Some(p) = parent.filter(|p| p < made) {
                o["parent"] = serde_json::json!(id(p));
            }
            if *defer {
                o["defer_until"] = serde_json::json!(2_000_000);
            }
            *made += 1;
            ops::create(c, "task", Some(&o.to_string())).map(|_| ())
        }
        Op::Dep { a, b, ty } => {
            ops::dep_add(c, &ops::Dep::new(&id(*a), &id(*b), Some(TYPES[*ty]))).map(|_| ())
        }
        Op::DepSql { a, b, ty } => c
            .execute(
                "INSERT INTO mem_task_deps (task_id, depends_on_id, type) VALUES (?1, ?2, ?3)",
                &[id(*a).into(), id(*b).into(), TYPES[*ty].into()],
            )
            .map(|_| ()),
        Op::Remove { a, b } => {
            ops::dep_remove(c, &ops::Dep::new(&id(*a), &id(*b), None)).map(|_| ())
        }
        Op::RemoveSql { a } => c
            .execute("DELETE FROM mem_task_deps WHERE task_id = ?1", &[id(*a).into()])
            .map(|_| ()),
        Op::Close(t) => ops::close(c, &id(*t), "completed", Some("done")).map(|_| ()),
        Op::CloseSql(t) => c
            .execute("UPDATE mem_tasks SET status = 'closed' WHERE id = ?1", &[id(*t).into()])
            .map(|_| ()),
        Op::Reopen(t) => ops::update(c, &id(*t), Some(r#"{"status":"open"}"#)).map(|_| ()),
        Op::Claim(t, s) => ops::claim(c, &id(*t), &format!("s{s}"), None).map(|_| ()),
        Op::Release(t) => c
            .execute(
                "UPDATE mem_tasks SET status = 'open', session_id = NULL WHERE id = ?1 AND status = 'in_progress'",
                &[id(*t).into()],
            )
            .map(|_| ()),
        Op::Delete(t) => c
            .execute("DELETE FROM mem_tasks WHERE id = ?1", &[id(*t).into()])
            .map(|_| ()),
    };
    if let Err(e) = r {
        let m = err_text(&e);
        let expected = [
            "not found",
            "dependency cycle",
            "cannot depend on itself",
            "already claimed",
            "is blocked by",
            "is closed",
            "already closed",
            "UNIQUE constraint",
            "CHECK constraint",
        ];
        assert!(
            expected.iter().any(|x| m.contains(x)),
            "{op:?}: unexpected error {m}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn blocked_state_equals_reference(ops in proptest::collection::vec(op(), 1..80)) {
        let mut c = open();
        let mut made = 0usize;
        for (i, op) in ops.iter().enumerate() {
            apply(&mut c, op, &mut made);
            check(&mut c, &format!("step {i} {op:?}"));
        }
    }
}

/// A longer run with more tasks and deeper chains than the proptest cases.
#[test]
fn long_random_run_equals_reference() {
    let mut c = open();
    let mut made = 0usize;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for _ in 0..16 {
        apply(
            &mut c,
            &Op::Create {
                priority: 2,
                epic: false,
                parent: None,
                defer: false,
            },
            &mut made,
        );
    }
    for step in 0..1500 {
        let a = next(16);
        let b = next(16);
        let op = match next(12) {
            0 | 1 | 2 | 3 => Op::Dep { a, b, ty: next(2) },
            4 => Op::DepSql { a, b, ty: next(3) },
            5 => Op::Remove { a, b },
            6 => Op::Close(a),
            7 => Op::CloseSql(a),
            8 | 9 => Op::Reopen(a),
            10 => Op::Claim(a, next(3)),
            _ => Op::Release(a),
        };
        apply(&mut c, &op, &mut made);
        if step % 25 == 0 {
            check(&mut c, &format!("step {step} {op:?}"));
        }
    }
    check(&mut c, "end");
}

#[test]
fn cycle_is_named() {
    let mut c = open();
    for t in ["a", "b", "c"] {
        ops::create(&mut c, t, Some(&format!(r#"{{"id":"{t}"}}"#))).unwrap();
    }
    ops::dep_add(&mut c, &ops::Dep::new("a", "b", None)).unwrap();
    ops::dep_add(&mut c, &ops::Dep::new("b", "c", Some("parent-child"))).unwrap();
    let e = ops::dep_add(&mut c, &ops::Dep::new("c", "a", None)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "depends_on_id: dependency cycle: c → a → b → c"
    );
    // Plain SQL goes through the trigger and gets the same refusal.
    let e = c
        .execute(
            "INSERT INTO mem_task_deps (task_id, depends_on_id, type) VALUES ('c', 'a', 'blocks')",
            &[],
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("dependency cycle: c → a → b → c"),
        "{e}"
    );
}
