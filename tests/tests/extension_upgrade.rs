//! `ALTER EXTENSION agentmem UPDATE` from every earlier release, with data in it: the result
//! has the catalog of a fresh install of this version, and every row is still there.
//!
//! An earlier release is installed from its install script as it shipped (kept in
//! `tests/fixtures/pg/`), over this build's library, which installs that release's schema
//! and layout exactly. Its data is what that release's own library wrote: a `pg_dump` of a
//! database it populated (`data-<version>.sql`, derived data included) and that release's
//! export of it (`export-<version>.json`), made by `tests/fixtures/pg/make-fixture.sh` from
//! its git commit. The dump is restored with triggers off, so the database holds exactly
//! what the old release left — the state an update meets.

use agentmem_core::schema::RELEASES;
use agentmem_tests::backend::{Backend, Postgres};
use agentmem_tests::invariants::check;
use agentmem_tests::sample::{one, populate, text};
use agentmem_tests::Rng;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn pg_config() -> String {
    std::env::var("PG_CONFIG").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin/pg_config".into())
}

fn extension_dir() -> PathBuf {
    let out = std::process::Command::new(pg_config())
        .arg("--sharedir")
        .output()
        .expect("pg_config");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()).join("extension")
}

fn fixture(version: &str) -> PathBuf {
    agentmem_tests::root().join(format!("tests/fixtures/pg/agentmem--{version}.sql"))
}

fn update_script(from: &str, to: &str) -> PathBuf {
    agentmem_tests::root().join(format!("pg-ext/sql/agentmem--{from}--{to}.sql"))
}

/// An earlier release's install script in the server's extension directory, removed again
/// when dropped.
struct Installed(PathBuf);

impl Installed {
    fn place(version: &str) -> Installed {
        let to = extension_dir().join(format!("agentmem--{version}.sql"));
        std::fs::copy(fixture(version), &to)
            .unwrap_or_else(|e| panic!("placing {}: {e}", to.display()));
        Installed(to)
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Every object of the extension, described: functions with their signatures and
/// volatility, row types with their columns, and the columns with types, defaults and
/// nullability, indexes, constraints and triggers of its tables.
fn catalog(db: &mut Postgres) -> Vec<String> {
    let members = "SELECT d.objid FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid \
                   AND e.extname = 'agentmem' WHERE d.deptype = 'e'";
    let sql = format!(
        "SELECT 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) \
           || ') ' || pg_get_function_result(p.oid) || ' ' || p.provolatile::text \
         FROM pg_proc p WHERE p.oid IN ({members}) \
         UNION ALL SELECT 'column ' || c.relname || '.' || a.attname || ' ' \
           || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END \
           || coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '') \
         FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
         LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum \
         WHERE c.oid IN ({members}) AND c.relkind = 'r' \
         UNION ALL SELECT 'type ' || CAST(t.oid AS regtype)::text || ' (' || (SELECT \
           string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' \
           ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 \
           AND NOT a.attisdropped) || ')' FROM pg_type t WHERE t.oid IN ({members}) \
           AND t.typtype = 'c' \
         UNION ALL SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i \
         WHERE i.indrelid IN ({members}) \
         UNION ALL SELECT 'constraint ' || conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) \
         FROM pg_constraint WHERE conrelid IN ({members}) \
         UNION ALL SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t \
         WHERE t.tgrelid IN ({members}) AND NOT t.tgisinternal \
         ORDER BY 1"
    );
    db.query(&sql, &[])
        .unwrap()
        .into_iter()
        .map(|r| r[0].to_string())
        .collect()
}

#[test]
fn every_release_has_its_install_script_and_update_path() {
    for (i, r) in RELEASES.iter().enumerate() {
        if i + 1 < RELEASES.len() {
            assert!(
                fixture(r.version).exists(),
                "no install script of {}",
                r.version
            );
            let next = RELEASES[i + 1].version;
            assert!(
                update_script(r.version, next).exists(),
                "no update script {}",
                update_script(r.version, next).display()
            );
        }
    }
    // And no update script leads anywhere else.
    let sql_dir = agentmem_tests::root().join("pg-ext/sql");
    for entry in std::fs::read_dir(&sql_dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let pair = RELEASES
            .windows(2)
            .any(|w| name == format!("agentmem--{}--{}.sql", w[0].version, w[1].version));
        assert!(
            pair,
            "{}: not an update between consecutive releases",
            Path::new(&name).display()
        );
    }
}

/// The fixture file `name` of `version`.
fn data_fixture(version: &str, name: &str) -> PathBuf {
    agentmem_tests::root().join(format!(
        "tests/fixtures/pg/{name}-{version}.{}",
        if name == "data" { "sql" } else { "json" }
    ))
}

/// The rows of an export, by table, with the columns a later release added dropped when
/// they are NULL (their value for rows written before they existed).
fn rows_of(
    export: &serde_json::Value,
    columns: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut out = BTreeMap::new();
    for (table, rows) in export["tables"].as_object().unwrap() {
        let keep = columns.get(table);
        let rows = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut r = r.as_object().unwrap().clone();
                if let Some(keep) = keep {
                    r.retain(|k, v| keep.contains(k) || !v.is_null());
                }
                serde_json::Value::Object(r)
            })
            .collect();
        out.insert(table.clone(), rows);
    }
    out
}

#[test]
fn alter_extension_update_from_every_release() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let current = agentmem_core::VERSION;
    let fresh_db = |name: &str| Postgres::connect(&agentmem_tests::pg_database(&url, name));

    let mut fresh = fresh_db("agentmem_upgrade_fresh");
    fresh
        .client
        .batch_execute("CREATE EXTENSION agentmem")
        .unwrap();
    let want = catalog(&mut fresh);
    drop(fresh);

    for release in RELEASES.iter().filter(|r| r.version != current) {
        let _script = Installed::place(release.version);
        let mut db = fresh_db("agentmem_upgrade_old");
        // The version comes from the release table, not from a user.
        db.client
            .batch_execute(&format!(
                "CREATE EXTENSION agentmem VERSION '{}'",
                release.version
            ))
            .unwrap();
        assert_eq!(
            one(&mut db, "SELECT mem_init()", &[]),
            release.schema.to_string(),
            "{} installs its own schema version",
            release.version
        );
        declare_as_tables(&mut db);
        // The dump's SQL, without psql's meta-commands (`\restrict`) and the schema's
        // version rows (the install script writes them; releases before 0.2.0 dumped them
        // too); it empties the search path, which is put back after.
        let dump: String = std::fs::read_to_string(data_fixture(release.version, "data"))
            .unwrap()
            .lines()
            .filter(|l| {
                !l.starts_with('\\') && !l.starts_with("INSERT INTO public.mem_schema_version")
            })
            .map(|l| format!("{l}\n"))
            .collect();
        db.client
            .batch_execute(&format!(
                "SET session_replication_role = replica; {dump}; RESET session_replication_role; \
                 SET search_path = \"$user\", public, {}",
                agentmem_core::schema::PRIVATE_SCHEMA
            ))
            .unwrap();
        // Releases before 0.2.0 did not mark their identity sequences for pg_dump: a restore
        // of their dumps must move the sequences past the rows, as here.
        let sequences = db
            .query(
                "SELECT c.relname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = 'public' AND a.attname = 'seq' AND a.attidentity <> ''",
                &[],
            )
            .unwrap();
        for table in sequences.iter().map(|r| r[0].to_string()) {
            // The name comes from the catalog, not from a user.
            one(
                &mut db,
                &format!(
                    "SELECT setval(pg_get_serial_sequence($1, 'seq'), coalesce(max(seq), 0) + 1, false) \
                     FROM public.{table}"
                ),
                &[text(&format!("public.{table}"))],
            );
        }
        let before: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(data_fixture(release.version, "export")).unwrap(),
        )
        .unwrap();

        db.client
            .batch_execute("ALTER EXTENSION agentmem UPDATE")
            .unwrap();
        assert_eq!(
            one(
                &mut db,
                "SELECT extversion FROM pg_extension WHERE extname = 'agentmem'",
                &[]
            ),
            current
        );
        assert_eq!(
            one(&mut db, "SELECT mem_init()", &[]),
            agentmem_core::schema::latest_version().to_string()
        );
        // The privileges of a function declared again came back with it.
        assert_eq!(
            one(
                &mut db,
                "SELECT count(*) FROM pg_proc p, aclexplode(p.proacl) x \
                 WHERE p.oid = 'graph_neighbors(text, text)'::regprocedure AND x.grantee = 0",
                &[]
            ),
            "0",
            "graph_neighbors is still refused to PUBLIC after the update from {}",
            release.version
        );
        let got = catalog(&mut db);
        let missing: Vec<&String> = want.iter().filter(|w| !got.contains(w)).collect();
        let extra: Vec<&String> = got.iter().filter(|g| !want.contains(g)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{} updated to {current} differs from a fresh install:\nmissing {missing:#?}\nextra {extra:#?}",
            release.version
        );
        // Every row the old release exported is there, column for column.
        let after: serde_json::Value =
            serde_json::from_str(&one(&mut db, "SELECT CAST(mem_export('{}') AS TEXT)", &[]))
                .unwrap();
        let old_columns: BTreeMap<String, Vec<String>> = before["tables"]
            .as_object()
            .unwrap()
            .iter()
            .filter_map(|(t, rows)| {
                let first = rows.as_array()?.first()?.as_object()?;
                Some((t.clone(), first.keys().cloned().collect()))
            })
            .collect();
        let (mut after_rows, before_rows) = (
            rows_of(&after, &old_columns),
            rows_of(&before, &old_columns),
        );
        // Tables the old release did not have are there, and empty.
        after_rows.retain(|table, rows| {
            before_rows.contains_key(table) || {
                assert!(
                    rows.is_empty(),
                    "{table} has rows after the update from {}",
                    release.version
                );
                false
            }
        });
        assert_eq!(
            after_rows, before_rows,
            "the data changed in the update from {}",
            release.version
        );
        check(
            &mut db,
            &format!("after the update from {}", release.version),
        );
        // The derived data came through: the old index answers, and writing goes on.
        let word = agentmem_tests::sample::secret("ra");
        assert_ne!(
            one(
                &mut db,
                "SELECT count(*) FROM mem_search($1)",
                &[text(&word)]
            ),
            "0"
        );
        let t = one(&mut db, "SELECT mem_thread_create('after-update')", &[]);
        one(
            &mut db,
            "SELECT mem_message_add($1, 'user', 'zqxupdated after the update')",
            &[text(&t)],
        );
        assert_eq!(
            one(
                &mut db,
                "SELECT count(*) FROM mem_search('zqxupdated')",
                &[]
            ),
            "1"
        );
    }
    for name in ["agentmem_upgrade_old", "agentmem_upgrade_fresh"] {
        agentmem_tests::pg_drop_database(&url, name);
    }
}

/// Declares the table functions as libraries before row types did, `RETURNS TABLE`, still
/// members of the extension, and refuses one of them to PUBLIC: what an update from an
/// install such a library made meets (this build's library installs an earlier release with
/// its own declarations).
fn declare_as_tables(db: &mut Postgres) {
    let rows = db
        .query(
            "SELECT CAST(p.oid AS regprocedure)::text, pg_get_functiondef(p.oid), \
             CAST(t.oid AS regtype)::text, (SELECT string_agg(quote_ident(a.attname) || ' ' \
             || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum) FROM pg_attribute a \
             WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) \
             FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype \
             JOIN pg_namespace n ON n.oid = t.typnamespace \
             WHERE n.nspname = $1 AND t.typtype = 'c'",
            &[text(agentmem_core::schema::PRIVATE_SCHEMA)],
        )
        .unwrap();
    assert!(!rows.is_empty(), "no table function returns a row type");
    for r in rows {
        let [signature, definition, ty, columns] = [0, 1, 2, 3].map(|i| r[i].to_string());
        let as_table = definition.replace(
            &format!("RETURNS SETOF {ty}"),
            &format!("RETURNS TABLE({columns})"),
        );
        assert_ne!(as_table, definition, "{signature}: {definition}");
        // Names and definitions come from the catalog, not from a user.
        db.client
            .batch_execute(&format!(
                "ALTER EXTENSION agentmem DROP FUNCTION {signature}; DROP FUNCTION {signature}; \
                 ALTER EXTENSION agentmem DROP TYPE {ty}; DROP TYPE {ty}; {as_table}; \
                 ALTER EXTENSION agentmem ADD FUNCTION {signature};"
            ))
            .unwrap();
    }
    db.client
        .batch_execute("REVOKE ALL ON FUNCTION graph_neighbors(text, text) FROM PUBLIC")
        .unwrap();
}

/// Writes the data fixtures of the release this build's library is (`make-fixture.sh` runs
/// it against a cluster where that release is installed): the sample database, dumped, and
/// its export.
#[test]
#[ignore = "run by tests/fixtures/pg/make-fixture.sh against the release being captured"]
fn write_the_data_fixture() {
    let url = std::env::var("AGENTMEM_FIXTURE_PG").expect("AGENTMEM_FIXTURE_PG");
    let version = std::env::var("AGENTMEM_FIXTURE_VERSION").expect("AGENTMEM_FIXTURE_VERSION");
    let mut db = Postgres::connect(&url);
    populate(&mut db, &mut Rng(29));
    let export = one(&mut db, "SELECT CAST(mem_export('{}') AS TEXT)", &[]);
    std::fs::write(data_fixture(&version, "export"), export).unwrap();
}
