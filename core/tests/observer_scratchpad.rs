//! The observer's scratchpad against a naive count: random event streams, fed in random
//! batches between random checkpoints and rolled-back calls (after which the connection must
//! read the session again, from its tables and its log), and after them every table holds
//! what a plain replay of the whole stream counts (files, patterns, pairs within the recent
//! window, tool sequences, errors and their resolution, the session's counters).

mod common;

use agentmem_core::Conn;
use common::observer::{checkpoint, observe, start};
use common::Rng;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};

const FILES: &[&str] = &["src/a.ts", "src/b.ts", "lib/c.rs", "package.json", "d.py"];
const TOOLS: &[(&str, &str)] = &[
    ("Read", "read"),
    ("Edit", "edit"),
    ("Grep", "grep"),
    ("Glob", "glob"),
    ("Bash", "shell"),
    ("WebFetch", "web"),
    ("TodoWrite", "other"),
];
const ERRORS: &[&str] = &[
    "Error: Cannot find module './x' at src/a.ts:3",
    "Error: Cannot find module './y' at src/b.ts:9",
    "TypeError: undefined is not a function",
];

fn random_event(rng: &mut Rng, step: &mut i64) -> Json {
    if rng.below(10) == 0 {
        *step += 1;
    }
    // Now and then an event from an earlier step, or with no step at all.
    let at = match rng.below(8) {
        0 => json!(null),
        1 => json!((*step - 1).max(0)),
        _ => json!(*step),
    };
    match rng.below(10) {
        0..=5 => {
            let (tool, _) = TOOLS[rng.below(TOOLS.len())];
            let args = match tool {
                "Read" | "Edit" => {
                    let mut paths = vec![FILES[rng.below(FILES.len())]];
                    if rng.below(4) == 0 {
                        paths.push(FILES[rng.below(FILES.len())]);
                    }
                    json!({"file_path": paths[0], "paths": paths})
                }
                "Grep" | "Glob" => json!({"pattern": (["auth", "token", "*.ts"][rng.below(3)])}),
                "Bash" => json!({"command": (["npm test auth", "ls", "cargo test"][rng.below(3)])}),
                "WebFetch" => json!({"url": "https://example.com/docs"}),
                _ => json!({}),
            };
            json!({"type": "tool_call", "tool": tool, "args": args, "step": at})
        }
        6 | 7 => {
            let tool = ["Bash", "Read"][rng.below(2)];
            if rng.below(2) == 0 {
                json!({"type": "tool_result", "tool": tool, "ok": false,
                       "error": ERRORS[rng.below(ERRORS.len())], "step": at})
            } else {
                json!({"type": "tool_result", "tool": tool, "ok": true, "step": at})
            }
        }
        8 => json!({"type": "reasoning", "text": "Wait, the handler is not exported.", "step": at}),
        _ => json!({"type": "step_complete", "step": *step, "tokens": rng.below(5000)}),
    }
}

/// What a replay of the stream counts.
#[derive(Default, Debug, PartialEq)]
struct Model {
    step: i64,
    events: i64,
    files: BTreeMap<String, (i64, i64, i64, i64)>,
    patterns: BTreeMap<(String, String), (i64, i64, i64)>,
    pairs: BTreeMap<(String, String), i64>,
    errors: BTreeMap<String, (i64, Option<i64>)>,
    external: Option<i64>,
    self_corrections: i64,
    tokens: i64,
}

fn replay(events: &[Json]) -> Model {
    let mut m = Model::default();
    let mut recent: Vec<(String, Vec<String>)> = Vec::new();
    for e in events {
        m.events += 1;
        let step = e["step"].as_i64().unwrap_or(m.step);
        m.step = m.step.max(step);
        match e["type"].as_str().unwrap() {
            "tool_call" => {
                let tool = e["tool"].as_str().unwrap().to_owned();
                let mut paths: Vec<String> = Vec::new();
                if tool == "Read" || tool == "Edit" {
                    let mut given = vec![e["args"]["file_path"].as_str().unwrap().to_owned()];
                    given.extend(
                        e["args"]["paths"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|p| p.as_str().unwrap().to_owned()),
                    );
                    for p in given {
                        if !paths.contains(&p) {
                            paths.push(p);
                        }
                    }
                    for p in &paths {
                        let f = m.files.entry(p.clone()).or_insert((0, 0, step, step));
                        if tool == "Read" {
                            f.0 += 1
                        } else {
                            f.1 += 1
                        }
                        f.2 = f.2.min(step);
                        f.3 = f.3.max(step);
                    }
                    let others: BTreeSet<&String> = recent
                        .iter()
                        .flat_map(|r| &r.1)
                        .filter(|o| !paths.contains(o))
                        .collect();
                    for p in &paths {
                        for o in &others {
                            let key = if p < *o {
                                (p.clone(), (*o).clone())
                            } else {
                                ((*o).clone(), p.clone())
                            };
                            *m.pairs.entry(key).or_default() += 1;
                        }
                    }
                }
                let mut count = |kind: &str, p: String| {
                    let c = m
                        .patterns
                        .entry((kind.to_owned(), p))
                        .or_insert((0, step, step));
                    c.0 += 1;
                    c.2 = c.2.max(step);
                };
                match tool.as_str() {
                    "Grep" => count("grep", e["args"]["pattern"].as_str().unwrap().into()),
                    "Glob" => count("glob", e["args"]["pattern"].as_str().unwrap().into()),
                    "WebFetch" => {
                        count("web", e["args"]["url"].as_str().unwrap().into());
                        if m.external.is_none_or(|x| step < x) {
                            m.external = Some(step);
                        }
                    }
                    "Bash" => match e["args"]["command"].as_str().unwrap() {
                        "npm test auth" => count("test", "npm test auth".into()),
                        "cargo test" => count("test", "cargo test".into()),
                        _ => {}
                    },
                    _ => {}
                }
                // Sequences that change something: an edit or a command among them.
                let changes = |t: &str| t == "Edit" || t == "Bash";
                let n = recent.len();
                if n >= 2
                    && (changes(&recent[n - 2].0) || changes(&recent[n - 1].0) || changes(&tool))
                {
                    count(
                        "sequence",
                        format!("{} > {} > {}", recent[n - 2].0, recent[n - 1].0, tool),
                    );
                }
                if recent.len() == 8 {
                    recent.remove(0);
                }
                recent.push((tool, paths));
            }
            "tool_result" => {
                let tool = e["tool"].as_str().unwrap();
                if e["ok"].as_bool().unwrap() {
                    for (fp, (_, resolved)) in m.errors.iter_mut() {
                        if fp.ends_with(&format!("|{tool}")) && resolved.is_none() {
                            *resolved = Some(step);
                        }
                    }
                } else {
                    // The fingerprint keeps "Error: Cannot find module Q at P" for both
                    // module errors; the tool that failed last owns the row.
                    let fp = match e["error"].as_str().unwrap() {
                        s if s.starts_with("Error:") => "Error: Cannot find module Q at P",
                        _ => "TypeError: undefined is not a function",
                    };
                    let old = m
                        .errors
                        .keys()
                        .find(|k| k.starts_with(&format!("{fp}|")))
                        .cloned();
                    let count = old.as_ref().map_or(0, |k| m.errors[k].0);
                    if let Some(k) = old {
                        m.errors.remove(&k);
                    }
                    m.errors.insert(format!("{fp}|{tool}"), (count + 1, None));
                }
            }
            "reasoning" => m.self_corrections += 1,
            _ => m.tokens += e["tokens"].as_i64().unwrap(),
        }
    }
    m
}

fn ints(db: &mut dyn Conn, sql: &str) -> Vec<Vec<Json>> {
    db.query(sql, &[])
        .unwrap()
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| match v.as_i64() {
                    Some(i) => json!(i),
                    None => v.as_str().map_or(Json::Null, |s| json!(s)),
                })
                .collect()
        })
        .collect()
}

fn stored(db: &mut dyn Conn) -> Model {
    let mut m = Model::default();
    let s = &ints(db, "SELECT step, events, external_step, self_corrections, input_tokens FROM mem_observer_sessions")[0];
    (m.step, m.events, m.external, m.self_corrections, m.tokens) = (
        s[0].as_i64().unwrap(),
        s[1].as_i64().unwrap(),
        s[2].as_i64(),
        s[3].as_i64().unwrap(),
        s[4].as_i64().unwrap(),
    );
    for r in ints(
        db,
        "SELECT path, reads, edits, first_step, last_step FROM mem_observer_files",
    ) {
        m.files.insert(
            r[0].as_str().unwrap().into(),
            (
                r[1].as_i64().unwrap(),
                r[2].as_i64().unwrap(),
                r[3].as_i64().unwrap(),
                r[4].as_i64().unwrap(),
            ),
        );
    }
    for r in ints(
        db,
        "SELECT kind, pattern, count, first_step, last_step FROM mem_observer_patterns",
    ) {
        m.patterns.insert(
            (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()),
            (
                r[2].as_i64().unwrap(),
                r[3].as_i64().unwrap(),
                r[4].as_i64().unwrap(),
            ),
        );
    }
    for r in ints(db, "SELECT file_a, file_b, count FROM mem_observer_pairs") {
        m.pairs.insert(
            (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()),
            r[2].as_i64().unwrap(),
        );
    }
    for r in ints(
        db,
        "SELECT fingerprint, tool, count, resolved_step FROM mem_observer_errors",
    ) {
        m.errors.insert(
            format!("{}|{}", r[0].as_str().unwrap(), r[1].as_str().unwrap()),
            (r[2].as_i64().unwrap(), r[3].as_i64()),
        );
    }
    m
}

#[test]
fn the_scratchpad_counts_what_a_replay_counts() {
    for seed in 1..=25u64 {
        let mut db = common::open_with_triggers();
        let id = start(&mut db, "r", Some(r#"{"max_scratch_rows": 1000000}"#)).unwrap();
        let mut rng = Rng(seed * 7919);
        let mut step = 0;
        let events: Vec<Json> = (0..600)
            .map(|_| random_event(&mut rng, &mut step))
            .collect();
        let mut at = 0;
        while at < events.len() {
            match rng.below(12) {
                0 => {
                    // Events that never happened: their transaction rolls back.
                    let mut ghost_step = step;
                    let ghosts: Vec<Json> = (0..1 + rng.below(5))
                        .map(|_| random_event(&mut rng, &mut ghost_step))
                        .collect();
                    db.execute("BEGIN", &[]).unwrap();
                    observe(&mut db, &id, &Json::Array(ghosts).to_string()).unwrap();
                    db.execute("ROLLBACK", &[]).unwrap();
                }
                1 => {
                    checkpoint(&mut db, &id).unwrap();
                }
                _ => {}
            }
            let n = 1 + rng.below(20);
            let batch = &events[at..(at + n).min(events.len())];
            let arg = if batch.len() == 1 && rng.below(2) == 0 {
                batch[0].to_string()
            } else {
                Json::Array(batch.to_vec()).to_string()
            };
            observe(&mut db, &id, &arg).unwrap();
            at += n;
        }
        checkpoint(&mut db, &id).unwrap();
        assert_eq!(stored(&mut db), replay(&events), "seed {seed}");
        let logged = ints(&mut db, "SELECT count(*) FROM mem_observer_events");
        assert_eq!(logged[0][0], json!(0), "a checkpoint empties the log");
    }
}

#[test]
fn the_scratchpad_stays_within_its_bound() {
    let mut db = common::open_with_triggers();
    let id = start(&mut db, "r", Some(r#"{"max_scratch_rows": 100}"#)).unwrap();
    for i in 0..400 {
        let e = json!({"type": "tool_call", "tool": "Read", "args": {"file_path": format!("f{i}.rs")}, "step": i});
        observe(&mut db, &id, &e.to_string()).unwrap();
        checkpoint(&mut db, &id).unwrap();
        let rows = ints(&mut db, "SELECT (SELECT count(*) FROM mem_observer_files) + \
            (SELECT count(*) FROM mem_observer_pairs) + (SELECT count(*) FROM mem_observer_patterns), \
            scratch_rows, evicted FROM mem_observer_sessions");
        let (held, counted) = (rows[0][0].as_i64().unwrap(), rows[0][1].as_i64().unwrap());
        assert_eq!(held, counted, "the counter is exact");
        assert!(held <= 100, "{held} rows held after event {i}");
    }
    // The files read most recently are kept.
    let kept = ints(
        &mut db,
        "SELECT count(*) FROM mem_observer_files WHERE path = 'f399.rs'",
    );
    assert_eq!(kept[0][0], json!(1));
}

#[test]
fn a_finalized_session_takes_no_events_and_unknown_ones_are_not_found() {
    let mut db = common::open_with_triggers();
    let err = observe(&mut db, "nope", r#"{"type":"step_complete","step":1}"#).unwrap_err();
    assert!(err.to_string().contains("session not found: nope"), "{err}");
    let id = start(&mut db, "r", None).unwrap();
    db.execute("UPDATE mem_observer_sessions SET status = 'finalized'", &[])
        .unwrap();
    let err = observe(&mut db, &id, r#"{"type":"step_complete","step":1}"#).unwrap_err();
    assert!(err.to_string().contains("is finalized"), "{err}");
}

#[test]
fn a_bad_event_in_a_batch_names_its_place_and_writes_nothing() {
    let mut db = common::open_with_triggers();
    let id = start(&mut db, "r", None).unwrap();
    let batch = r#"[{"type":"tool_call","tool":"Read","args":{"file_path":"a"}},{"type":"nope"}]"#;
    let err = observe(&mut db, &id, batch).unwrap_err();
    assert!(
        err.to_string().contains("event[1].type: unknown type"),
        "{err}"
    );
    assert_eq!(
        ints(&mut db, "SELECT count(*) FROM mem_observer_files")[0][0],
        json!(0)
    );
}
