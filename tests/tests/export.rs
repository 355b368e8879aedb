//! Export, import, export again: over random databases of several resources, for everything,
//! a resource and a thread, the JSON and the Markdown come back as the same text after an
//! import into an empty database, with the derived structures rebuilt (index, counters,
//! blocked state) and the ids kept. A SQLite export imported into Postgres exports the same
//! text: the format is the same on both.

use agentmem_tests::backend::{Backend, Postgres, Sqlite};
use agentmem_tests::invariants::check;
use agentmem_tests::sample::{one, populate, secret, text};
use agentmem_tests::Rng;

const SCOPES: &[&str] = &["{}", r#"{"resource_id":"rb"}"#, r#"{"thread_id":"rc-t0"}"#];

fn export(db: &mut dyn Backend, scope: &str, format: &str) -> String {
    one(
        db,
        "SELECT CAST(mem_export($1, $2) AS TEXT)",
        &[text(scope), text(format)],
    )
}

/// Every scope's JSON and Markdown export.
fn exports(db: &mut dyn Backend) -> Vec<(String, String, String)> {
    SCOPES
        .iter()
        .map(|s| {
            (
                s.to_string(),
                export(db, s, "json"),
                export(db, s, "markdown"),
            )
        })
        .collect()
}

/// The rows form says the same: the document with its tables empty, then one JSON row per
/// record, which appended to their tables give the document; and the Markdown parts in order.
fn rows_agree(db: &mut dyn Backend, scope: &str, json: &str, markdown: &str) {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    let rows = db
        .query(
            "SELECT n, part, body FROM mem_export_rows($1) ORDER BY n",
            &[text(scope)],
        )
        .unwrap();
    let (head, records) = rows.split_first().expect("an export row");
    assert_eq!(
        head[1].to_string(),
        "export",
        "{}: the first row",
        db.name()
    );
    let mut rebuilt: serde_json::Value = serde_json::from_str(&head[2].to_string()).unwrap();
    for r in records {
        let body: serde_json::Value = serde_json::from_str(&r[2].to_string()).unwrap();
        rebuilt["tables"][r[1].to_string()]
            .as_array_mut()
            .unwrap_or_else(|| panic!("{}: {} is not in the first row", db.name(), r[1]))
            .push(body);
    }
    assert_eq!(rebuilt, doc, "{}: JSON rows of {scope}", db.name());
    let parts = db
        .query(
            "SELECT body FROM mem_export_rows($1, 'markdown') ORDER BY n",
            &[text(scope)],
        )
        .unwrap();
    let joined: String = parts.iter().map(|r| r[0].to_string()).collect();
    assert_eq!(joined, markdown, "{}: Markdown parts of {scope}", db.name());
}

/// Imports each scope's export into an empty database (`fresh` gives one) and checks that
/// it exports the same texts.
fn round_trip(source: &mut dyn Backend, fresh: &mut dyn FnMut() -> Box<dyn Backend>, seed: u64) {
    let mut rng = Rng(seed);
    populate(source, &mut rng);
    let before = exports(source);
    for (scope, json, markdown) in &before {
        rows_agree(source, scope, json, markdown);
        let mut db = fresh();
        let counts = one(
            db.as_mut(),
            "SELECT CAST(mem_import($1) AS TEXT)",
            &[text(json)],
        );
        check(db.as_mut(), &format!("after importing {scope}"));
        assert_eq!(
            export(db.as_mut(), scope, "json"),
            *json,
            "{}: JSON of {scope} after import (counts {counts})",
            db.name()
        );
        assert_eq!(
            export(db.as_mut(), scope, "markdown"),
            *markdown,
            "{}: Markdown of {scope} after import",
            db.name()
        );
        if scope == "{}" {
            assert_ne!(
                one(
                    db.as_mut(),
                    "SELECT count(*) FROM mem_search($1)",
                    &[text(&secret("ra"))]
                ),
                "0",
                "{}: the imported messages are searchable",
                db.name()
            );
            assert_ne!(
                one(
                    db.as_mut(),
                    "SELECT count(*) FROM mem_memory_search($1)",
                    &[text(&secret("rb"))]
                ),
                "0",
                "{}: the imported memories are searchable",
                db.name()
            );
        }
    }
}

#[test]
fn sqlite_export_import_export_gives_the_same_text() {
    for seed in [2, 13] {
        let mut src = Sqlite::open(":memory:");
        round_trip(
            &mut src,
            &mut || Box::new(Sqlite::open(":memory:")) as Box<dyn Backend>,
            seed,
        );
    }
}

#[test]
fn postgres_export_import_export_gives_the_same_text_and_reads_sqlites() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    // Postgres: one database, so the source's texts are taken before each reset.
    let mut src = Sqlite::open(":memory:");
    let mut rng = Rng(7);
    populate(&mut src, &mut rng);
    let sqlite_all = export(&mut src, "{}", "json");
    let sqlite_md = export(&mut src, "{}", "markdown");
    let mut pg = Postgres::connect(&url);
    pg.reset().unwrap();
    one(
        &mut pg,
        "SELECT CAST(mem_import($1) AS TEXT)",
        &[text(&sqlite_all)],
    );
    check(&mut pg, "after importing SQLite's export");
    assert_eq!(
        export(&mut pg, "{}", "json"),
        sqlite_all,
        "SQLite's export through Postgres"
    );
    assert_eq!(export(&mut pg, "{}", "markdown"), sqlite_md);

    pg.reset().unwrap();
    let mut rng = Rng(19);
    populate(&mut pg, &mut rng);
    let before = exports(&mut pg);
    for (scope, json, markdown) in &before {
        rows_agree(&mut pg, scope, json, markdown);
    }
    for (scope, json, markdown) in &before {
        pg.reset().unwrap();
        one(
            &mut pg,
            "SELECT CAST(mem_import($1) AS TEXT)",
            &[text(json)],
        );
        check(&mut pg, &format!("after importing {scope}"));
        assert_eq!(
            export(&mut pg, scope, "json"),
            *json,
            "postgres: JSON of {scope}"
        );
        assert_eq!(
            export(&mut pg, scope, "markdown"),
            *markdown,
            "postgres: Markdown of {scope}"
        );
    }
}
