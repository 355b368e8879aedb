//! The graph closure is the same on SQLite and Postgres under the same random sequence of
//! changes — through the functions and through plain SQL — compared after every step. (The
//! closure itself is checked against every simple path in `core/tests/graph_closure.rs`.)

use agentmem_tests::backend::{Backend, Param, Postgres, Rows, Sqlite};
use agentmem_tests::Rng;

const NODES: u64 = 7;

fn closure(db: &mut dyn Backend) -> Rows {
    db.query(
        "SELECT ancestor_id, descendant_id, depth, path, edge_types, total_weight \
         FROM mem_graph_closure ORDER BY ancestor_id, descendant_id",
        &[],
    )
    .unwrap()
}

/// One random change as (SQL, parameters): the same on both backends.
fn change(rng: &mut Rng) -> (String, Vec<Param>) {
    let a = format!("n{}", rng.next() % NODES);
    let b = format!("n{}", rng.next() % NODES);
    let ty = if rng.chance(50) { "calls" } else { "imports" };
    let w = [0.5, 1.0, 2.0][(rng.next() % 3) as usize];
    let p = |v: Vec<&str>| v.into_iter().map(|s| Param::Text(s.into())).collect();
    match rng.next() % 8 {
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
    let mut most = 0;
    for seed in 1..=4u64 {
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
            assert_eq!(
                rows,
                closure(&mut pg),
                "seed {seed} step {step}: {sql} {params:?}"
            );
        }
    }
    assert!(
        most >= 10,
        "the random graphs stayed trivial ({most} closure rows at most)"
    );
    pg.reset().unwrap();
}
