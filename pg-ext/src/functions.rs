//! The extension's internal functions: bootstrap and migration (the public functions come
//! from the core's catalog: see `catalog`).

use crate::conn::SpiConn;
use crate::error::ok;
use agentmem_core::api;
use agentmem_core::db::privilege::DERIVED;
use agentmem_core::schema::{self, PRIVATE_SCHEMA, RELEASES};
use agentmem_core::{triggers, Conn, Value};
use pgrx::prelude::*;

/// Runs the migrations inside `CREATE EXTENSION` / `ALTER EXTENSION … UPDATE` up to the
/// schema the extension version being installed pins (Postgres has already recorded that
/// version when the script runs), then secures what they made (see [`secure`]) and marks the
/// tables and their identity sequences for pg_dump (so a dump carries the memory, not just
/// the extension, and a restore goes on numbering rows where they stopped).
#[pg_extern]
fn mem__bootstrap() -> i64 {
    let _inside = crate::triggers::internal::Guard::new();
    let ext = ok(SpiConn.query(
        "SELECT e.extversion, quote_ident(n.nspname) \
         FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace \
         WHERE e.extname = 'agentmem'",
        &[],
    ));
    let mut ext = ext.into_iter().next().unwrap_or_default().into_iter();
    let installing = ext.next().and_then(Value::into_string);
    let home = ext
        .next()
        .and_then(Value::into_string)
        .unwrap_or_else(|| "public".into());
    let path = format!("{home}, {PRIVATE_SCHEMA}, pg_catalog");
    // The script's own search path is the extension's schema; the migrations of an update
    // also name derived tables already moved to the private one.
    ok(SpiConn.execute_batch(&format!(
        "SELECT pg_catalog.set_config('search_path', '{path}', true)"
    )));
    // First the functions: column defaults call mem_uuid7() and mem_now(), and the triggers
    // the migrations create call the trigger functions.
    crate::catalog::create_all();
    let release = match installing.as_deref() {
        Some(v) => ok(schema::release(v)),
        None => RELEASES.last().expect("a release"),
    };
    if release.trigger_catalog {
        ok(SpiConn.execute_batch(&agentmem_core::triggers::render::postgres_functions()));
    }
    let version = ok(schema::migrate(&mut SpiConn, Some(release.schema)));
    if release.private_derived_data {
        secure(&home);
    }
    // One call per statement: each call rewrites the pg_extension row. Not the schema's
    // version: CREATE EXTENSION writes it, before a restore's rows.
    let tables = ok(SpiConn.query(
        "SELECT CAST(c.oid AS regclass)::text FROM pg_class c \
         JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e' \
         JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'agentmem' \
         WHERE c.relkind IN ('r', 'S') AND c.relname <> 'mem_schema_version' ORDER BY 1",
        &[],
    ));
    for t in tables.into_iter().filter_map(|r| r.into_iter().next()) {
        ok(SpiConn.execute(
            "SELECT pg_catalog.pg_extension_config_dump(CAST(?1 AS regclass), '')",
            &[t],
        ));
    }
    version
}

/// The security model (docs/security.md): derived data moves to the private schema, which
/// no other role may use; every function that runs statements resolves names through a
/// pinned search path (the extension's schema, then the private one, never the caller's
/// schemas or temporary tables); the index's maintenance functions and the internal ones are
/// the owner's alone.
fn secure(home: &str) {
    // The private schema exists, closed to PUBLIC: the catalog's functions, created first,
    // put their row types there (`catalog::create_all`). Derived tables are moved into it
    // when they are still in the extension's schema (an update from a release that kept them
    // there); already private otherwise.
    let mut moves = String::new();
    for table in DERIVED {
        moves.push_str(&format!(
            "ALTER TABLE IF EXISTS {home}.{table} SET SCHEMA {PRIVATE_SCHEMA};\n"
        ));
    }
    ok(SpiConn.execute_batch(&moves));
    let functions = ok(SpiConn.query(
        "SELECT p.proname::text, CAST(p.oid AS regprocedure)::text FROM pg_catalog.pg_proc p \
         JOIN pg_catalog.pg_depend d ON d.objid = p.oid AND d.deptype = 'e' \
         JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'agentmem' \
         ORDER BY 2",
        &[],
    ));
    let pinned = crate::pinned::path(Some(home));
    // One script for all of them: a statement per call would cost every install a round of
    // SPI calls per function.
    let mut script = String::new();
    for row in functions {
        let mut row = row.into_iter().filter_map(Value::into_string);
        let (Some(name), Some(signature)) = (row.next(), row.next()) else {
            continue;
        };
        // A catalog function sets its statements' settings itself, at its first statement
        // (see `pinned`); a trigger as its declaration says. pgrx's own (bootstrap,
        // migrations) are internal: pinned and the owner's, but mem__internal() and
        // mem__adding(), which the schema's guards and triggers call as the caller, and
        // mem__delegate().
        let (runs_sql, generic_plans, owner_only) = match (api::find(&name), triggers::find(&name))
        {
            (Some(f), _) => (false, false, f.owner_only),
            (None, Some(t)) => (true, t.generic_plans, true),
            // mem__delegate runs a routed catalog function with the caller's rights, as a
            // direct call would.
            (None, None) => match name.as_str() {
                "mem__internal" | "mem__adding" => (false, false, false),
                "mem__delegate" => (true, false, false),
                _ => (true, false, true),
            },
        };
        if runs_sql {
            script.push_str(&format!(
                "ALTER FUNCTION {signature} SET search_path = {pinned};\n"
            ));
        }
        if generic_plans {
            script.push_str(&format!(
                "ALTER FUNCTION {signature} SET plan_cache_mode = force_generic_plan;\n"
            ));
        }
        if owner_only {
            script.push_str(&format!(
                "REVOKE EXECUTE ON FUNCTION {signature} FROM PUBLIC;\n"
            ));
        }
    }
    ok(SpiConn.execute_batch(&script));
}

/// Applies migrations up to `version` in the current search path. For upgrade tests: the
/// extension itself migrates through its install and update scripts.
#[pg_extern]
fn mem__migrate(version: Option<i64>) -> i64 {
    let _inside = crate::triggers::internal::Guard::new();
    ok(schema::migrate(&mut SpiConn, version))
}
