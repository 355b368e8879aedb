//! The SQL functions. Each one reads its arguments, calls the core through [`SpiConn`] and
//! raises core errors as Postgres errors with a fitting SQLSTATE.

use crate::conn::SpiConn;
use agentmem_core::{
    compaction, memory_tool, message_search, messages, recall, schema, search, threads, tokens,
    Conn, Error,
};
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

/// Unwraps a core result, raising its error as a Postgres ERROR.
pub fn ok<T>(r: agentmem_core::Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            let code = match &e {
                Error::InvalidArgument { .. } => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                Error::NotFound { .. } => PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
                Error::Database(_) => PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
                Error::Internal(_) => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            };
            ereport!(ERROR, code, e.to_string());
        }
    }
}

/// JSON made by the core, as `jsonb`: Postgres users get operators (`->>`) and indexing, and
/// `->>` on the result reads the same as SQLite's `->>` on its text.
pub fn json(text: String) -> pgrx::JsonB {
    match serde_json::from_str(&text) {
        Ok(v) => pgrx::JsonB(v),
        Err(e) => ok(Err(Error::internal(format!(
            "core produced invalid JSON: {e}"
        )))),
    }
}

#[pg_extern]
fn mem_version() -> &'static str {
    agentmem_core::VERSION
}

/// Runs the migrations inside `CREATE EXTENSION` / `ALTER EXTENSION … UPDATE` and marks the
/// tables for pg_dump (so a dump carries the memory, not just the extension).
#[pg_extern]
fn mem__bootstrap() -> i64 {
    let _inside = crate::triggers::internal::Guard::new();
    let version = ok(schema::migrate(&mut SpiConn, None));
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

/// The schema version. The extension's scripts create and migrate the schema, so this only
/// reports it (it exists so that one call shape works on SQLite and Postgres).
#[pg_extern]
fn mem_init() -> i64 {
    ok(schema::version(&mut SpiConn))
}

#[pg_extern]
fn mem_uuid7() -> String {
    agentmem_core::ids::new_id()
}

#[pg_extern]
fn mem_now() -> i64 {
    ok(SpiConn.now_ms())
}

#[pg_extern(immutable, parallel_safe)]
fn mem_tokens(text: Option<&str>, encoding: default!(Option<&str>, "NULL")) -> Option<i64> {
    let enc = ok(tokens::Encoding::parse(encoding));
    text.map(|t| tokens::count(t, enc))
}

#[pg_extern]
fn mem_thread_create(
    resource_id: Option<&str>,
    title: default!(Option<&str>, "NULL"),
    metadata: default!(Option<&str>, "NULL"),
) -> String {
    ok(threads::create(&mut SpiConn, resource_id, title, metadata))
}

#[pg_extern]
fn mem_message_add(
    thread_id: Option<&str>,
    role: Option<&str>,
    content: Option<&str>,
    options: default!(Option<&str>, "NULL"),
) -> String {
    ok(messages::add(
        &mut SpiConn,
        thread_id,
        role,
        content,
        options,
    ))
}

#[pg_extern]
#[allow(clippy::type_complexity)]
fn mem_recall(
    thread_id: Option<&str>,
    hint: default!(Option<&str>, "NULL"),
    options: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(message_id, String),
        name!(thread_id, String),
        name!(role, String),
        name!(content, String),
        name!(message_index, i64),
        name!(created_at, i64),
        name!(token_count, i64),
        name!(task_id, Option<String>),
        name!(reason, String),
    ),
> {
    let rows = ok(recall::recall(&mut SpiConn, thread_id, hint, options));
    TableIterator::new(rows.into_iter().map(|r| {
        (
            r.message_id,
            r.thread_id,
            r.role,
            r.content,
            r.message_index,
            r.created_at,
            r.token_count,
            r.task_id,
            r.reason.to_owned(),
        )
    }))
}

/// Proves that a panic inside a function becomes an SQL error instead of killing the backend.
#[pg_extern]
fn mem__selftest_panic() -> i64 {
    panic!("deliberate panic from mem__selftest_panic")
}

#[pg_extern]
#[allow(clippy::type_complexity)]
fn mem_search(
    query: Option<&str>,
    options: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(message_id, String),
        name!(thread_id, String),
        name!(resource_id, Option<String>),
        name!(role, String),
        name!(task_id, Option<String>),
        name!(created_at, i64),
        name!(score, f64),
        name!(bm25, f64),
        name!(recency, f64),
        name!(source, String),
        name!(snippet, String),
    ),
> {
    let hits = ok(message_search::search(&mut SpiConn, query, options));
    TableIterator::new(hits.into_iter().map(|h| {
        (
            h.message_id,
            h.thread_id,
            h.resource_id,
            h.role,
            h.task_id,
            h.created_at,
            h.score,
            h.bm25,
            h.recency,
            h.source.to_owned(),
            h.snippet,
        )
    }))
}

#[pg_extern]
fn mem_index_check() -> SetOfIterator<'static, String> {
    SetOfIterator::new(ok(message_search::index_check(&mut SpiConn)))
}

#[pg_extern]
fn mem_optimize() -> i64 {
    ok(message_search::optimize(&mut SpiConn));
    1
}

#[pg_extern]
fn mem_reindex() -> i64 {
    ok(message_search::reindex(&mut SpiConn))
}

#[pg_extern]
fn mem_index_stats() -> pgrx::JsonB {
    json(ok(search::stats::index_stats(&mut SpiConn)))
}

/// The caches are per backend process: each connection has its own.
#[pg_extern]
fn mem_search_cache(limit_bytes: default!(Option<i64>, "NULL")) -> pgrx::JsonB {
    json(ok(search::cache::describe(limit_bytes)))
}

#[pg_extern]
fn mem_compact(
    thread_id: Option<&str>,
    start_index: Option<i64>,
    end_index: Option<i64>,
    summary: Option<&str>,
    extracted_code: default!(Option<&str>, "NULL"),
) -> String {
    ok(compaction::compact(
        &mut SpiConn,
        thread_id,
        start_index,
        end_index,
        summary,
        extracted_code,
    ))
}

#[pg_extern]
fn mem_uncompact(compaction_id: Option<&str>) -> i64 {
    ok(compaction::uncompact(&mut SpiConn, compaction_id))
}

#[pg_extern]
fn memory_search(input: Option<&str>) -> pgrx::JsonB {
    json(memory_tool::memory_search(
        &mut SpiConn,
        input.map(str::as_bytes),
    ))
}
