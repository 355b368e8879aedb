//! [`Conn`] over the connection that called a function, through the host's C API.

use crate::api::call;
use agentmem_core::{conn::dialect_sql, Conn, Dialect, Error, Result, Row, Value};
use sqlite_loadable::ext::{sqlite3, sqlite3_stmt};
use std::ffi::{c_char, c_int, c_void, CStr};

const SQLITE_OK: c_int = 0;
const SQLITE_ROW: c_int = 100;
const SQLITE_DONE: c_int = 101;
const SQLITE_INTEGER: c_int = 1;
const SQLITE_FLOAT: c_int = 2;
const SQLITE_TEXT: c_int = 3;
const SQLITE_BLOB: c_int = 4;

/// SQLITE_TRANSIENT: SQLite copies bound text and blobs before the call returns.
fn transient() -> Option<unsafe extern "C" fn(*mut c_void)> {
    // SAFETY: SQLite defines SQLITE_TRANSIENT as the destructor pointer value -1, which it
    // recognises and never calls.
    Some(unsafe { std::mem::transmute::<isize, unsafe extern "C" fn(*mut c_void)>(-1) })
}

/// A borrowed connection handle (the caller's; never closed here).
pub struct SqliteConn {
    db: *mut sqlite3,
}

impl SqliteConn {
    pub fn new(db: *mut sqlite3) -> Self {
        SqliteConn { db }
    }

    /// Whether the connection is inside a transaction (not in autocommit mode).
    pub fn in_transaction(&self) -> bool {
        // SAFETY: db is live.
        unsafe { call!(get_autocommit(self.db)) == 0 }
    }

    /// Whether a writing statement is running on this connection (the caller's
    /// `INSERT … SELECT f()`, `CREATE TABLE … AS SELECT f()`, or a trigger's statement): then
    /// our statements are part of its statement transaction, and it cannot commit before it
    /// ends.
    pub fn in_writing_statement(&self) -> bool {
        // SAFETY: next_stmt walks the connection's prepared statements; we only read flags.
        unsafe {
            let mut s = call!(next_stmt(self.db, std::ptr::null_mut()));
            while !s.is_null() {
                if call!(stmt_busy(s)) != 0 && call!(stmt_readonly(s)) == 0 {
                    return true;
                }
                s = call!(next_stmt(self.db, s));
            }
        }
        false
    }

    fn error(&self) -> Error {
        // SAFETY: db is a live connection; errmsg returns a NUL-terminated string it owns.
        let msg = unsafe { CStr::from_ptr(call!(errmsg(self.db))) };
        Error::Database(msg.to_string_lossy().into_owned())
    }

    /// Prepares `sql` and binds `params`; the statement is finalized when dropped.
    fn prepare(&mut self, sql: &str, params: &[Value]) -> Result<Stmt> {
        let sql = dialect_sql(sql, Dialect::Sqlite);
        let mut stmt: *mut sqlite3_stmt = std::ptr::null_mut();
        // SAFETY: sql outlives the call; SQLite copies what it keeps.
        let rc = unsafe {
            call!(prepare_v2(
                self.db,
                sql.as_ptr() as *const c_char,
                sql.len() as c_int,
                &mut stmt,
                std::ptr::null_mut()
            ))
        };
        if rc != SQLITE_OK {
            return Err(self.error());
        }
        let stmt = Stmt(stmt);
        for (i, p) in params.iter().enumerate() {
            let i = i as c_int + 1;
            // SAFETY: stmt is valid; text and blob are copied (SQLITE_TRANSIENT).
            let rc = unsafe {
                match p {
                    Value::Null => call!(bind_null(stmt.0, i)),
                    Value::Int(v) => call!(bind_int64(stmt.0, i, *v)),
                    Value::Real(v) => call!(bind_double(stmt.0, i, *v)),
                    Value::Text(s) => call!(bind_text(
                        stmt.0,
                        i,
                        s.as_ptr() as *const c_char,
                        s.len() as c_int,
                        transient()
                    )),
                    Value::Blob(b) => call!(bind_blob(
                        stmt.0,
                        i,
                        b.as_ptr() as *const c_void,
                        b.len() as c_int,
                        transient()
                    )),
                }
            };
            if rc != SQLITE_OK {
                return Err(self.error());
            }
        }
        Ok(stmt)
    }
}

struct Stmt(*mut sqlite3_stmt);

impl Drop for Stmt {
    fn drop(&mut self) {
        // SAFETY: finalize accepts any statement from prepare_v2, once.
        unsafe { call!(finalize(self.0)) };
    }
}

impl Stmt {
    fn column(&self, i: c_int) -> Value {
        // SAFETY: the statement is positioned on a row and i < column_count.
        unsafe {
            match call!(column_type(self.0, i)) {
                SQLITE_INTEGER => Value::Int(call!(column_int64(self.0, i))),
                SQLITE_FLOAT => Value::Real(call!(column_double(self.0, i))),
                SQLITE_TEXT => {
                    let p = call!(column_text(self.0, i));
                    let n = call!(column_bytes(self.0, i)) as usize;
                    let bytes = if p.is_null() {
                        &[][..]
                    } else {
                        std::slice::from_raw_parts(p, n)
                    };
                    Value::Text(String::from_utf8_lossy(bytes).into_owned())
                }
                SQLITE_BLOB => {
                    let p = call!(column_blob(self.0, i)) as *const u8;
                    let n = call!(column_bytes(self.0, i)) as usize;
                    let bytes = if p.is_null() {
                        &[][..]
                    } else {
                        std::slice::from_raw_parts(p, n)
                    };
                    Value::Blob(bytes.to_vec())
                }
                _ => Value::Null,
            }
        }
    }
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let stmt = self.prepare(sql, params)?;
        // SAFETY: stmt is valid until dropped at the end of this function.
        let ncols = unsafe { call!(column_count(stmt.0)) };
        let mut rows = Vec::new();
        loop {
            match unsafe { call!(step(stmt.0)) } {
                SQLITE_ROW => rows.push((0..ncols).map(|i| stmt.column(i)).collect()),
                SQLITE_DONE => return Ok(rows),
                _ => return Err(self.error()),
            }
        }
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let stmt = self.prepare(sql, params)?;
        loop {
            // SAFETY: as in query.
            match unsafe { call!(step(stmt.0)) } {
                SQLITE_ROW => continue,
                SQLITE_DONE => break,
                _ => return Err(self.error()),
            }
        }
        // SAFETY: db is live.
        Ok(unsafe { call!(changes(self.db)) } as u64)
    }

    fn execute_batch(&mut self, sql: &str) -> Result<()> {
        let sql = dialect_sql(sql, Dialect::Sqlite);
        let c = std::ffi::CString::new(sql)
            .map_err(|_| Error::internal("schema script contains NUL"))?;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: c is NUL-terminated; err, when set, is freed with sqlite3_free.
        let rc = unsafe {
            call!(exec(
                self.db,
                c.as_ptr(),
                None,
                std::ptr::null_mut(),
                &mut err
            ))
        };
        if rc == SQLITE_OK {
            return Ok(());
        }
        let msg = if err.is_null() {
            self.error().to_string()
        } else {
            // SAFETY: err is a NUL-terminated string from sqlite3_malloc.
            let m = unsafe { CStr::from_ptr(err) }
                .to_string_lossy()
                .into_owned();
            unsafe { call!(free(err as *mut c_void)) };
            m
        };
        Err(Error::Database(msg))
    }
}
