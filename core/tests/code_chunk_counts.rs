//! The code chunks' token counts through re-indexing: a chunk that only moved keeps its row's
//! count, one whose text changed is counted again, and every count equals its text's.
#![cfg(feature = "code")]

mod common;

use agentmem_core::graph::index;
use agentmem_core::tokens::{count, Encoding};
use agentmem_core::{Conn, Value};
use common::{as_call, open_with_triggers, Sq};

/// Each chunk of the file as (first line, text, stored token count), by first line.
fn chunks(c: &mut Sq) -> Vec<(i64, String, i64)> {
    let mut out: Vec<(i64, String, i64)> = c
        .query(
            "SELECT start_line, content, token_count FROM mem_code_chunks WHERE file_path = 'src/a.rs'",
            &[],
        )
        .unwrap()
        .into_iter()
        .map(|r| match &r[..] {
            [Value::Int(line), Value::Text(text), Value::Int(n)] => (*line, text.clone(), *n),
            other => panic!("a chunk row of other types: {other:?}"),
        })
        .collect();
    out.sort();
    out
}

fn index(c: &mut Sq, source: &str) -> Vec<(i64, String, i64)> {
    as_call(|| index::index_file(c, "r", "src/a.rs", source, None)).unwrap();
    let got = chunks(c);
    for (line, text, n) in &got {
        assert_eq!(
            *n,
            count(text, Encoding::O200kBase),
            "the chunk at line {line}: {text:?}"
        );
    }
    got
}

#[test]
fn chunk_counts_follow_their_text_through_moves_and_edits() {
    let mut c = open_with_triggers();
    let first = "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n";
    let before = index(&mut c, first);
    assert!(before.len() >= 2, "{before:?}");

    // Two lines above every function: each chunk moves, its text and count stay.
    let moved = index(&mut c, &format!("// a comment\n\n{first}"));
    let texts = |v: &[(i64, String, i64)]| {
        v.iter()
            .map(|(_, t, n)| (t.clone(), *n))
            .collect::<Vec<_>>()
    };
    for (t, n) in texts(&before) {
        assert!(
            texts(&moved).contains(&(t.clone(), n)),
            "{t:?} kept its count: {moved:?}"
        );
    }
    assert_ne!(
        before.iter().map(|x| x.0).collect::<Vec<_>>(),
        moved.iter().map(|x| x.0).collect::<Vec<_>>(),
        "the chunks moved"
    );

    // One body edited: its chunk is counted again.
    let edited = index(
        &mut c,
        &format!(
            "// a comment\n\n{}",
            first.replace("two();", "two(); three(4, 5, \"six\");")
        ),
    );
    assert!(
        edited.iter().any(|(_, t, _)| t.contains("three(4, 5")),
        "{edited:?}"
    );
}
