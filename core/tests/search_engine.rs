//! The search engine against a real SQLite database (rusqlite, system libsqlite3) and a
//! brute-force reference scorer.

mod common;

use agentmem_core::search::merge::FLUSH_DOCS;
use agentmem_core::search::tokenizer::Kind;
use agentmem_core::search::{self, query, SearchParams};
use agentmem_core::Dialect;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

// ---------------------------------------------------------------- a test-only Conn

use common::Sq;

fn open() -> Sq {
    common::open_with_triggers()
}

const NS: &str = "msg";
const NOW: i64 = 1_800_000_000_000;
const DAY: i64 = 86_400_000;

// ---------------------------------------------------------------- the reference scorer

/// Brute force: tokenizes every live document and scores every one of them from scratch.
struct Oracle {
    docs: BTreeMap<i64, (String, i64)>,
}

struct ODoc {
    len: u64,
    created: i64,
    terms: BTreeMap<String, Vec<u32>>,
}

#[derive(Clone, PartialEq, Debug)]
enum OClause {
    Term(String),
    Phrase(Vec<String>, f64),
}

impl Oracle {
    fn analyze(&self) -> BTreeMap<i64, ODoc> {
        self.docs
            .iter()
            .map(|(k, (text, created))| {
                let toks = search::tokenizer::tokenize(text);
                let mut terms: BTreeMap<String, Vec<u32>> = BTreeMap::new();
                for t in &toks {
                    terms.entry(t.text.clone()).or_default().push(t.pos);
                }
                let stems = toks.iter().filter(|t| t.kind == Kind::Stem).count();
                (
                    *k,
                    ODoc {
                        len: (toks.len() - stems) as u64,
                        created: *created,
                        terms,
                    },
                )
            })
            .collect()
    }

    fn search(
        &self,
        q: &str,
        p: &SearchParams,
        now: i64,
        filter: Option<&dyn Fn(i64) -> bool>,
    ) -> Vec<(i64, f64, f64, f64)> {
        let docs = self.analyze();
        let q = query::parse(q).weighed(p);
        if q.should.is_empty() || docs.is_empty() || p.limit == 0 {
            return Vec::new();
        }
        let vocab: BTreeSet<&String> = docs.values().flat_map(|d| d.terms.keys()).collect();
        let resolve = |m: &query::Matcher| -> Vec<OClause> {
            match m {
                query::Matcher::Term(t) => vec![OClause::Term(t.clone())],
                query::Matcher::Phrase(a) | query::Matcher::Near(a) => {
                    vec![OClause::Phrase(
                        a.clone(),
                        query::Query::clause_weight(m, p),
                    )]
                }
                query::Matcher::Prefix(pre) => vocab
                    .iter()
                    .filter(|t| t.starts_with(pre.as_str()))
                    .take(query::MAX_PREFIX_TERMS)
                    .map(|t| OClause::Term((*t).clone()))
                    .collect(),
            }
        };
        let mut should: Vec<OClause> = Vec::new();
        for m in &q.should {
            for c in resolve(m) {
                if !should.contains(&c) {
                    should.push(c);
                }
            }
        }
        let must: Vec<Vec<OClause>> = q.must.iter().map(resolve).collect();
        let must_not: Vec<Vec<OClause>> = q.must_not.iter().map(resolve).collect();
        let n = docs.len() as u64;
        let total: u64 = docs.values().map(|d| d.len).sum();
        let avgdl = total as f64 / n as f64;
        let df = |t: &str| docs.values().filter(|d| d.terms.contains_key(t)).count() as f64;
        let idf = |t: &str| q.weight(t, p) * (1.0 + (n as f64 - df(t) + 0.5) / (df(t) + 0.5)).ln();
        let tfp = |tf: usize, len: u64| {
            let tf = tf as f64;
            tf * (p.k1 + 1.0) / (tf + p.k1 * (1.0 - p.b + p.b * (len as f64 / avgdl)))
        };
        let has = |d: &ODoc, c: &OClause| match c {
            OClause::Term(t) => d.terms.contains_key(t),
            OClause::Phrase(a, _) => d.terms.get(&a[0]).is_some_and(|ps| {
                ps.iter().any(|&s| {
                    a.iter()
                        .enumerate()
                        .skip(1)
                        .all(|(j, t)| d.terms.get(t).is_some_and(|q| q.contains(&(s + j as u32))))
                })
            }),
        };
        let mut hits = Vec::new();
        for (k, d) in &docs {
            if !must.iter().all(|any| any.iter().any(|c| has(d, c)))
                || must_not.iter().any(|any| any.iter().any(|c| has(d, c)))
            {
                continue;
            }
            if let Some(f) = filter {
                if !f(*k) {
                    continue;
                }
            }
            let mut bm25 = 0.0;
            let mut matched = false;
            for c in &should {
                if !has(d, c) {
                    continue;
                }
                matched = true;
                bm25 += match c {
                    OClause::Term(t) => idf(t) * tfp(d.terms[t].len(), d.len),
                    OClause::Phrase(a, w) => {
                        let mut s = 0.0;
                        for t in a {
                            s += idf(t) * tfp(d.terms[t].len(), d.len);
                        }
                        w * s
                    }
                };
            }
            if !matched {
                continue;
            }
            let age = (now - d.created).max(0) as f64;
            let rec = if p.recency_weight == 0.0 {
                1.0
            } else {
                1.0 + p.recency_weight * (-(age / p.half_life_ms)).exp2()
            };
            hits.push((*k, bm25 * rec, bm25, rec));
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        hits.truncate(p.limit);
        hits
    }
}

fn assert_same(engine: &[search::Hit], oracle: &[(i64, f64, f64, f64)], ctx: &str) {
    let e: Vec<i64> = engine.iter().map(|h| h.doc).collect();
    let o: Vec<i64> = oracle.iter().map(|h| h.0).collect();
    assert_eq!(
        e, o,
        "ids differ for {ctx}\nengine {engine:?}\noracle {oracle:?}"
    );
    for (h, r) in engine.iter().zip(oracle) {
        for (a, b) in [(h.score, r.1), (h.bm25, r.2), (h.recency, r.3)] {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "score differs for {ctx}: {a} vs {b}"
            );
        }
    }
}

fn params(limit: usize) -> SearchParams {
    SearchParams {
        limit,
        now: Some(NOW),
        ..Default::default()
    }
}

// ---------------------------------------------------------------- property tests

const VOCAB: &[&str] = &[
    "LoginSchema",
    "login_schema",
    "loginSchema",
    "login",
    "schema",
    "refresh_tokens",
    "refresh",
    "tokens",
    "token",
    "my-component",
    "component",
    "src/auth/login.ts",
    "auth",
    "auth.ts",
    "Foo::bar",
    "foo",
    "bar",
    "HTTPServer",
    "server",
    "parseJSON",
    "json",
    "v1.2.3",
    "error",
    "Error:",
    "fix",
    "the",
    "a",
    "bug",
    "authentication",
    "authorize",
    "東京",
    "naïve",
    "42",
    "x",
    "test_login",
    "TODO",
    "tests",
    "testing",
    "test",
    "appointments",
    "appointment",
    "running",
    "run",
    "how",
    "did",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(VOCAB).prop_map(str::to_owned),
        1 => "[a-e]{1,3}",
    ]
}

fn doc_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            word(),
            prop::sample::select(&[" ", " ", ", ", ". ", "\n", " (", ") "][..]),
        ),
        1..14,
    )
    .prop_map(|ws| ws.into_iter().map(|(w, s)| format!("{w}{s}")).collect())
}

fn query_text() -> impl Strategy<Value = String> {
    let item = (
        prop::sample::select(&["", "", "", "+", "-"][..]),
        word(),
        0..6u8,
        word(),
    )
        .prop_map(|(m, w, kind, w2)| match kind {
            0 => format!("{m}\"{w} {w2}\""),
            1 => {
                let mut p: String = w.chars().take(3).collect();
                if p.is_empty() {
                    p.push('a');
                }
                format!("{m}{p}*")
            }
            _ => format!("{m}{w}"),
        });
    prop::collection::vec(item, 1..5).prop_map(|v| v.join(" "))
}

#[derive(Clone, Debug)]
enum Op {
    Put(i64, String, i64),
    Delete(i64),
    Flush,
    Optimize,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0..40i64, doc_text(), 0..60i64).prop_map(|(k, t, d)| Op::Put(k, t, NOW - d * DAY / 2)),
        3 => (0..40i64).prop_map(Op::Delete),
        3 => Just(Op::Flush),
        1 => Just(Op::Optimize),
    ]
}

fn apply(conn: &mut Sq, oracle: &mut Oracle, op: &Op) {
    match op {
        Op::Put(k, t, c) => {
            let old = oracle.docs.insert(*k, (t.clone(), *c));
            search::index_doc(conn, NS, *k, t, *c, old.as_ref().map(|o| o.0.as_str())).unwrap();
        }
        Op::Delete(k) => {
            let old = oracle.docs.remove(k);
            let removed =
                search::remove_doc(conn, NS, *k, old.as_ref().map(|o| o.0.as_str())).unwrap();
            assert_eq!(removed, old.is_some());
        }
        Op::Flush => search::flush(conn, NS, true).unwrap(),
        Op::Optimize => {
            search::optimize(conn, NS).unwrap();
        }
    }
}

fn expected(o: &Oracle) -> Vec<(i64, String, i64)> {
    o.docs
        .iter()
        .map(|(k, (t, c))| (*k, t.clone(), *c))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn engine_equals_brute_force(
        ops in prop::collection::vec(op(), 1..70),
        queries in prop::collection::vec((query_text(), 1..12usize, 0..4usize), 1..6),
    ) {
        let mut conn = open();
        let mut oracle = Oracle { docs: BTreeMap::new() };
        for (i, op) in ops.iter().enumerate() {
            apply(&mut conn, &mut oracle, op);
            if i % 10 == 9 {
                let (q, limit, _) = &queries[i / 10 % queries.len()];
                let r = search::search(&mut conn, NS, q, &params(*limit), None).unwrap();
                assert_same(&r.hits, &oracle.search(q, &params(*limit), NOW, None), q);
            }
        }
        for (q, limit, variant) in &queries {
            let p = match variant {
                0 => params(*limit),
                1 => SearchParams { recency_weight: 2.0, half_life_ms: 3_600_000.0, ..params(*limit) },
                2 => SearchParams { stem_weight: 1.0, stopword_weight: 0.0, ..params(*limit) },
                _ => SearchParams { recency_weight: 0.0, ..params(*limit) },
            };
            let r = search::search(&mut conn, NS, q, &p, None).unwrap();
            assert_same(&r.hits, &oracle.search(q, &p, NOW, None), q);
            let odd = |k: i64| k % 2 == 1;
            let r = search::search(&mut conn, NS, q, &p, Some(&odd)).unwrap();
            assert_same(&r.hits, &oracle.search(q, &p, NOW, Some(&odd)), q);
        }
        let problems = search::check(&mut conn, NS, &expected(&oracle)).unwrap();
        prop_assert!(problems.is_empty(), "{:?}", problems);
    }
}

// ---------------------------------------------------------------- held documents

/// Steps of a transaction whose new documents are held until it commits.
#[derive(Clone, Debug)]
enum TxOp {
    /// A document: new keys are held, known ones replaced (held or stored).
    Put(i64, String, i64),
    Delete(i64),
    /// A flush of the stored delta (held documents are written first).
    Flush,
    Savepoint,
    RollbackTo,
    Release,
    /// The transaction commits (held documents written) and a new one begins.
    Commit,
    Search,
}

fn tx_op() -> impl Strategy<Value = TxOp> {
    prop_oneof![
        12 => (0..40i64, doc_text(), 0..60i64).prop_map(|(k, t, d)| TxOp::Put(k, t, NOW - d * DAY / 2)),
        3 => (0..40i64).prop_map(TxOp::Delete),
        1 => Just(TxOp::Flush),
        2 => Just(TxOp::Savepoint),
        2 => Just(TxOp::RollbackTo),
        1 => Just(TxOp::Release),
        2 => Just(TxOp::Commit),
        3 => Just(TxOp::Search),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Held documents, written at commit or early, followed through savepoints rolled back
    /// and released: searches inside the transaction and after it equal the brute force on
    /// the documents the transaction's state holds, and the stored index checks clean.
    #[test]
    fn held_documents_follow_the_transaction(
        ops in prop::collection::vec(tx_op(), 1..80),
        queries in prop::collection::vec((query_text(), 1..12usize), 1..4),
    ) {
        use agentmem_core::search::held;
        use agentmem_core::Conn;
        let mut conn = open();
        let mut oracle = Oracle { docs: BTreeMap::new() };
        // Open savepoints: their SQL name, held id and the documents when they began.
        let mut saved: Vec<(u64, BTreeMap<i64, (String, i64)>)> = Vec::new();
        let mut next_id = 1u64;
        conn.0.execute_batch("BEGIN").unwrap();
        for (i, op) in ops.iter().enumerate() {
            match op {
                TxOp::Put(k, t, c) => {
                    match oracle.docs.insert(*k, (t.clone(), *c)) {
                        None => prop_assert!(search::index_new(&mut conn, NS, *k, t, *c, true).unwrap()),
                        Some(old) => search::index_doc(&mut conn, NS, *k, t, *c, Some(&old.0)).unwrap(),
                    }
                }
                TxOp::Delete(k) => {
                    let old = oracle.docs.remove(k);
                    let removed = search::remove_doc(&mut conn, NS, *k, old.as_ref().map(|o| o.0.as_str())).unwrap();
                    prop_assert_eq!(removed, old.is_some());
                }
                TxOp::Flush => search::flush(&mut conn, NS, true).unwrap(),
                TxOp::Savepoint => {
                    let id = next_id;
                    next_id += 1;
                    conn.0.execute_batch(&format!("SAVEPOINT s{id}")).unwrap();
                    conn.session().savepoint(id);
                    saved.push((id, oracle.docs.clone()));
                }
                TxOp::RollbackTo => {
                    if let Some((id, docs)) = saved.last() {
                        conn.0.execute_batch(&format!("ROLLBACK TO s{id}")).unwrap();
                        conn.session().rollback_to(*id);
                        oracle.docs = docs.clone();
                    }
                }
                TxOp::Release => {
                    if let Some((id, _)) = saved.pop() {
                        conn.0.execute_batch(&format!("RELEASE s{id}")).unwrap();
                        conn.session().release(id);
                    }
                }
                TxOp::Commit => {
                    search::write_held(&mut conn).unwrap();
                    prop_assert!(!held::of(&mut conn).any());
                    conn.0.execute_batch("COMMIT; BEGIN").unwrap();
                    saved.clear();
                }
                TxOp::Search => {
                    let (q, limit) = &queries[i % queries.len()];
                    let r = search::search(&mut conn, NS, q, &params(*limit), None).unwrap();
                    assert_same(&r.hits, &oracle.search(q, &params(*limit), NOW, None), q);
                }
            }
        }
        search::write_held(&mut conn).unwrap();
        conn.0.execute_batch("COMMIT").unwrap();
        for (q, limit) in &queries {
            let r = search::search(&mut conn, NS, q, &params(*limit), None).unwrap();
            assert_same(&r.hits, &oracle.search(q, &params(*limit), NOW, None), q);
        }
        let problems = search::check(&mut conn, NS, &expected(&oracle)).unwrap();
        prop_assert!(problems.is_empty(), "{:?}", problems);
    }
}

/// Many held documents become one segment at commit, few become delta rows, and a long
/// transaction writes what it holds as segments before it commits.
#[test]
fn held_documents_are_written_as_segments_or_delta_rows() {
    use agentmem_core::search::held;
    let mut conn = open();
    let stored = |conn: &mut Sq| -> (i64, i64) {
        conn.0
            .query_row(
                "SELECT (SELECT count(*) FROM mem_idx_segments), (SELECT count(*) FROM mem_idx_delta)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };
    for k in 0..10 {
        search::index_new(&mut conn, NS, k, &format!("few number{k}"), NOW, true).unwrap();
    }
    assert_eq!(stored(&mut conn), (0, 0));
    search::write_held(&mut conn).unwrap();
    assert_eq!(stored(&mut conn), (0, 10));
    for k in 10..1010 {
        search::index_new(&mut conn, NS, k, &format!("many number{k}"), NOW, true).unwrap();
    }
    search::write_held(&mut conn).unwrap();
    assert_eq!(stored(&mut conn), (1, 10));
    // A transaction holding more than HELD_BYTES writes segments on its way.
    let long = "word ".repeat(2000);
    let mut k = 2000;
    while stored(&mut conn).0 < 2 {
        search::index_new(&mut conn, NS, k, &long, NOW, true).unwrap();
        k += 1;
        assert!(held::of(&mut conn).top_bytes() <= search::HELD_BYTES);
    }
    search::write_held(&mut conn).unwrap();
    let docs: Vec<(i64, String, i64)> = (0..10)
        .map(|k| (k, format!("few number{k}"), NOW))
        .chain((10..1010).map(|k| (k, format!("many number{k}"), NOW)))
        .chain((2000..k).map(|k| (k, long.clone(), NOW)))
        .collect();
    assert_eq!(
        search::check(&mut conn, NS, &docs).unwrap(),
        Vec::<String>::new()
    );
}

// ---------------------------------------------------------------- fixed cases

fn corpus(
    conn: &mut Sq,
    oracle: &mut Oracle,
    n: i64,
    text: impl Fn(i64) -> String,
    created: impl Fn(i64) -> i64,
) {
    for k in 0..n {
        let t = text(k);
        search::index_doc(conn, NS, k, &t, created(k), None).unwrap();
        oracle.docs.insert(k, (t, created(k)));
    }
}

#[test]
fn pruning_skips_documents() {
    let mut conn = open();
    let mut oracle = Oracle {
        docs: BTreeMap::new(),
    };
    corpus(
        &mut conn,
        &mut oracle,
        6000,
        |k| {
            let mut s = format!("common words here filler{} more text", k % 50);
            if k % 97 == 0 {
                s.push_str(" rare_name rare");
            }
            s
        },
        |k| NOW - (6000 - k) * 60_000,
    );
    search::optimize(&mut conn, NS).unwrap();
    let q = "rare_name common";
    let r = search::search(&mut conn, NS, q, &params(10), None).unwrap();
    assert_same(&r.hits, &oracle.search(q, &params(10), NOW, None), q);
    let matching = 6000;
    // The heap fills with `rare` documents within the first ~1000; after that the documents
    // with only `common` cannot reach the threshold and are skipped block by block.
    assert!(
        r.stats.scored_docs < matching / 5,
        "scored {} of {matching}",
        r.stats.scored_docs
    );
    // Same text everywhere: only recency separates documents, and its block bounds prune.
    let q = "common";
    let r = search::search(&mut conn, NS, q, &params(10), None).unwrap();
    assert_same(&r.hits, &oracle.search(q, &params(10), NOW, None), q);
    assert!(
        r.stats.scored_docs < 1000,
        "scored {} of {matching}",
        r.stats.scored_docs
    );
    assert!(r.stats.skipped_blocks > 0);
    eprintln!("recency-only query: {:?}", r.stats);
    // Without optimize: several segments (flushed at FLUSH_DOCS rows) plus a delta.
    let n = 3 * FLUSH_DOCS - 100;
    let text = |k: i64| {
        format!(
            "common filler{} {}",
            k % 50,
            if k % 97 == 0 { "rare" } else { "" }
        )
    };
    let mut conn = open();
    corpus(
        &mut conn,
        &mut Oracle {
            docs: BTreeMap::new(),
        },
        n,
        text,
        |k| NOW - k,
    );
    let r = search::search(&mut conn, NS, "rare common", &params(10), None).unwrap();
    assert!(
        r.stats.segments > 1 && r.stats.delta_docs > 0,
        "{:?}",
        r.stats
    );
    assert!(r.stats.scored_docs < 1000, "scored {}", r.stats.scored_docs);
    let expected: Vec<(i64, String, i64)> = (0..n).map(|k| (k, text(k), NOW - k)).collect();
    assert!(search::check(&mut conn, NS, &expected).unwrap().is_empty());
}

#[test]
fn recency_defaults_order_equal_matches_but_keep_better_old_ones() {
    let mut conn = open();
    let docs = [
        (1, "the LoginSchema validation failed", NOW - 30 * DAY),
        (2, "the LoginSchema validation failed", NOW - DAY),
        // A much better but old match: every query word, the exact name, a year ago.
        (
            3,
            "LoginSchema refresh_tokens: LoginSchema rejects refresh_tokens",
            NOW - 365 * DAY,
        ),
        // A weak new match: one part of one word, today.
        (4, "refresh the page after lunch and tea", NOW),
        (5, "unrelated words about lunch and dinner and more", NOW),
    ];
    for (k, t, c) in docs {
        search::index_doc(&mut conn, NS, k, t, c, None).unwrap();
    }
    let p = params(10);
    let r = search::search(&mut conn, NS, "LoginSchema validation", &p, None).unwrap();
    assert_eq!(
        r.hits.iter().map(|h| h.doc).take(2).collect::<Vec<_>>(),
        [2, 1],
        "{:?}",
        r.hits
    );
    assert_eq!(r.hits[0].bm25, r.hits[1].bm25);
    assert!(r.hits[0].recency > r.hits[1].recency);
    let r = search::search(&mut conn, NS, "LoginSchema refresh_tokens", &p, None).unwrap();
    assert_eq!(r.hits[0].doc, 3, "{:?}", r.hits);
    let new = r.hits.iter().find(|h| h.doc == 4).unwrap();
    assert!(new.recency > 1.29 && r.hits[0].recency < 1.0001);
    // The boost is bounded: an old match 1.3× better in BM25 always wins.
    assert!(search::scoring::DEFAULT_RECENCY_WEIGHT <= 0.3);
    // Per-call override: a huge weight lets today's weak match win.
    let strong = SearchParams {
        recency_weight: 100.0,
        ..p.clone()
    };
    let r = search::search(&mut conn, NS, "LoginSchema refresh_tokens", &strong, None).unwrap();
    let pos = |d: i64| r.hits.iter().position(|h| h.doc == d).unwrap();
    assert!(pos(4) < pos(3), "{:?}", r.hits);
    // Whole names rank above their parts.
    let r = search::search(
        &mut conn,
        NS,
        "login_schema",
        &SearchParams {
            recency_weight: 0.0,
            ..p
        },
        None,
    )
    .unwrap();
    assert!(r.hits.iter().any(|h| h.doc == 3));
}

#[test]
fn whole_names_rank_above_parts_and_parts_are_found() {
    let mut conn = open();
    let texts = [
        (1, "we changed LoginSchema today"),
        (2, "the login form has a schema"),
        (3, "see src/auth/login.ts for refresh_tokens"),
        (4, "refresh the tokens in my-component"),
        (5, "a component of mine"),
    ];
    for (k, t) in texts {
        search::index_doc(&mut conn, NS, k, t, NOW, None).unwrap();
    }
    let p = params(10);
    let ids = |conn: &mut Sq, q: &str| -> Vec<i64> {
        search::search(conn, NS, q, &p, None)
            .unwrap()
            .hits
            .iter()
            .map(|h| h.doc)
            .collect()
    };
    assert_eq!(ids(&mut conn, "LoginSchema")[..2], [1, 2]);
    assert_eq!(ids(&mut conn, "refresh_tokens")[..2], [3, 4]);
    assert_eq!(ids(&mut conn, "my-component")[..2], [4, 5]);
    assert_eq!(ids(&mut conn, "login.ts")[0], 3);
    let mut both = ids(&mut conn, "schema");
    both.sort();
    assert_eq!(both, [1, 2]);
    assert_eq!(ids(&mut conn, "\"login schema\""), [1]);
    let mut l = ids(&mut conn, "+login -form");
    l.sort();
    assert_eq!(l, [1, 3]);
    assert_eq!(ids(&mut conn, "auth*"), [3]);
}

#[test]
fn hostile_queries_return_nothing_without_error() {
    let mut conn = open();
    search::index_doc(&mut conn, NS, 1, "hello world", NOW, None).unwrap();
    let p = params(10);
    let punct = "!@#$%^&*()[]{};:'\",.<>/?\\|`~-+=".repeat(32_000);
    for q in ["", " ", "\"", "-", "+", "*", "- + *", "🚀", "\"\"", &punct] {
        let r = search::search(&mut conn, NS, q, &p, None).unwrap();
        assert!(r.hits.is_empty(), "{q:?}");
    }
    assert_eq!(
        search::search(&mut conn, NS, "\"hello", &p, None)
            .unwrap()
            .hits
            .len(),
        1
    );
    assert_eq!(
        search::search(&mut conn, NS, "hello", &params(0), None)
            .unwrap()
            .hits
            .len(),
        0
    );
    assert!(search::search(
        &mut conn,
        NS,
        "hello",
        &SearchParams {
            half_life_ms: -1.0,
            ..p.clone()
        },
        None
    )
    .is_err());
    assert!(search::search(&mut conn, "", "hello", &p, None).is_err());
    assert!(search::search(&mut conn, "empty-ns", "hello", &p, None)
        .unwrap()
        .hits
        .is_empty());
}

#[test]
fn rollback_and_second_database_never_see_stale_segments() {
    let mut conn = open();
    conn.0.execute_batch("BEGIN").unwrap();
    for k in 0..300 {
        search::index_doc(&mut conn, NS, k, &format!("ghost number{k}"), NOW, None).unwrap();
    }
    search::optimize(&mut conn, NS).unwrap();
    assert_eq!(
        search::search(&mut conn, NS, "ghost", &params(5), None)
            .unwrap()
            .hits
            .len(),
        5
    );
    conn.0.execute_batch("ROLLBACK").unwrap();
    assert!(search::search(&mut conn, NS, "ghost", &params(5), None)
        .unwrap()
        .hits
        .is_empty());
    for k in 0..300 {
        search::index_doc(&mut conn, NS, k, &format!("real number{k}"), NOW, None).unwrap();
    }
    assert!(search::search(&mut conn, NS, "ghost", &params(5), None)
        .unwrap()
        .hits
        .is_empty());
    let mut other = open();
    for k in 0..300 {
        search::index_doc(&mut other, NS, k, &format!("other number{k}"), NOW, None).unwrap();
    }
    assert!(search::search(&mut other, NS, "real", &params(5), None)
        .unwrap()
        .hits
        .is_empty());
    assert_eq!(
        search::search(&mut conn, NS, "real", &params(5), None)
            .unwrap()
            .hits
            .len(),
        5
    );
    let exp: Vec<(i64, String, i64)> = (0..300)
        .map(|k| (k, format!("real number{k}"), NOW))
        .collect();
    assert!(search::check(&mut conn, NS, &exp).unwrap().is_empty());
}

/// Problems are found wherever the document lives: in the delta, then in a segment.
#[test]
fn check_finds_problems_and_reindex_fixes_them() {
    for (place, flush) in [("the delta", false), ("segment 1", true)] {
        let mut conn = open();
        let mut exp: Vec<(i64, String, i64)> = (0..400)
            .map(|k| (k, format!("message {k} about topic{}", k % 9), NOW - k))
            .collect();
        for (k, t, c) in &exp {
            search::index_doc(&mut conn, NS, *k, t, *c, None).unwrap();
        }
        if flush {
            search::flush(&mut conn, NS, true).unwrap();
        }
        assert!(search::check(&mut conn, NS, &exp).unwrap().is_empty());
        exp[5].1 = "changed text".into();
        exp.push((1000, "new one".into(), NOW));
        exp.remove(0);
        let problems = search::check(&mut conn, NS, &exp).unwrap();
        let has = |s: &str| problems.iter().any(|p| p.contains(s));
        assert!(
            has(&format!("document 5: stale length in {place}")),
            "{problems:?}"
        );
        assert!(
            has(&format!("document 5: stale tokens in {place}")),
            "{problems:?}"
        );
        assert!(has("document 1000: missing from the index"), "{problems:?}");
        assert!(
            has(&format!("document 0: in {place} but not in the table")),
            "{problems:?}"
        );
        assert!(has("statistics: 400 documents"), "{problems:?}");
        search::reindex(&mut conn, NS, &exp).unwrap();
        assert!(search::check(&mut conn, NS, &exp).unwrap().is_empty());
        let r = search::search(&mut conn, NS, "changed", &params(3), None).unwrap();
        assert_eq!(r.hits[0].doc, 5);
    }
}

#[test]
fn segment_count_stays_logarithmic() {
    let mut conn = open();
    for k in 0..20_000 {
        search::index_doc(
            &mut conn,
            NS,
            k,
            &format!("w{} w{}", k % 100, k % 7),
            NOW,
            None,
        )
        .unwrap();
    }
    let segs: i64 = conn
        .0
        .query_row("SELECT count(*) FROM mem_idx_segments", [], |r| r.get(0))
        .unwrap();
    assert!(segs <= 2 * 7 + 1, "{segs} segments");
    assert_eq!(search::optimize(&mut conn, NS).unwrap(), 1);
    let segs: i64 = conn
        .0
        .query_row("SELECT count(*) FROM mem_idx_segments", [], |r| r.get(0))
        .unwrap();
    assert_eq!(segs, 1);
    assert_eq!(search::optimize(&mut conn, NS).unwrap(), 0);
}

/// A phrase costs what the postings of its distinct terms cost, whatever its length: the
/// probe's `"ka ka … ka"` (5000 words) on a corpus where every document says "ka" did 5 ms of
/// work per word. Work is counted (`steps`), never timed.
#[test]
fn phrase_cost_is_bounded_by_the_postings_of_its_terms() {
    let mut conn = open();
    let n = 3000i64;
    for k in 0..n {
        let text = format!("ka ka ka doc{k} words around ka the middle {} ka", k % 7);
        search::index_doc(&mut conn, NS, k, &text, NOW - k, None).unwrap();
    }
    search::optimize(&mut conn, NS).unwrap();
    let df = n as u64; // every document holds "ka"
    let p = params(10);
    let long = format!("\"{}\"", "ka ".repeat(5000));
    let r = search::search(&mut conn, NS, &long, &p, None).unwrap();
    assert!(r.hits.is_empty());
    assert!(
        r.stats.steps <= 3 * df,
        "{} steps for {df} postings",
        r.stats.steps
    );
    // A phrase that does occur is found, with the same bound.
    let r = search::search(&mut conn, NS, "\"ka ka ka doc17\"", &p, None).unwrap();
    assert_eq!(r.hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [17]);
    assert!(r.stats.steps <= 3 * df);
    // Thousands of distinct words in one phrase: bounded by the rarest one's postings.
    let many: String = (0..4000).map(|i| format!("w{i} ")).collect();
    let r = search::search(&mut conn, NS, &format!("\"ka {many}\""), &p, None).unwrap();
    assert!(r.hits.is_empty());
    assert!(r.stats.steps <= 3 * df, "{}", r.stats.steps);
}

/// A cancelled search or merge ends with the host's error.
#[test]
fn long_work_stops_when_the_host_cancels() {
    struct Cancelling(Sq, u32);
    impl agentmem_core::Conn for Cancelling {
        fn dialect(&self) -> Dialect {
            self.0.dialect()
        }
        fn query(
            &mut self,
            sql: &str,
            params: &[agentmem_core::Value],
        ) -> agentmem_core::Result<Vec<agentmem_core::Row>> {
            self.0.query(sql, params)
        }
        fn execute(
            &mut self,
            sql: &str,
            params: &[agentmem_core::Value],
        ) -> agentmem_core::Result<u64> {
            self.0.execute(sql, params)
        }
        fn execute_batch(&mut self, sql: &str) -> agentmem_core::Result<()> {
            self.0.execute_batch(sql)
        }
        fn as_conn(&mut self) -> &mut dyn agentmem_core::Conn {
            self
        }
        fn session(&mut self) -> &mut agentmem_core::db::session::Session {
            self.0.session()
        }
        fn check_interrupt(&mut self) -> agentmem_core::Result<()> {
            self.1 += 1;
            Err(agentmem_core::Error::Database("interrupted".into()))
        }
    }
    let mut conn = Cancelling(open(), 0);
    for k in 0..6000i64 {
        search::index_doc(
            &mut conn,
            NS,
            k,
            &format!("common word {k} again"),
            NOW,
            None,
        )
        .unwrap();
    }
    let mut p = params(5000);
    p.recency_weight = 0.0;
    let e = search::search(&mut conn, NS, "common word again", &p, None).unwrap_err();
    assert_eq!(e.to_string(), "interrupted");
    assert!(conn.1 >= 1);
    let e = search::optimize(&mut conn, NS).unwrap_err();
    assert_eq!(e.to_string(), "interrupted");
}
