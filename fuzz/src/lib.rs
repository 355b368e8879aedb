//! Fuzz targets. Each takes arbitrary bytes, runs one part of the core on them, and panics
//! when an invariant breaks: a panic is a finding. `make fuzz` drives them with AFL++ (coverage
//! guided, `cargo afl`); `make test` replays the saved corpus (`fuzz/corpus/<target>/`, every
//! past finding included) and a few thousand structured random inputs.
//!
//! Targets:
//! * [`query`] — the query parser and the engine over a small index built from the input,
//!   with the cost bound asserted by counting work (never by time);
//! * [`tokenizer`] — the token counter against tiktoken; search tokens, positions and spans;
//! * [`answer`] — the observer's and reflector's answer parser;
//! * [`options`] — the JSON options of the functions and the tools' arguments.

use agentmem_core::search::engine::{self, Pending, View};
use agentmem_core::search::{delta, query, stem, tokenizer, SearchParams};
use agentmem_core::tokens::Encoding;
use agentmem_core::{Conn, Dialect, Error, Result, Row, Value};

/// Inputs are cut at this byte into parts (the query, then documents).
pub const SEPARATOR: u8 = 0xFF;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The query target. Input: `query 0xFF doc 0xFF doc …` (at most 64 documents, spread over
/// two segments built into pages, the first document of each deleted as a real index holds
/// pending deletions).
pub fn query(data: &[u8]) {
    let mut parts = data.split(|&b| b == SEPARATOR);
    let q = text(parts.next().unwrap_or_default());
    let docs: Vec<delta::DocTerms> = parts
        .take(64)
        .map(|d| delta::analyze(&text(&d[..d.len().min(2048)])))
        .collect();
    let payloads: Vec<Vec<u8>> = docs.iter().map(delta::encode).collect();
    let postings: u64 = docs.iter().map(|d| d.terms.len() as u64).sum();
    let half = docs.len() / 2;
    let mut views = Vec::new();
    for range in [0..half, half..docs.len()] {
        let fresh: Vec<delta::Pending<'_>> = range
            .clone()
            .map(|i| delta::Pending {
                key: i as i64,
                created: 1_000 + i as i64,
                len: docs[i].len,
                payload: &payloads[i],
            })
            .collect();
        let Some(mut view) =
            View::in_memory(&fresh, &|_| true).expect("pages from analysed documents")
        else {
            continue;
        };
        let first = &docs[range.start];
        view.seg.pending = Pending {
            ords: vec![0],
            len: u64::from(first.len),
            terms: first
                .terms
                .iter()
                .map(|(t, _)| (t.as_bytes().to_vec(), 1))
                .collect(),
        };
        views.push(view);
    }
    let parsed = query::parse(&q);
    let params = SearchParams {
        limit: 5,
        now: Some(10_000),
        ..SearchParams::default()
    };
    let r = engine::execute(
        &mut NoDatabase::default(),
        &mut views,
        &parsed,
        &params,
        10_000,
        None,
    )
    .expect("a search over pages in memory succeeds");
    assert!(r.hits.len() <= params.limit);
    for w in r.hits.windows(2) {
        assert!(w[0].score >= w[1].score, "hits not in score order");
    }
    for h in &r.hits {
        assert!(h.score.is_finite() && h.score >= 0.0, "score {}", h.score);
        assert!(
            h.doc != 0 && h.doc as usize != half,
            "a deleted document was returned"
        );
    }
    // Work is bounded by the index, not by the query's length: a few steps per posting.
    let bound = 8 * postings + 64;
    assert!(
        r.stats.steps <= bound,
        "{} steps over {postings} postings",
        r.stats.steps
    );
}

/// The tokenizer target: the message token counter agrees with tiktoken; every search
/// token has text, lies inside its source on character
/// boundaries, is case-folded, and positions never go back; stems follow their words.
pub fn tokenizer(data: &[u8]) {
    let t = text(data);
    let tokens = tokenizer::tokenize(&t);
    let mut last = 0;
    for (i, tok) in tokens.iter().enumerate() {
        if tok.kind == tokenizer::Kind::Stem {
            // A stem follows its word, at the same place.
            let word = &tokens[i.checked_sub(1).expect("a stem follows its word")];
            assert!(word.kind == tokenizer::Kind::Atom && word.pos == tok.pos);
            assert!(tok.text.starts_with(stem::STEM_MARK) && tok.text != word.text);
        } else {
            assert!(
                !tok.text.contains(stem::STEM_MARK),
                "a word holds the stem mark"
            );
        }
        assert!(!tok.text.is_empty());
        assert!(tok.start < tok.end && tok.end <= t.len());
        assert!(t.is_char_boundary(tok.start) && t.is_char_boundary(tok.end));
        assert!(tok.pos >= last, "positions go back");
        last = tok.pos;
        assert!(tok.text.len() <= tokenizer::MAX_WHOLE_BYTES.max(tokenizer::MAX_ATOM_BYTES));
    }
    for (e, bpe) in [
        (Encoding::O200kBase, tiktoken_rs::o200k_base_singleton()),
        (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton()),
    ] {
        assert_eq!(
            agentmem_core::tokens::count(&t, e),
            bpe.encode_ordinary(&t).len() as i64,
            "token count differs from tiktoken's ({e:?})"
        );
    }
    let d = delta::analyze(&t);
    let stems = tokens
        .iter()
        .filter(|t| t.kind == tokenizer::Kind::Stem)
        .count();
    assert_eq!(d.len as usize, tokens.len() - stems);
    let enc = delta::encode(&d);
    assert_eq!(
        delta::analyze_encoded(&t),
        (d.len, enc.clone()),
        "direct encoding differs"
    );
    assert_eq!(delta::decode(&enc, d.len), Some(d));
    let _ = agentmem_core::search::snippet(&t, &t, &Default::default());
}

/// The answer target: the parser never panics, and what it accepts has observations without
/// our tags in them.
pub fn answer(data: &[u8]) {
    let t = text(data);
    if let Ok(p) = agentmem_core::om::parse::parse("answer", &t) {
        assert!(p.observations.chars().any(char::is_alphanumeric));
        let lower = p.observations.to_ascii_lowercase();
        assert!(!lower.contains("<observations>") && !lower.contains("</observations>"));
        assert!(!lower.contains("</thread>"));
    }
}

/// A connection where every statement fails: the tools must still answer JSON.
#[derive(Default)]
struct NoDatabase(agentmem_core::db::session::Session);

impl Conn for NoDatabase {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn query(&mut self, _: &str, _: &[Value]) -> Result<Vec<Row>> {
        Err(Error::Database("no database".into()))
    }
    fn execute(&mut self, _: &str, _: &[Value]) -> Result<u64> {
        Err(Error::Database("no database".into()))
    }
    fn execute_batch(&mut self, _: &str) -> Result<()> {
        Err(Error::Database("no database".into()))
    }
    fn attempt(&mut self, f: &mut agentmem_core::db::conn::Work<'_>) -> Result<Result<()>> {
        Ok(f(self))
    }
    fn as_conn(&mut self) -> &mut dyn Conn {
        self
    }
    fn session(&mut self) -> &mut agentmem_core::db::session::Session {
        &mut self.0
    }
}

/// The options target: option parsers refuse or accept, never panic; the tools answer JSON
/// whatever their arguments, with `success` false on every bad call. Input: `arguments 0xFF
/// context`.
pub fn options(data: &[u8]) {
    let mut parts = data.split(|&b| b == SEPARATOR);
    let input = parts.next().unwrap_or_default();
    let context = parts.next();
    let t = text(input);
    let _ = agentmem_core::recall::search::Request::parse(Some(&t));
    if let Ok(o) = agentmem_core::json_opts::Opts::parse("options", Some(&t), &["limit", "a", "b"])
    {
        let _ = o.int("limit", 10, 0, 100);
        let _ = o.opt_f64("a");
        let _ = o.opt_str("b");
        let _ = o.opt_object("a");
        let _ = o.opt_bool("b");
    }
    let _ = agentmem_core::json_opts::Opts::parse("options", Some(&t), &["labels", "priority"])
        .map(|o| (o.opt_strings("labels"), o.opt_int("priority")));
    let tools = agentmem_core::tools::TOOLS.iter().map(|t| {
        agentmem_core::tools::call(
            &mut NoDatabase::default(),
            Some(t.name.as_bytes()),
            Some(input),
            context,
        )
    });
    for out in tools.chain([agentmem_core::tools::call(
        &mut NoDatabase::default(),
        Some(input),
        Some(input),
        context,
    )]) {
        let out = out.expect("a tool answers, even when every statement fails");
        let v: serde_json::Value = serde_json::from_str(&out).expect("a tool answers JSON");
        assert!(v.get("success").is_some_and(|s| s.is_boolean()), "{out}");
    }
}
