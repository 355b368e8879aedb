//! A SQLite file, with agentmem linked into this binary.

use super::connection::{hex, Db, Result, Sink};
use rusqlite::types::ValueRef;
use serde_json::Value as Json;
use std::sync::Once;
use std::time::Duration;

pub struct Sqlite {
    conn: rusqlite::Connection,
}

/// Makes every connection this process opens get agentmem's functions.
fn register() -> Result<()> {
    static REGISTER: Once = Once::new();
    let mut rc = rusqlite::ffi::SQLITE_OK;
    REGISTER.call_once(|| {
        type Init = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::os::raw::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::os::raw::c_int;
        let init: Init = unsafe {
            // SAFETY: the same C signature; sqlite-loadable names the routine table's type
            // differently from rusqlite.
            std::mem::transmute::<*const (), Init>(
                agentmem0::sqlite3_agentmem_linked_init as *const (),
            )
        };
        // SAFETY: SQLite calls the entry point with each new connection and the routine table.
        rc = unsafe { rusqlite::ffi::sqlite3_auto_extension(Some(init)) };
    });
    if rc == rusqlite::ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(format!(
            "registering agentmem with SQLite failed (code {rc})"
        ))
    }
}

impl Sqlite {
    /// Opens (or creates) the file and brings its schema up to date with `mem_init()`.
    pub fn open(path: &str) -> Result<Sqlite> {
        register()?;
        let conn = rusqlite::Connection::open(path).map_err(|e| format!("{path}: {e}"))?;
        // Writers queue instead of failing while another process writes.
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(|e| e.to_string())?;
        // Writes that run through triggers (an edge and its closure rows, a message and its
        // index) keep a statement journal; in memory it costs no file writes (docs/install.md).
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(|e| e.to_string())?;
        conn.query_row("SELECT mem_init()", [], |_| Ok(()))
            .map_err(|e| format!("{path}: {e}"))?;
        Ok(Sqlite { conn })
    }
}

impl Db for Sqlite {
    fn in_process(&self) -> bool {
        true
    }

    /// A page cache of 128 MiB instead of SQLite's 2 MiB: a large write reads the closure's
    /// and the search index's pages again and again, each a `read()` once it left the cache.
    /// Not from the start, because a page first read into a larger cache is new memory for
    /// the process, which costs a short run more than it saves (docs/install.md).
    fn expect_bulk(&mut self) -> Result<()> {
        self.conn
            .pragma_update(None, "cache_size", -131_072)
            .map_err(|e| e.to_string())
    }

    fn placeholder(&self, n: usize, ty: super::Type) -> String {
        match ty {
            super::Type::Int | super::Type::Bool => format!("CAST(?{n} AS INTEGER)"),
            super::Type::Real => format!("CAST(?{n} AS REAL)"),
            _ => format!("?{n}"),
        }
    }

    fn each(&mut self, sql: &str, params: &[Option<&str>], row: Sink) -> Result<()> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| message(&e))?;
        let n = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(|e| message(&e))?;
        while let Some(r) = rows.next().map_err(|e| message(&e))? {
            let mut values = Vec::with_capacity(n);
            for i in 0..n {
                values.push(match r.get_ref(i).map_err(|e| message(&e))? {
                    ValueRef::Null => Json::Null,
                    ValueRef::Integer(v) => Json::from(v),
                    ValueRef::Real(v) => Json::from(v),
                    ValueRef::Text(t) => Json::String(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Json::String(hex(b)),
                });
            }
            row(values)?;
        }
        Ok(())
    }
}

/// SQLite's message without rusqlite's wrapping.
fn message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    }
}
