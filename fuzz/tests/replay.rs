//! The fuzz targets in `make test`: every saved input (`fuzz/corpus/<target>/`, seeds and
//! past findings), then structured random inputs built from the pieces that matter to each
//! target (tags, quotes, operators, repetition), so a regression shows up without AFL.

use proptest::prelude::*;
use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_file() {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    assert!(!out.is_empty(), "no corpus in {}", dir.display());
    out
}

fn replay(target: &str, f: fn(&[u8])) {
    for (path, data) in corpus(target) {
        let r = std::panic::catch_unwind(|| f(&data));
        assert!(r.is_ok(), "{target}: {} fails", path.display());
    }
}

#[test]
fn saved_inputs_pass() {
    replay("query", agentmem_fuzz::query);
    replay("tokenizer", agentmem_fuzz::tokenizer);
    replay("answer", agentmem_fuzz::answer);
    replay("options", agentmem_fuzz::options);
}

/// Pieces that the targets' grammars care about, joined at random.
fn pieces(set: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            3 => proptest::sample::select(set).prop_map(|s| s.as_bytes().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 0..8),
            1 => (proptest::sample::select(set), 1usize..300)
                .prop_map(|(s, n)| s.repeat(n).into_bytes()),
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

const QUERY: &[&str] = &[
    "\"",
    "+",
    "-",
    "*",
    " ",
    "ka ",
    "login",
    "LoginSchema",
    "src/auth/login.ts",
    "refresh_tokens",
    "\u{ff}",
    "é",
    "東京",
    "\"ka ka\"",
    "+\"a b\"",
    "-x",
    "pre*",
    "::",
    ".",
    "_",
];
const ANSWER: &[&str] = &[
    "<observations>",
    "</observations>",
    "<current-task>",
    "</current-task>",
    "<suggested-response>",
    "</suggested-response>",
    "<thread id=\"t\">",
    "</thread>",
    "<OBSERVATIONS x>",
    "* note",
    "\n",
    "\0",
    "<",
    ">",
    "words",
];
const OPTIONS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"action\"",
    ":",
    ",",
    "\"search\"",
    "\"ready\"",
    "\"create\"",
    "\"query\"",
    "\"limit\"",
    "1",
    "-1",
    "1e309",
    "null",
    "true",
    "\"labels\"",
    "\"title\"",
    "\u{ff}",
    "\"\\u0000\"",
    "\"threadId\"",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, .. ProptestConfig::default() })]

    #[test]
    fn random_queries(data in pieces(QUERY)) {
        agentmem_fuzz::query(&data);
    }

    #[test]
    fn random_text(data in pieces(QUERY)) {
        agentmem_fuzz::tokenizer(&data);
    }

    #[test]
    fn random_answers(data in pieces(ANSWER)) {
        agentmem_fuzz::answer(&data);
    }

    #[test]
    fn random_options(data in pieces(OPTIONS)) {
        agentmem_fuzz::options(&data);
    }
}
