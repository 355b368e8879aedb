//! SQLite: agentmem (`dist/agentmem0`) against FTS5 set up as a memory tool would, each in its
//! own database file, same data, same batches, same pragmas.

use crate::generator::Dataset;
use crate::report::{time_queries, Comparison, EngineResult, Outcome};
use crate::{sys, Settings};
use rusqlite::{params, Connection};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Pragmas both databases get (a typical application setting: WAL, NORMAL sync, 64 MB cache).
const PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                       PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;";

/// The FTS5 peer as a memory tool sets it up: an external-content
/// FTS5 table over the messages table, kept in sync by triggers, with tokenchars "-_" so that
/// `refresh_tokens` and `my-component` stay single tokens. The messages table has the seed's
/// content + searchText pair (the index reads searchText) and the index a messages table
/// needs anyway; small columns come first so reading created_at never walks overflow pages.
const FTS5_SCHEMA: &str = "
CREATE TABLE messages (
  id         TEXT PRIMARY KEY,
  thread_id  TEXT NOT NULL,
  role       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  content    TEXT NOT NULL,
  searchText TEXT NOT NULL
);
CREATE INDEX messages_thread ON messages (thread_id, created_at);
CREATE VIRTUAL TABLE messages_fts USING fts5(
  searchText,
  content = messages,
  content_rowid = rowid,
  tokenize = 'unicode61 tokenchars ''-_'''
);
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, searchText) VALUES (new.rowid, new.searchText);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, searchText) VALUES ('delete', old.rowid, old.searchText);
END;
CREATE TRIGGER messages_au AFTER UPDATE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, searchText) VALUES ('delete', old.rowid, old.searchText);
  INSERT INTO messages_fts(rowid, searchText) VALUES (new.rowid, new.searchText);
END;
";

/// The peer's search with recency: bm25 (negative, smaller is better) minus created_at times
/// RECENCY_FACTOR, ascending. Every matching row is scored; LIMIT only trims the sort.
const FTS5_SEARCH: &str = "
SELECT m.id, bm25(messages_fts) - m.created_at * ?2 AS final_rank
FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
WHERE messages_fts MATCH ?1
ORDER BY final_rank ASC
LIMIT 10";

/// FTS5 by BM25 alone (its `rank`), for quality: the best ranking FTS5 offers.
const FTS5_RANKED: &str = "
SELECT m.id FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
WHERE messages_fts MATCH ?1 ORDER BY rank LIMIT 10";

const OURS_SEARCH: &str = "SELECT message_id, score FROM mem_search(?1, ?2)";

/// An agent's words OR-ed for FTS5 MATCH, each quoted (inner quotes doubled) so punctuation
/// such as `auth.ts`, `Foo::bar` or `(reading` can never be a syntax error.
pub fn fts5_match(query: &str) -> String {
    query
        .split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

fn fresh_db(dir: &Path, name: &str) -> Result<(Connection, PathBuf), String> {
    let path = dir.join(name);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let conn = Connection::open(&path).map_err(|e| e.to_string())?;
    conn.execute_batch(PRAGMAS).map_err(|e| e.to_string())?;
    Ok((conn, path))
}

/// Copies the extension into the data directory and returns the copy's path (without the
/// suffix, so SQLite derives the entry point from `agentmem0`). Loading a private copy keeps
/// a rebuild of dist/agentmem0.so during a run from pulling the mapped file out from under us.
pub fn snapshot_extension(ext: &Path, data_dir: &Path) -> Result<PathBuf, String> {
    let candidates = [
        ext.to_path_buf(),
        ext.with_extension("so"),
        ext.with_extension("dylib"),
        ext.with_extension("dll"),
    ];
    let src = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
        format!(
            "agentmem: not available (no extension at {}; run make sqlite-release)",
            ext.display()
        )
    })?;
    let suffix = src.extension().and_then(|e| e.to_str()).unwrap_or("so");
    let dir = data_dir.join(format!("ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let dst = dir.join(format!("agentmem0.{suffix}"));
    std::fs::copy(src, &dst).map_err(|e| format!("copying {}: {e}", src.display()))?;
    Ok(dir.join("agentmem0"))
}

fn load_agentmem(conn: &Connection, ext: &Path) -> Result<(), String> {
    // SAFETY: loading this repository's own extension, as an application would.
    unsafe {
        conn.load_extension_enable().map_err(|e| e.to_string())?;
        let r = conn.load_extension(ext, None::<&str>);
        conn.load_extension_disable().map_err(|e| e.to_string())?;
        r.map_err(|e| format!("cannot load {}: {e}", ext.display()))?;
    }
    conn.query_row("SELECT mem_init()", [], |_| Ok(()))
        .map_err(|e| format!("mem_init: {e}"))
}

/// Bytes per table (indexes and FTS5 shadow tables counted under their table) from dbstat.
fn table_bytes(conn: &Connection, like: &str) -> Option<u64> {
    conn.query_row(
        "SELECT coalesce(sum(d.pgsize), 0) FROM dbstat d JOIN sqlite_schema s ON s.name = d.name \
         WHERE s.tbl_name LIKE ?1 ESCAPE '\\'",
        [like],
        |r| r.get::<_, i64>(0),
    )
    .ok()
    .map(|b| b as u64)
}

fn db_bytes(conn: &Connection) -> Option<u64> {
    // Checkpoint first so the main file holds everything.
    let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    conn.query_row(
        "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
        [],
        |r| r.get::<_, i64>(0),
    )
    .ok()
    .map(|b| b as u64)
}

/// Whether this build of the extension has `mem_search` (the engine lands separately).
pub fn probe_ours(conn: &Connection) -> Result<(), String> {
    match conn.prepare(OURS_SEARCH) {
        Ok(_) => Ok(()),
        Err(e) => {
            let m = e.to_string();
            if m.contains("no such table: mem_search") || m.contains("no such function") {
                Err("agentmem: not available (mem_search missing in this build)".into())
            } else {
                Err(format!("agentmem: {m}"))
            }
        }
    }
}

/// Creates the threads of `ds` (not timed: ingest measures messages only, like the peer).
fn create_threads(conn: &Connection, ds: &Dataset) -> Result<Vec<String>, String> {
    let mut thread_ids = Vec::with_capacity(ds.threads.len());
    let tx = conn.unchecked_transaction().map_err(|e| e.to_string())?;
    {
        let mut st = tx
            .prepare("SELECT mem_thread_create(?1, ?2)")
            .map_err(|e| e.to_string())?;
        for t in &ds.threads {
            let id: String = st
                .query_row(params![t.resource_id, t.title], |r| r.get(0))
                .map_err(|e| format!("mem_thread_create: {e}"))?;
            thread_ids.push(id);
        }
    }
    tx.commit().map_err(|e| e.to_string())?;
    Ok(thread_ids)
}

/// Inserts `msgs` in transactions of `batch` rows through `sql` (bound by `bind`) until done or
/// the budget is spent. Returns (seconds, messages, bytes written per message).
fn ingest<'m>(
    conn: &Connection,
    msgs: &'m [crate::generator::Message],
    batch: usize,
    budget: std::time::Duration,
    sql: &str,
    bind: &dyn Fn(
        &mut rusqlite::CachedStatement<'_>,
        &'m crate::generator::Message,
    ) -> rusqlite::Result<()>,
) -> Result<(f64, usize, f64), String> {
    let (_, w0) = sys::io();
    let started = Instant::now();
    let mut done = 0;
    for chunk in msgs.chunks(batch) {
        if started.elapsed() > budget {
            break;
        }
        done += chunk.len();
        let tx = conn.unchecked_transaction().map_err(|e| e.to_string())?;
        {
            let mut st = tx.prepare_cached(sql).map_err(|e| e.to_string())?;
            for m in chunk {
                bind(&mut st, m).map_err(|e| format!("{sql}: {e}"))?;
            }
        }
        tx.commit().map_err(|e| e.to_string())?;
    }
    let secs = started.elapsed().as_secs_f64();
    let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    let (_, w1) = sys::io();
    Ok((secs, done, (w1 - w0) as f64 / done.max(1) as f64))
}

/// Mean bytes read from the file per query, over up to 50 queries run now.
fn read_per_query(
    queries: &[String],
    mut run: impl FnMut(&str) -> Result<Vec<String>, String>,
) -> Result<f64, String> {
    let qs = &queries[..queries.len().min(50)];
    let (r0, _) = sys::io();
    for q in qs {
        run(q)?;
    }
    let (r1, _) = sys::io();
    Ok((r1 - r0) as f64 / qs.len().max(1) as f64)
}

/// Runs one query on a fresh connection after `prepare` (which empties the engine's caches)
/// and an emptied OS page cache: (ms, bytes read from the file).
fn cold_one(
    path: &Path,
    prepare: &dyn Fn(&Connection) -> Result<(), String>,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<(f64, u64), String> {
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.execute_batch(PRAGMAS).map_err(|e| e.to_string())?;
    prepare(&conn)?;
    let mut st = conn.prepare(sql).map_err(|e| e.to_string())?;
    sys::drop_os_caches();
    let (r0, _) = sys::io();
    let t = Instant::now();
    let n = st
        .query_map(params, |r| r.get::<_, String>(0))
        .map_err(|e| e.to_string())?
        .count();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let (r1, _) = sys::io();
    let _ = n;
    Ok((ms, r1 - r0))
}

fn run_ours(
    ds: &Dataset,
    queries: &[String],
    warmup: &[String],
    questions: &[(String, Vec<usize>)],
    s: &Settings,
) -> Outcome {
    if s.skip_ours {
        return Err("agentmem: skipped (--skip-ours)".into());
    }
    let (conn, path) = fresh_db(&s.data_dir, &format!("agentmem-{}.db", ds.messages.len()))?;
    let ext = snapshot_extension(&s.extension, &s.data_dir)?;
    let result = (|| {
        load_agentmem(&conn, &ext)?;
        probe_ours(&conn)?;
        let thread_ids = create_threads(&conn, ds)?;
        let (ingest_secs, done, write_per_msg) = ingest(
            &conn,
            &ds.messages,
            s.batch,
            s.ingest_budget,
            "INSERT INTO mem_messages (id, thread_id, role, raw_content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            &|st, m| {
                st.execute(params![
                    m.id,
                    thread_ids[m.thread as usize],
                    m.role.as_str(),
                    m.content,
                    m.created_at
                ])
                .map(|_| ())
            },
        )?;
        if done < ds.messages.len() {
            return Ok(EngineResult::ingest_only(ingest_secs, done));
        }
        let optimize_secs = if s.optimize {
            let t = Instant::now();
            // Each call writes about one merge bound; repeated until the index is in shape.
            while conn
                .query_row("SELECT mem_optimize()", [], |r| r.get::<_, i64>(0))
                .map_err(|e| format!("mem_optimize: {e}"))?
                > 0
            {}
            Some(t.elapsed().as_secs_f64())
        } else {
            None
        };
        let options = format!("{{\"limit\":10,\"now\":{}}}", s.now_ms);
        let mut st = conn.prepare(OURS_SEARCH).map_err(|e| e.to_string())?;
        let mut search = |q: &str| -> Result<Vec<String>, String> {
            let rows = st
                .query_map(params![q, options], |r| r.get::<_, String>(0))
                .map_err(|e| e.to_string())?;
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())
        };
        let (latency, samples_ms, hits) = time_queries(queries, warmup, s.budget, &mut search)?;
        let read_warm = read_per_query(queries, &mut search)?;
        let quality = (!questions.is_empty())
            .then(|| crate::report::quality(questions, s.budget, &mut search))
            .transpose()?;
        drop(st);
        let load = |c: &Connection| -> Result<(), String> {
            load_agentmem(c, &ext)?;
            c.query_row("SELECT mem_search_cache(0)", [], |_| Ok(()))
                .and_then(|_| c.query_row("SELECT mem_search_cache(67108864)", [], |_| Ok(())))
                .map_err(|e| format!("mem_search_cache: {e}"))
        };
        let (cold, read_cold) =
            crate::report::time_cold(&queries[..queries.len().min(s.cold)], |q| {
                cold_one(&path, &load, OURS_SEARCH, &[&q, &options])
            })?;
        let index_bytes = table_bytes(&conn, "mem\\_idx\\_%");
        Ok(EngineResult {
            ingest_secs,
            ingest_msgs: ds.messages.len(),
            ingest_cut: false,
            optimize_secs,
            index_bytes,
            db_bytes: db_bytes(&conn),
            latency,
            samples_ms,
            hits,
            cold: Some(cold),
            read_warm: Some(read_warm),
            read_cold: Some(read_cold),
            write_per_msg: Some(write_per_msg),
            add_rate: Some(add_rate(ds, &ext, s)?),
            quality,
        })
    })();
    let _ = std::fs::remove_dir_all(ext.parent().unwrap_or(&s.data_dir));
    result
}

/// Messages per second through `mem_message_add` on the first `s.add_sample` messages, in a
/// database of their own.
fn add_rate(ds: &Dataset, ext: &Path, s: &Settings) -> Result<f64, String> {
    let n = ds.messages.len().min(s.add_sample);
    let (conn, _) = fresh_db(&s.data_dir, "agentmem-add.db")?;
    load_agentmem(&conn, ext)?;
    let thread_ids = create_threads(&conn, ds)?;
    let (secs, done, _) = ingest(
        &conn,
        &ds.messages[..n],
        s.batch,
        s.ingest_budget,
        "SELECT mem_message_add(?1, ?2, ?3, ?4)",
        &|st, m| {
            let opts = format!("{{\"id\":\"{}\",\"created_at\":{}}}", m.id, m.created_at);
            st.query_row(
                params![
                    thread_ids[m.thread as usize],
                    m.role.as_str(),
                    m.content,
                    opts
                ],
                |_| Ok(()),
            )
        },
    )?;
    drop(conn);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(s.data_dir.join(format!("agentmem-add.db{suffix}")));
    }
    Ok(done as f64 / secs.max(1e-9))
}

fn run_fts5(
    ds: &Dataset,
    queries: &[String],
    warmup: &[String],
    questions: &[(String, Vec<usize>)],
    s: &Settings,
) -> Outcome {
    if s.skip_peers {
        return Err("fts5: skipped (--skip-peers)".into());
    }
    let (conn, path) = fresh_db(&s.data_dir, &format!("fts5-{}.db", ds.messages.len()))?;
    conn.execute_batch(FTS5_SCHEMA)
        .map_err(|e| format!("FTS5 schema: {e}"))?;
    let (ingest_secs, done, write_per_msg) = ingest(
        &conn,
        &ds.messages,
        s.batch,
        s.ingest_budget,
        "INSERT INTO messages (id, thread_id, role, created_at, content, searchText) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        &|st, m| {
            st.execute(params![
                m.id,
                format!("t{}", m.thread),
                m.role.as_str(),
                m.created_at,
                m.content
            ])
            .map(|_| ())
        },
    )?;
    if done < ds.messages.len() {
        return Ok(EngineResult::ingest_only(ingest_secs, done));
    }
    let optimize_secs = if s.optimize {
        let t = Instant::now();
        conn.execute(
            "INSERT INTO messages_fts(messages_fts) VALUES ('optimize')",
            [],
        )
        .map_err(|e| format!("FTS5 optimize: {e}"))?;
        Some(t.elapsed().as_secs_f64())
    } else {
        None
    };
    let mut st = conn.prepare(FTS5_SEARCH).map_err(|e| e.to_string())?;
    let mut search = |q: &str| -> Result<Vec<String>, String> {
        let m = fts5_match(q);
        let rows = st
            .query_map(params![m, s.fts_recency_factor], |r| r.get::<_, String>(0))
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    };
    let (latency, samples_ms, hits) = time_queries(queries, warmup, s.budget, &mut search)?;
    let read_warm = read_per_query(queries, &mut search)?;
    drop(st);
    let mut ranked = conn.prepare(FTS5_RANKED).map_err(|e| e.to_string())?;
    let quality = (!questions.is_empty())
        .then(|| {
            crate::report::quality(questions, s.budget, |q| {
                let rows = ranked
                    .query_map(params![fts5_match(q)], |r| r.get::<_, String>(0))
                    .map_err(|e| e.to_string())?;
                rows.collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())
            })
        })
        .transpose()?;
    drop(ranked);
    let (cold, read_cold) = crate::report::time_cold(&queries[..queries.len().min(s.cold)], |q| {
        let m = fts5_match(q);
        cold_one(
            &path,
            &|_| Ok(()),
            FTS5_SEARCH,
            &[&m, &s.fts_recency_factor],
        )
    })?;
    Ok(EngineResult {
        ingest_secs,
        ingest_msgs: ds.messages.len(),
        ingest_cut: false,
        optimize_secs,
        index_bytes: table_bytes(&conn, "messages\\_fts%"),
        db_bytes: db_bytes(&conn),
        latency,
        samples_ms,
        hits,
        cold: Some(cold),
        read_warm: Some(read_warm),
        read_cold: Some(read_cold),
        write_per_msg: Some(write_per_msg),
        add_rate: None,
        quality,
    })
}

pub fn run(
    ds: &Dataset,
    queries: &[String],
    warmup: &[String],
    questions: &[(String, Vec<usize>)],
    s: &Settings,
) -> Comparison {
    let size = ds.messages.len();
    eprintln!("[sqlite {size}] agentmem …");
    let ours = run_ours(ds, queries, warmup, questions, s);
    crate::log_outcome("sqlite", size, "agentmem", &ours);
    eprintln!("[sqlite {size}] fts5 …");
    let peer = run_fts5(ds, queries, warmup, questions, s);
    crate::log_outcome("sqlite", size, "fts5", &peer);
    if !s.keep_files {
        for name in [format!("agentmem-{size}.db"), format!("fts5-{size}.db")] {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(s.data_dir.join(format!("{name}{suffix}")));
            }
        }
    }
    Comparison {
        backend: "sqlite",
        peer_name: "fts5",
        size,
        ours,
        peer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_expression_never_fails() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(FTS5_SCHEMA).unwrap();
        conn.execute(
            "INSERT INTO messages VALUES ('a', 't', 'user', 1, 'x', 'fix src/auth/login.ts and refresh_tokens')",
            [],
        )
        .unwrap();
        for q in [
            "src/auth/login.ts",
            "Foo::bar \"quoted\" (reading",
            "refresh_tokens OR AND NOT",
            "*",
            "-x +y",
        ] {
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
                    [fts5_match(q)],
                    |r| r.get(0),
                )
                .unwrap_or_else(|e| panic!("{q}: {e}"));
            assert!(n <= 1);
        }
    }
}
