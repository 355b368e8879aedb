//! The observer against a scripted corpus: two projects' worth of coding sessions, each with
//! facts planted in it (files always changed together, an error a retry gets past, the
//! agent's corrections, a dead end, a search it repeats, the test it starts with, a config
//! file that moves with the code, a page it keeps reading, a file it opens first, a decoy it
//! opens and leaves for a search, a way of working) and noise around them (other files, incidental words,
//! errors of the tools themselves, one-off searches). What the observer promotes over the
//! sessions is scored against what was planted: precision and recall, per class and in all.
//!
//! The first project (a TypeScript web app) is the one the detectors were tuned on; the
//! second (a Python service, written with other words and paths, and not looked at while
//! tuning) is held out. `cargo test -p agentmem-core --test observer_corpus -- --nocapture`
//! prints the table docs/observer.md reports.

mod common;

use common::Rng;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};

/// One project: its files and what is planted in its sessions.
struct Project {
    name: &'static str,
    resource: &'static str,
    /// Files always worked on together.
    pair: (&'static str, &'static str),
    /// Read first in every session.
    entry: &'static str,
    /// Opened and left in most sessions.
    decoy: &'static str,
    config: &'static str,
    /// An error the test command hits now and then, fixed by a retry.
    flaky: (&'static str, &'static str),
    test: &'static str,
    grep: &'static str,
    web: &'static str,
    /// The agent's corrections (each in one session) and a dead end (in a failed one).
    corrections: [&'static str; 2],
    dead_end: &'static str,
    /// Other files, read now and then.
    others: &'static [&'static str],
    /// Words around the facts that must not count.
    noise: &'static [&'static str],
    /// Errors of the tools themselves, then fixed: not project knowledge.
    tool_errors: &'static [(&'static str, &'static str)],
}

const WEB_APP: Project = Project {
    name: "tuned: TypeScript web app",
    resource: "project:webapp",
    pair: ("src/auth/session.ts", "src/auth/token.ts"),
    entry: "src/index.ts",
    decoy: "src/legacy/auth-old.ts",
    config: "package.json",
    flaky: (
        "Bash",
        "Error: connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap.afterConnect",
    ),
    test: "npm test auth",
    grep: "refreshToken",
    web: "https://jestjs.io/docs/mock-functions",
    corrections: [
        "Wait, the token is not refreshed in middleware. It happens in token.ts.",
        "I was wrong about the cookie name. It is sid, set in session.ts.",
    ],
    dead_end: "This approach won't work: Redis is unavailable in CI, so the test must mock it.",
    others: &[
        "src/app.tsx",
        "src/routes/login.tsx",
        "src/routes/home.tsx",
        "src/lib/http.ts",
        "src/lib/date.ts",
        "src/components/Button.tsx",
        "src/components/Form.tsx",
        "src/store/user.ts",
        "src/store/cart.ts",
        "src/api/orders.ts",
        "src/api/users.ts",
        "README.md",
        "src/styles/theme.ts",
        "src/hooks/useAuth.ts",
        "src/hooks/useFetch.ts",
    ],
    noise: &[
        "Wait for the build to finish, then run the tests.",
        "Actually running the linter shows no issues here.",
        "Let me look at how the router is set up before changing anything.",
        "The function waits for the lock; actually it spins.",
    ],
    tool_errors: &[
        ("Edit", "String to replace not found in file."),
        ("Read", "File does not exist."),
    ],
};

const SERVICE: Project = Project {
    name: "held out: Python service",
    resource: "project:billing",
    pair: ("billing/models/invoice.py", "billing/services/tax.py"),
    entry: "billing/settings.py",
    decoy: "billing/utils/compat.py",
    config: "pyproject.toml",
    flaky: ("Bash", "psycopg.OperationalError: connection to server at \"localhost\" (::1), port 5432 failed: Connection refused"),
    test: "pytest tests/test_invoice.py",
    grep: "apply_discount",
    web: "https://docs.djangoproject.com/en/5.0/topics/db/transactions/",
    corrections: [
        "Actually, the tax is computed per line, not per invoice.",
        "Correction: discounts apply before tax, in services/tax.py.",
    ],
    dead_end: "I need to abandon this: the payment gateway sandbox is not available in this environment.",
    others: &[
        "billing/api/views.py", "billing/api/serializers.py", "billing/models/customer.py",
        "billing/models/payment.py", "billing/tasks.py", "billing/admin.py", "manage.py",
        "billing/services/email.py", "tests/conftest.py", "tests/test_api.py",
        "billing/migrations/0007_invoice_due.py", "docs/architecture.md",
    ],
    noise: &[
        "Hmm, wait until the migration finishes before querying.",
        "Actually checking the fixtures is quicker than reading the factory.",
        "Next I will read the serializer to see which fields are exposed.",
        "On reflection the naming is fine as it is.",
    ],
    tool_errors: &[
        ("Edit", "old_string not found in billing/api/views.py"),
        ("Read", "EISDIR: illegal operation on a directory, read"),
    ],
};

/// Sessions per project, and which of them failed.
const SESSIONS: usize = 8;
const FAILED: usize = 4;

/// One session's events, in order; `s` its number.
fn script(p: &Project, s: usize, rng: &mut Rng) -> Vec<Json> {
    let mut ev = Vec::new();
    let mut step = 0;
    let call = |ev: &mut Vec<Json>, step: &mut i64, tool: &str, args: Json| {
        *step += 1;
        ev.push(json!({"type": "tool_call", "tool": tool, "args": args, "step": *step}));
    };
    let ok = |ev: &mut Vec<Json>, step: i64, tool: &str| {
        ev.push(json!({"type": "tool_result", "tool": tool, "ok": true, "step": step}))
    };
    let other = |rng: &mut Rng| p.others[rng.below(p.others.len())];
    // Every session opens the entry file first, and most glance at the decoy.
    call(&mut ev, &mut step, "Read", json!({"file_path": p.entry}));
    if s % 4 != 3 {
        // Opened, not the place: the agent searches elsewhere at once.
        call(&mut ev, &mut step, "Read", json!({"file_path": p.decoy}));
        call(
            &mut ev,
            &mut step,
            "Grep",
            json!({"pattern": format!("{} handler", p.grep)}),
        );
    }
    // Tests first, then the search the agent repeats in the first sessions.
    if s < 5 {
        call(&mut ev, &mut step, "Bash", json!({"command": p.test}));
        ok(&mut ev, step, "Bash");
    }
    if s < 3 {
        for _ in 0..3 {
            call(&mut ev, &mut step, "Grep", json!({"pattern": p.grep}));
        }
    }
    // Noise: other files, once each, and incidental words.
    for _ in 0..2 + rng.below(3) {
        call(&mut ev, &mut step, "Read", json!({"file_path": other(rng)}));
        call(
            &mut ev,
            &mut step,
            "Grep",
            json!({"pattern": format!("{}_{}", p.grep.split('_').next().unwrap(), rng.below(1000))}),
        );
    }
    ev.push(json!({"type": "reasoning", "text": p.noise[rng.below(p.noise.len())], "step": step}));
    // The pair, worked on together in most sessions, with the planted way of working.
    if s != 6 {
        for _ in 0..2 {
            call(&mut ev, &mut step, "Grep", json!({"pattern": "class"}));
            call(&mut ev, &mut step, "Read", json!({"file_path": p.pair.0}));
            call(
                &mut ev,
                &mut step,
                "Edit",
                json!({"file_path": p.pair.1, "old_string": "a", "new_string": "b"}),
            );
        }
    }
    // A tool's own error, fixed at once.
    let (tool, error) = p.tool_errors[rng.below(p.tool_errors.len())];
    call(&mut ev, &mut step, tool, json!({"file_path": other(rng)}));
    ev.push(
        json!({"type": "tool_result", "tool": tool, "ok": false, "error": error, "step": step}),
    );
    call(&mut ev, &mut step, tool, json!({"file_path": other(rng)}));
    ok(&mut ev, step, tool);
    // The flaky error, then a retry that passes, in every other session.
    if s % 2 == 1 {
        call(&mut ev, &mut step, p.flaky.0, json!({"command": p.test}));
        ev.push(json!({"type": "tool_result", "tool": p.flaky.0, "ok": false, "error": p.flaky.1, "step": step}));
        call(&mut ev, &mut step, p.flaky.0, json!({"command": p.test}));
        ok(&mut ev, step, p.flaky.0);
    }
    // The config file moves with the code in two sessions.
    if s == 2 || s == 5 {
        call(
            &mut ev,
            &mut step,
            "Edit",
            json!({"file_path": p.config, "old_string": "a", "new_string": "b"}),
        );
    }
    // The page the agents keep reading, late in the session.
    if s % 3 == 1 {
        call(
            &mut ev,
            &mut step,
            "WebFetch",
            json!({"url": p.web, "prompt": "how to"}),
        );
    }
    // A correction in the first sessions; the dead end in the failed one.
    if s < 2 {
        ev.push(json!({"type": "reasoning", "text": p.corrections[s], "step": step}));
    }
    if s == FAILED {
        ev.push(json!({"type": "reasoning", "text": p.dead_end, "step": step}));
    }
    ev.push(json!({"type": "step_complete", "step": step, "tokens": 3000 + rng.below(2000)}));
    ev
}

/// What was planted: the (class, key) pairs that should be promoted in the project.
fn planted(p: &Project) -> BTreeSet<(String, String)> {
    let fp = |e: &str| agentmem_core::observer::fingerprint::fingerprint(e).unwrap();
    let (a, b) = if p.pair.0 < p.pair.1 {
        p.pair
    } else {
        (p.pair.1, p.pair.0)
    };
    [
        ("co_access", format!("{a} + {b}")),
        ("error_retry", fp(p.flaky.1)),
        (
            "self_correction",
            p.corrections[0]
                .split(". ")
                .next()
                .unwrap()
                .trim_end_matches('.')
                .to_owned()
                + ".",
        ),
        (
            "self_correction",
            p.corrections[1]
                .split(". ")
                .next()
                .unwrap()
                .trim_end_matches('.')
                .to_owned()
                + ".",
        ),
        ("dead_end", p.dead_end.to_owned()),
        ("repeated_grep", p.grep.to_owned()),
        ("test_order", p.test.to_owned()),
        ("config_touch", p.config.to_owned()),
        ("external_reference", p.web.to_owned()),
        ("file_access", p.entry.to_owned()),
        ("read_abandon", p.decoy.to_owned()),
        ("tool_sequence", "Grep > Read > Edit".to_owned()),
    ]
    .into_iter()
    .map(|(c, k)| (c.to_owned(), k))
    .collect()
}

/// Runs the project's sessions; the (class, key) pairs promoted.
fn promoted(p: &Project) -> BTreeSet<(String, String)> {
    let mut db = common::open_with_triggers();
    let mut rng = Rng(0x5eed ^ p.resource.len() as u64);
    let mut out = BTreeSet::new();
    for s in 0..SESSIONS {
        let id = format!("{}-{s}", p.resource);
        let events = Json::Array(script(p, s, &mut rng)).to_string();
        let outcome = if s == FAILED { "failure" } else { "success" };
        let options = json!({ "id": id }).to_string();
        let answer =
            common::observer::session(&mut db, p.resource, Some(&options), &events, outcome)
                .unwrap();
        for m in answer["promoted"].as_array().unwrap() {
            out.insert((
                m["class"].as_str().unwrap().to_owned(),
                m["key"].as_str().unwrap().to_owned(),
            ));
        }
    }
    out
}

/// Precision and recall of `got` against `want`, per class and in all.
fn score(
    want: &BTreeSet<(String, String)>,
    got: &BTreeSet<(String, String)>,
) -> BTreeMap<String, (usize, usize, usize)> {
    let mut by: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for (c, k) in got {
        let e = by.entry(c.clone()).or_default();
        e.1 += 1;
        if want.contains(&(c.clone(), k.clone())) {
            e.0 += 1;
        }
    }
    for (c, _) in want {
        by.entry(c.clone()).or_default().2 += 1;
    }
    by
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

/// The table of one project, and its overall precision and recall.
fn table(p: &Project) -> (String, f64, f64) {
    let (want, got) = (planted(p), promoted(p));
    let by = score(&want, &got);
    let mut t = format!(
        "{}\n\n| class | promoted | right | planted | precision | recall |\n|---|---:|---:|---:|---:|---:|\n",
        p.name
    );
    let (mut right, mut promoted_n) = (0, 0);
    for (class, (r, g, w)) in &by {
        t.push_str(&format!(
            "| {class} | {g} | {r} | {w} | {} | {} |\n",
            ratio(*r, *g),
            ratio(*r, *w)
        ));
        right += r;
        promoted_n += g;
    }
    t.push_str(&format!(
        "| all | {promoted_n} | {right} | {} | {} | {} |\n",
        want.len(),
        ratio(right, promoted_n),
        ratio(right, want.len())
    ));
    let wrong: Vec<_> = got.difference(&want).collect();
    let missed: Vec<_> = want.difference(&got).collect();
    t.push_str(&format!("\nwrong: {wrong:?}\nmissed: {missed:?}\n"));
    (
        t,
        right as f64 / promoted_n.max(1) as f64,
        right as f64 / want.len() as f64,
    )
}

#[test]
fn the_observer_finds_what_was_planted() {
    let (tuned, p1, r1) = table(&WEB_APP);
    let (held, p2, r2) = table(&SERVICE);
    println!("{tuned}\n{held}");
    // Floors under what the detectors reach, on both halves: a detector that stops finding
    // its fact, or starts promoting noise, fails here.
    assert!(
        p1 >= 0.85 && r1 >= 0.85,
        "tuned half: precision {p1:.2}, recall {r1:.2}\n{tuned}"
    );
    assert!(
        p2 >= 0.75 && r2 >= 0.75,
        "held-out half: precision {p2:.2}, recall {r2:.2}\n{held}"
    );
}
