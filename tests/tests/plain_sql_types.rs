//! What a documented table accepts through plain SQL is what Postgres would hold, so every
//! export imports anywhere. SQLite enforces no column type: agentmem checks each column as
//! Postgres types it, and no text holds U+0000, which Postgres' text cannot.
//!
//! Random plain-SQL updates write values of every storage class — text, text with U+0000,
//! integers, reals, blobs, JSON with a U+0000 escape — into every column of every documented
//! table of a populated SQLite database. Each is refused or kept; afterwards every column
//! holds its type and no text holds U+0000, and the export imports into a fresh SQLite and a
//! fresh Postgres database and exports as the same text.

use agentmem_core::data::tables::{Kind, TABLES};
use agentmem_tests::backend::{Backend, Postgres, Sqlite};
use agentmem_tests::sample::{one, populate, text};
use agentmem_tests::Rng;

/// Values of every storage class, as SQL.
const VALUES: &[&str] = &[
    "'abc'",
    "'a' || char(0) || 'b'",
    "3",
    "2.5",
    "-7",
    "x'00ff'",
    "NULL",
    "'{\"k\":\"x\\u0000\"}'",
    "'[\"a\\u0000\"]'",
    "'{}'",
    "'[]'",
    "'7'",
];

/// The condition a column's values must meet, by its kind.
fn holds(col: &str, kind: Kind) -> String {
    match kind {
        Kind::Text => format!("typeof({col}) = 'text' AND instr({col}, char(0)) = 0"),
        Kind::Int => format!("typeof({col}) = 'integer'"),
        Kind::Real => format!("typeof({col}) IN ('real', 'integer')"),
        Kind::Blob => format!("typeof({col}) = 'blob'"),
        Kind::Json => {
            format!("typeof({col}) = 'text' AND json_valid({col}) AND instr({col}, '\\u0000') = 0")
        }
    }
}

fn export(db: &mut dyn Backend) -> String {
    one(db, "SELECT CAST(mem_export($1) AS TEXT)", &[text("{}")])
}

/// Two exports hold the same rows; a difference is shown row by row.
fn same_rows(got: &str, want: &str, what: &str) {
    let (g, w): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(got).unwrap(),
        serde_json::from_str(want).unwrap(),
    );
    for (table, rows) in w["tables"].as_object().unwrap() {
        let theirs = g["tables"][table].as_array().cloned().unwrap_or_default();
        for (i, row) in rows.as_array().unwrap().iter().enumerate() {
            assert_eq!(theirs.get(i), Some(row), "{what}: {table}[{i}]");
        }
        assert_eq!(
            theirs.len(),
            rows.as_array().unwrap().len(),
            "{what}: {table}"
        );
    }
    assert_eq!(got, want, "{what}");
}

#[test]
fn every_column_holds_its_type_and_exports_round_trip() {
    let mut rng = Rng(0x5eed_7a8b);
    let mut db = Sqlite::open(":memory:");
    populate(&mut db, &mut rng);
    let (mut kept, mut refused) = (0, 0);
    for _ in 0..3000 {
        let t = &TABLES[rng.next() as usize % TABLES.len()];
        let (col, _) = t.columns[rng.next() as usize % t.columns.len()];
        let value = VALUES[rng.next() as usize % VALUES.len()];
        let rows: i64 = db
            .conn
            .query_row(&format!("SELECT count(*) FROM {}", t.name), [], |r| {
                r.get(0)
            })
            .unwrap();
        if rows == 0 {
            continue;
        }
        let at = rng.next() as i64 % rows;
        let sql = format!(
            "UPDATE {} SET {col} = {value} WHERE rowid = (SELECT rowid FROM {} ORDER BY rowid LIMIT 1 OFFSET {at})",
            t.name, t.name
        );
        match db.conn.execute(&sql, []) {
            Ok(_) => kept += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(
        kept > 100 && refused > 100,
        "kept {kept}, refused {refused}"
    );
    for t in TABLES {
        for (col, kind) in t.columns {
            let bad: i64 = db
                .conn
                .query_row(
                    &format!(
                        "SELECT count(*) FROM {} WHERE {col} IS NOT NULL AND NOT ({})",
                        t.name,
                        holds(col, *kind)
                    ),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                bad, 0,
                "{}.{col} holds values that are not its type",
                t.name
            );
        }
    }
    let first = export(&mut db);
    let mut fresh = Sqlite::open(":memory:");
    one(
        &mut fresh,
        "SELECT CAST(mem_import($1) AS TEXT)",
        &[text(&first)],
    );
    same_rows(&export(&mut fresh), &first, "SQLite → SQLite");
    if let Some(url) = agentmem_tests::pg_url() {
        let mut pg = Postgres::connect(&agentmem_tests::pg_database(&url, "agentmem_types"));
        pg.reset().unwrap();
        one(
            &mut pg,
            "SELECT CAST(mem_import($1) AS TEXT)",
            &[text(&first)],
        );
        same_rows(&export(&mut pg), &first, "SQLite → Postgres");
        drop(pg);
        agentmem_tests::pg_drop_database(&url, "agentmem_types");
    }
}
