//! The extension's internal functions: bootstrap and migration (the public functions come
//! from the core's catalog: see `catalog`).

use crate::conn::SpiConn;
use crate::error::ok;
use agentmem_core::{schema, Conn};
use pgrx::prelude::*;

/// Runs the migrations inside `CREATE EXTENSION` / `ALTER EXTENSION … UPDATE` up to the
/// schema the extension version being installed pins (Postgres has already recorded that
/// version when the script runs), and marks the tables for pg_dump (so a dump carries the
/// memory, not just the extension).
#[pg_extern]
fn mem__bootstrap() -> i64 {
    let _inside = crate::triggers::internal::Guard::new();
    // First the functions: column defaults call mem_uuid7() and mem_now().
    crate::catalog::create_all();
    let installing = ok(SpiConn.query_value(
        "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'agentmem'",
        &[],
    ));
    let target = match installing.as_ref().and_then(|v| v.as_str()) {
        Some(v) => ok(schema::schema_of(v)),
        None => schema::latest_version(),
    };
    let version = ok(schema::migrate(&mut SpiConn, Some(target)));
    // One call per statement: each call rewrites the pg_extension row.
    let tables = ok(SpiConn.query(
        "SELECT c.relname::text FROM pg_class c \
         JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e' \
         JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'agentmem' \
         WHERE c.relkind = 'r' ORDER BY 1",
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

/// Applies migrations up to `version` in the current search path. For upgrade tests: the
/// extension itself migrates through its install and update scripts.
#[pg_extern]
fn mem__migrate(version: Option<i64>) -> i64 {
    let _inside = crate::triggers::internal::Guard::new();
    ok(schema::migrate(&mut SpiConn, version))
}
