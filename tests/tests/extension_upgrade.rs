//! `ALTER EXTENSION agentmem UPDATE` from every earlier release, with data in it: the result
//! has the catalog of a fresh install of this version, and every row is still there.
//!
//! An earlier release is installed from its install script as it shipped (kept in
//! `tests/fixtures/pg/`) over this build's library — what a database holds between a package
//! upgrade and the `ALTER EXTENSION` that follows it.

use agentmem_core::schema::RELEASES;
use agentmem_tests::backend::{Backend, Postgres};
use agentmem_tests::invariants::check;
use agentmem_tests::sample::{one, populate, text};
use agentmem_tests::Rng;
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
/// volatility, columns with types, defaults and nullability, indexes, constraints and
/// triggers of its tables.
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

/// A connection to a new, empty database `name` of the test cluster.
fn fresh_database(admin: &mut Postgres, url: &str, name: &str) -> Postgres {
    // One statement per call: several in one string run as one transaction, which DROP
    // DATABASE and CREATE DATABASE refuse.
    for sql in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        admin.client.batch_execute(&sql).unwrap();
    }
    Postgres::connect(&format!("{url} dbname={name}"))
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

#[test]
fn alter_extension_update_from_every_release() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    // The cluster's address, without the test database's name.
    let server: String = url
        .split_whitespace()
        .filter(|kv| !kv.starts_with("dbname="))
        .collect::<Vec<_>>()
        .join(" ");
    let mut admin = Postgres::connect(&url);
    let current = agentmem_core::VERSION;

    let mut fresh = fresh_database(&mut admin, &server, "agentmem_upgrade_fresh");
    fresh
        .client
        .batch_execute("CREATE EXTENSION agentmem")
        .unwrap();
    let want = catalog(&mut fresh);
    drop(fresh);

    for release in RELEASES.iter().filter(|r| r.version != current) {
        let _script = Installed::place(release.version);
        let mut db = fresh_database(&mut admin, &server, "agentmem_upgrade_old");
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
        populate(&mut db, &mut Rng(29));
        let before = one(&mut db, "SELECT CAST(mem_export('{}') AS TEXT)", &[]);

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
        assert_eq!(
            catalog(&mut db),
            want,
            "{} updated to {current} differs from a fresh install",
            release.version
        );
        let after = one(&mut db, "SELECT CAST(mem_export('{}') AS TEXT)", &[]);
        assert_eq!(
            after, before,
            "the data changed in the update from {}",
            release.version
        );
        check(
            &mut db,
            &format!("after the update from {}", release.version),
        );
        // Writing after the update works as usual.
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
        drop(
            admin
                .client
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")),
        );
    }
}
