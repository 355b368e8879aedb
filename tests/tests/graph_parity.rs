//! The graph closure is the same on SQLite and Postgres under the same random sequence of
//! changes — through the functions and through plain SQL, settings changes included — and
//! equals the naive oracle (every simple path) on Postgres, compared after every step.

use agentmem_tests::backend::{Backend, Cell, Param, Postgres, Rows, Sqlite};
use agentmem_tests::graph_oracle::{self, Edge};
use agentmem_tests::Rng;
use std::collections::BTreeMap;

const NODES: u64 = 7;

fn closure(db: &mut dyn Backend) -> Rows {
    agentmem_tests::closure::rows(db)
}

fn text(c: &Cell) -> String {
    match c {
        Cell::Text(t) => t.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn int(c: &Cell) -> i64 {
    match c {
        Cell::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn real(c: &Cell) -> f64 {
    match c {
        Cell::Real(r) => *r,
        Cell::Int(i) => *i as f64,
        other => panic!("expected a number, got {other:?}"),
    }
}

/// The oracle's closure for the edges and settings `db` holds, as `closure` orders rows.
fn oracle(db: &mut dyn Backend) -> BTreeMap<(String, String), graph_oracle::Row> {
    let edges: Vec<Edge> = db
        .query(
            "SELECT from_id, to_id, type, weight, CASE WHEN stale_at IS NULL AND invalid_at \
             IS NULL THEN 1 ELSE 0 END FROM mem_graph_edges",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| Edge {
            from: text(&r[0]),
            to: text(&r[1]),
            ty: text(&r[2]),
            weight: real(&r[3]),
            live: int(&r[4]) == 1,
        })
        .collect();
    let s = db
        .query(
            "SELECT max_depth, hub_in_degree FROM mem_graph_settings WHERE resource_id = 'r'",
            &[],
        )
        .unwrap();
    let (depth, hub) = s.first().map_or((4, 1000), |r| (int(&r[0]), int(&r[1])));
    graph_oracle::closure(&edges, depth as usize, hub as usize)
}

fn as_map(rows: &Rows) -> BTreeMap<(String, String), graph_oracle::Row> {
    rows.iter()
        .map(|r| {
            let nodes: Vec<String> = serde_json::from_str(&text(&r[3])).unwrap();
            let types: Vec<String> = serde_json::from_str(&text(&r[4])).unwrap();
            (
                (text(&r[0]), text(&r[1])),
                (int(&r[2]) as usize, nodes, types, real(&r[5])),
            )
        })
        .collect()
}

/// One random change as (SQL, parameters): the same on both backends.
fn change(rng: &mut Rng) -> (String, Vec<Param>) {
    let a = format!("n{}", rng.next() % NODES);
    let b = format!("n{}", rng.next() % NODES);
    let ty = if rng.chance(50) { "calls" } else { "imports" };
    let w = [0.5, 1.0, 2.0][(rng.next() % 3) as usize];
    let p = |v: Vec<&str>| v.into_iter().map(|s| Param::Text(s.into())).collect();
    match rng.next() % 9 {
        0 | 1 => (
            format!("SELECT graph_edge_add($1, $2, $3, '{{\"weight\":{w}}}')"),
            p(vec![&a, &b, ty]),
        ),
        2 => (
            format!(
                "INSERT INTO mem_graph_edges (resource_id, from_id, to_id, type, weight) \
                 VALUES ('r', $1, $2, $3, {w}) ON CONFLICT DO NOTHING"
            ),
            p(vec![&a, &b, ty]),
        ),
        3 => (
            "DELETE FROM mem_graph_edges WHERE from_id = $1 AND type = $2".into(),
            p(vec![&a, ty]),
        ),
        4 => (
            "UPDATE mem_graph_edges SET stale_at = CASE WHEN stale_at IS NULL THEN 1 END \
             WHERE from_id = $1"
                .into(),
            p(vec![&a]),
        ),
        5 => (
            format!("UPDATE mem_graph_edges SET weight = {w} WHERE to_id = $1"),
            p(vec![&a]),
        ),
        6 => (
            "SELECT graph_edge_invalidate(id, 5) FROM mem_graph_edges WHERE from_id = $1".into(),
            p(vec![&a]),
        ),
        7 => {
            let (depth, hub) = (2 + rng.next() % 3, 1 + rng.next() % 3);
            (
                format!(
                    "SELECT graph_configure('r', '{{\"max_depth\":{depth},\"hub_in_degree\":{hub}}}')"
                ),
                vec![],
            )
        }
        _ => ("SELECT graph_node_remove($1)".into(), p(vec![&a])),
    }
}

fn nodes(db: &mut dyn Backend) {
    for i in 0..NODES {
        db.query(
            "SELECT graph_node_upsert('r', $1)",
            &[Param::Text(format!(
                r#"{{"id":"n{i}","type":"file","label":"f{i}","file_path":"src/f{i}.rs"}}"#
            ))],
        )
        .unwrap();
    }
}

#[test]
fn random_changes_give_the_same_closure_on_both_backends() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut pg = Postgres::connect(&url);
    let (mut most, mut hubs) = (0, 0);
    for seed in 1..=6u64 {
        let mut lite = Sqlite::open(":memory:");
        pg.reset().unwrap();
        nodes(&mut lite);
        nodes(&mut pg);
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        for step in 0..80 {
            let (sql, params) = change(&mut rng);
            let a = lite.query(&sql, &params).map(|_| ());
            let b = pg.query(&sql, &params).map(|_| ());
            assert_eq!(
                a.is_ok(),
                b.is_ok(),
                "seed {seed} step {step}: {sql}: {a:?} vs {b:?}"
            );
            if sql.contains("graph_node_remove") {
                nodes(&mut lite);
                nodes(&mut pg);
            }
            let rows = closure(&mut lite);
            most = most.max(rows.len());
            let on_pg = closure(&mut pg);
            let h = pg
                .query("SELECT count(*) FROM mem_graph_hubs", &[])
                .unwrap();
            hubs = hubs.max(int(&h[0][0]));
            assert_eq!(rows, on_pg, "seed {seed} step {step}: {sql} {params:?}");
            assert_eq!(as_map(&on_pg).len(), on_pg.len(), "one row per pair");
            assert_eq!(
                as_map(&on_pg),
                oracle(&mut pg),
                "Postgres against the oracle, seed {seed} step {step}: {sql} {params:?}"
            );
        }
    }
    assert!(
        most >= 10 && hubs >= 1,
        "the random graphs stayed trivial ({most} closure rows, {hubs} hubs at most)"
    );
    pg.reset().unwrap();
}

/// What shows that closure rows were written: SQLite counts every row a statement changes
/// (the closure's included), Postgres gives a rewritten row a new `xmin`.
fn closure_writes(db: &mut dyn Backend) -> Rows {
    let sql = match db.name() {
        "sqlite" => "SELECT total_changes()",
        _ => "SELECT xmin::text FROM mem_graph_closure ORDER BY ancestor, descendant",
    };
    db.query(sql, &[]).unwrap()
}

#[test]
fn writing_an_edge_again_as_it_was_leaves_the_closure_alone() {
    // A database of its own: the random test above resets the shared one as it goes.
    const DB: &str = "agentmem_graph_rewrite";
    let url = agentmem_tests::pg_url();
    let mut dbs: Vec<Box<dyn Backend>> = vec![Box::new(Sqlite::open(":memory:"))];
    if let Some(url) = &url {
        let mut pg = Postgres::connect(&agentmem_tests::pg_database(url, DB));
        pg.reset().unwrap();
        dbs.push(Box::new(pg));
    }
    for db in &mut dbs {
        let db = db.as_mut();
        nodes(db);
        for (a, b) in [("n0", "n1"), ("n1", "n2"), ("n2", "n3")] {
            db.query(
                "SELECT graph_edge_add($1, $2, 'imports')",
                &[Param::Text(a.into()), Param::Text(b.into())],
            )
            .unwrap();
        }
        let before = closure(db);
        // Each statement below changes one edge row and nothing the closure reads; on SQLite
        // the only change counted is the edge's own.
        let unchanged = [
            "SELECT graph_edge_add('n1', 'n2', 'imports', '{\"weight\": 1, \"confidence\": 0.5}')",
            "UPDATE mem_graph_edges SET weight = weight, updated_at = updated_at + 1 \
             WHERE from_id = 'n1'",
            "UPDATE mem_graph_edges SET invalid_at = NULL, stale_at = NULL WHERE from_id = 'n1'",
        ];
        for sql in unchanged {
            let mark = closure_writes(db);
            db.query(sql, &[]).unwrap();
            let after = closure_writes(db);
            if db.name() == "sqlite" {
                assert_eq!(int(&after[0][0]), int(&mark[0][0]) + 1, "sqlite: {sql}");
            } else {
                assert_eq!(after, mark, "{}: {sql}", db.name());
            }
        }
        assert_eq!(closure(db), before, "{}", db.name());
        // A new weight is seen: the rows through the edge are written again.
        let mark = closure_writes(db);
        db.query(
            "SELECT graph_edge_add('n1', 'n2', 'imports', '{\"weight\": 2}')",
            &[],
        )
        .unwrap();
        assert_ne!(closure_writes(db), mark, "{}", db.name());
        assert_ne!(closure(db), before, "{}", db.name());
    }
    drop(dbs);
    if let Some(url) = &url {
        agentmem_tests::pg_drop_database(url, DB);
    }
}

/// A load of `edges` into resource `r`, with the nodes they name.
fn load(db: &mut dyn Backend, nodes: std::ops::Range<usize>, edges: &[(usize, usize)]) {
    let nodes: Vec<String> = nodes
        .map(|i| format!(r#"{{"id":"b{i}","type":"file","label":"b{i}"}}"#))
        .collect();
    let edges: Vec<String> = edges
        .iter()
        .map(|(a, b)| format!(r#"{{"from":"b{a}","to":"b{b}","type":"imports"}}"#))
        .collect();
    let graph = format!(
        r#"{{"nodes":[{}],"edges":[{}]}}"#,
        nodes.join(","),
        edges.join(",")
    );
    db.query("SELECT graph_load('r', $1)", &[Param::Text(graph)])
        .unwrap_or_else(|e| panic!("{}: graph_load of {} edges: {e}", db.name(), edges.len()));
}

/// Loads large enough for the bulk rules (a thousand edges and more, into an empty resource
/// and into one that holds a closure already), then single edges out of a node that reaches
/// hundreds: the same closure on both backends.
#[test]
fn bulk_loads_give_the_same_closure_on_both_backends() {
    const DB: &str = "agentmem_graph_bulk";
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut pg = Postgres::connect(&agentmem_tests::pg_database(&url, DB));
    pg.reset().unwrap();
    let mut dbs: Vec<Box<dyn Backend>> = vec![Box::new(Sqlite::open(":memory:")), Box::new(pg)];
    // A tree of fan-out 4, then edges across its levels.
    let tree: Vec<(usize, usize)> = (1..1200).map(|i| ((i - 1) / 4, i)).collect();
    let across: Vec<(usize, usize)> = (0..1100).map(|i| (i, 1200 + i % 300)).collect();
    let mut closures = Vec::new();
    for db in &mut dbs {
        let db = db.as_mut();
        load(db, 0..1200, &tree);
        load(db, 1200..1500, &across);
        for to in [1300, 1450, 5] {
            db.query(
                "SELECT graph_edge_add('b0', $1, 'calls')",
                &[Param::Text(format!("b{to}"))],
            )
            .unwrap();
        }
        closures.push(closure(db));
    }
    assert!(
        closures[0].len() > 5_000,
        "{} closure rows",
        closures[0].len()
    );
    assert_eq!(closures[0], closures[1]);
    drop(dbs);
    agentmem_tests::pg_drop_database(&url, DB);
}
