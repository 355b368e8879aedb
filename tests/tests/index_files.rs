//! The search index's merge bound and the reuse of freed pages, on a load large enough to
//! merge (core `search::merge`, pg-ext `page_space`).
//!
//! Postgres bounds merges to an eighth of the index and reuses the pages merges free before
//! `VACUUM`; SQLite merges without a bound. The two must still answer every search alike
//! (their segments differ, their rankings may not), no Postgres merge may write more than the
//! bound, and the table of pages must stay near the live size instead of growing by every
//! merge's output.

use agentmem_tests::backend::{Backend, Cell, Param, Postgres, Sqlite};
use agentmem_tests::sample::one;

/// Messages loaded: enough for the bound (an eighth, at least 8 192) to cut merges.
const MESSAGES: i64 = 60_000;
/// Rows per transaction, as `make bench` loads.
const BATCH: i64 = 1_000;

/// Loads the same messages on either backend: texts built by the database from the row
/// number, so both hold the same words at the same times.
fn load(db: &mut dyn Backend) {
    let t = one(db, "SELECT mem_thread_create('r1')", &[]);
    for from in (0..MESSAGES).step_by(BATCH as usize) {
        db.query(
            "WITH RECURSIVE g(i) AS (SELECT CAST($2 AS BIGINT) UNION ALL SELECT i + 1 FROM g \
             WHERE i < CAST($3 AS BIGINT)) \
             INSERT INTO mem_messages (thread_id, role, raw_content, created_at) \
             SELECT $1, 'user', 'w' || (i % 50) || ' v' || (i * 7 % 500) \
                    || ' x' || (i * 13 % 5000) || ' doc' || i || ' common', \
                    1700000000000 + i * 1000 FROM g",
            &[
                Param::Text(t.clone()),
                Param::Int(from),
                Param::Int(from + BATCH - 1),
            ],
        )
        .unwrap();
    }
}

/// Each query's hits as (text, score), best first, ties by text.
fn answers(db: &mut dyn Backend) -> Vec<Vec<Vec<Cell>>> {
    ["w7 v21", "x123", "common w3", "doc59999", "v7 x91 w7"]
        .iter()
        .map(|q| {
            db.query(
                "SELECT m.raw_content, s.score FROM mem_search($1, \
                 '{\"limit\":10,\"now\":1700060000000}') s \
                 JOIN mem_messages m ON m.id = s.message_id ORDER BY s.score DESC, m.raw_content",
                &[Param::Text((*q).to_owned())],
            )
            .unwrap()
        })
        .collect()
}

fn ints(db: &mut dyn Backend, sql: &str) -> Vec<i64> {
    db.query(sql, &[])
        .unwrap()
        .into_iter()
        .map(|r| match &r[0] {
            Cell::Int(v) => *v,
            other => panic!("{sql}: not an integer: {other:?}"),
        })
        .collect()
}

/// The segments' document counts, smallest first.
fn segment_sizes(db: &mut dyn Backend) -> Vec<i64> {
    ints(
        db,
        "SELECT doc_count FROM mem_idx_segments ORDER BY doc_count",
    )
}

#[test]
fn bounded_merges_answer_as_unbounded_ones_and_reuse_their_pages() {
    let mut sqlite = Sqlite::open(":memory:");
    sqlite.reset().unwrap();
    load(&mut sqlite);
    let want = answers(&mut sqlite);
    assert!(want.iter().all(|hits| !hits.is_empty()));

    let Some(server) = agentmem_tests::pg_url() else {
        return;
    };
    let url = agentmem_tests::pg_database(&server, "agentmem_index_files");
    let mut pg = Postgres::connect(&url);
    pg.reset().unwrap();
    load(&mut pg);
    assert_eq!(answers(&mut pg), want);

    // No merge wrote more than the bound of the index it merged in (the index only grew, so
    // the final bound is the largest).
    let sizes = segment_sizes(&mut pg);
    let bound = (MESSAGES / 8).max(8192);
    assert!(sizes.len() >= 6, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n <= bound), "{sizes:?} past {bound}");
    let in_delta = ints(&mut pg, "SELECT count(*) FROM mem_idx_delta")[0];
    assert_eq!(sizes.iter().sum::<i64>() + in_delta, MESSAGES);

    // The pages merges freed were written over: without reuse the table holds every merge's
    // output (about three times the live pages here).
    let files_and_live = |pg: &mut Postgres| {
        let file = ints(pg, "SELECT pg_relation_size('mem_idx_pages')")[0];
        let live = ints(
            pg,
            "SELECT sum(octet_length(data))::bigint FROM mem_idx_pages",
        )[0];
        (file, live)
    };
    let (file, live) = files_and_live(&mut pg);
    assert!(
        file * 10 <= live * 14,
        "pages file {file} bytes for {live} live"
    );

    // Optimize, call after call, until it says the index is in shape: the same answers, no
    // two segments one merge could join, and the files still near the live size.
    let mut calls = 0;
    while ints(&mut pg, "SELECT mem_optimize()::bigint")[0] > 0 {
        calls += 1;
        assert!(calls < 50, "mem_optimize() never reached 0");
    }
    assert_eq!(answers(&mut pg), want);
    let sizes = segment_sizes(&mut pg);
    assert!(sizes[0] + sizes[1] > bound, "{sizes:?}");
    let (file, live) = files_and_live(&mut pg);
    assert!(
        file * 10 <= live * 14,
        "pages file {file} bytes for {live} live"
    );
    drop(pg);
    agentmem_tests::pg_drop_database(&server, "agentmem_index_files");
}
