//! [`Conn`] over the connection that called a function, through the host's C API.

use crate::api::call;
use crate::state::{Shared, State};
use agentmem_core::db::conn::Work;
use agentmem_core::db::session::Session;
use agentmem_core::{Conn, Dialect, Error, Result, Row, Value, ValueRef};
use sqlite_loadable::ext::{sqlite3, sqlite3_stmt};
use std::ffi::{c_char, c_int, c_void, CStr};

const SQLITE_OK: c_int = 0;
const SQLITE_ROW: c_int = 100;
const SQLITE_DONE: c_int = 101;
const SQLITE_INTEGER: c_int = 1;
const SQLITE_FLOAT: c_int = 2;
const SQLITE_TEXT: c_int = 3;
const SQLITE_BLOB: c_int = 4;

/// SQLITE_TRANSIENT: SQLite copies bound or returned text and blobs before the call returns.
pub(crate) fn transient() -> Option<unsafe extern "C" fn(*mut c_void)> {
    // SAFETY: SQLite defines SQLITE_TRANSIENT as the destructor pointer value -1, which it
    // recognises and never calls.
    Some(unsafe { std::mem::transmute::<isize, unsafe extern "C" fn(*mut c_void)>(-1) })
}

/// A borrowed connection handle (the caller's; never closed here) and its state.
pub struct SqliteConn {
    db: *mut sqlite3,
    state: Shared,
}

impl SqliteConn {
    pub fn new(db: *mut sqlite3, state: Shared) -> Self {
        SqliteConn { db, state }
    }

    /// The connection's state.
    pub fn state(&mut self) -> &mut State {
        // SAFETY: the connection is open while a call runs on it, and `&mut self` keeps
        // this borrow the only one (see `Shared::get`).
        unsafe { self.state.get() }
    }

    /// Compiles `sql` (core dialect); the caller owns the statement and finalizes it.
    fn prepare_raw(&mut self, sql: &str) -> Result<*mut sqlite3_stmt> {
        let text = Dialect::Sqlite.prepare(sql)?;
        let mut raw: *mut sqlite3_stmt = std::ptr::null_mut();
        // SAFETY: text outlives the call; SQLite copies what it keeps.
        let rc = unsafe {
            call!(prepare_v2(
                self.db,
                text.as_ptr() as *const c_char,
                text.len() as c_int,
                &mut raw,
                std::ptr::null_mut()
            ))
        };
        if rc != SQLITE_OK {
            if !raw.is_null() {
                // SAFETY: raw came from prepare_v2 and is finalized once.
                unsafe { call!(finalize(raw)) };
            }
            return Err(self.error());
        }
        Ok(raw)
    }

    /// Prepares `sql` (core dialect; from the statement cache when it holds it) and runs it
    /// once, keeping the statement for the caller. The run also prepares it again when the
    /// schema changed since it was cached, while preparing still works.
    pub fn prepare_kept(&mut self, sql: &str) -> Result<Kept> {
        let mut stmt = self.prepare(sql, &[])?;
        // SAFETY: the statement is valid.
        let rc = unsafe { call!(step(stmt.raw)) };
        unsafe { call!(reset(stmt.raw)) };
        if rc != SQLITE_DONE && rc != SQLITE_ROW {
            stmt.failed = true;
            return Err(self.error());
        }
        Ok(Kept { stmt })
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

    /// A statement for `sql` with `params` bound: from the connection's statement cache when
    /// it holds one, prepared otherwise. Dropping the [`Stmt`] resets it and returns it to the
    /// cache (or finalizes it).
    fn prepare(&mut self, sql: &str, params: &[Value]) -> Result<Stmt> {
        let stmt = match cache::take(self.db, self.state, sql) {
            Some(s) => s,
            None => Stmt {
                raw: self.prepare_raw(sql)?,
                state: self.state,
                key: Some(sql.to_owned()),
                failed: false,
            },
        };
        let mut stmt = stmt;
        for (i, p) in params.iter().enumerate() {
            let i = i as c_int + 1;
            // SAFETY: stmt is valid; text and blob are copied (SQLITE_TRANSIENT).
            let rc = unsafe {
                match p {
                    Value::Null => call!(bind_null(stmt.raw, i)),
                    Value::Int(v) => call!(bind_int64(stmt.raw, i, *v)),
                    Value::Real(v) => call!(bind_double(stmt.raw, i, *v)),
                    Value::Text(s) => call!(bind_text(
                        stmt.raw,
                        i,
                        s.as_ptr() as *const c_char,
                        s.len() as c_int,
                        transient()
                    )),
                    Value::Blob(b) => call!(bind_blob(
                        stmt.raw,
                        i,
                        b.as_ptr() as *const c_void,
                        b.len() as c_int,
                        transient()
                    )),
                    Value::Json(j) => bind_json(stmt.raw, i, &j.to_text()),
                }
            };
            if rc != SQLITE_OK {
                stmt.failed = true;
                return Err(self.error());
            }
        }
        Ok(stmt)
    }
}

/// Binds JSON text the core's value rendered (a list, a tree) as parameter `i`, copied.
///
/// # Safety
/// `stmt` is a live statement with at least `i` parameters.
unsafe fn bind_json(stmt: *mut sqlite3_stmt, i: c_int, json: &str) -> c_int {
    call!(bind_text(
        stmt,
        i,
        json.as_ptr() as *const c_char,
        json.len() as c_int,
        transient()
    ))
}

/// A statement held ready for later use within one call, out of the cache until it drops.
pub struct Kept {
    stmt: Stmt,
}

impl Kept {
    /// Runs the statement once, ignoring its outcome (it exists for its side effect on the
    /// connection: see `functions::atomic`).
    pub fn step_once(&self) {
        // SAFETY: the statement is live and held by this Kept.
        unsafe {
            call!(step(self.stmt.raw));
            call!(reset(self.stmt.raw));
        }
    }
}

/// A prepared statement in use. On drop it is reset and its bindings cleared, then handed
/// back to the connection's cache, or finalized when it failed, when it is not cacheable or
/// when the cache is gone.
struct Stmt {
    raw: *mut sqlite3_stmt,
    state: Shared,
    /// The core SQL text it was prepared from (the cache key).
    key: Option<String>,
    /// Set on any error: the statement is finalized, never reused.
    failed: bool,
}

impl Drop for Stmt {
    fn drop(&mut self) {
        // SAFETY: raw is a live statement of db, owned by this Stmt alone.
        unsafe {
            call!(reset(self.raw));
            call!(clear_bindings(self.raw));
        }
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        let leftover = match (self.failed, self.key.take()) {
            (false, Some(key)) => cache::give_back(self.state, key, raw),
            _ => Some(raw),
        };
        if let Some(raw) = leftover {
            // SAFETY: finalize accepts any statement from prepare_v2, once.
            unsafe { call!(finalize(raw)) };
        }
    }
}

impl Stmt {
    fn column(&self, i: c_int) -> Value {
        self.column_ref(i).to_owned()
    }

    /// Column `i` of the current row, borrowed: valid until the statement steps or resets.
    ///
    /// Read through the column's value object: each `sqlite3_column_*` call takes and
    /// releases the connection's mutex, and the value's accessors do not. This thread holds
    /// that mutex throughout anyway: the extension runs only inside SQLite's callbacks (a
    /// function, a virtual table's method), within the statement that called it.
    fn column_ref(&self, i: c_int) -> ValueRef<'_> {
        // SAFETY: the statement is positioned on a row and i < column_count; the value and
        // the pointers SQLite returns from it stay valid until the statement steps, which
        // needs `&mut self`.
        unsafe {
            let v = call!(column_value(self.raw, i));
            let bytes = |p: *const u8| {
                let n = call!(value_bytes(v)) as usize;
                if p.is_null() {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(p, n)
                }
            };
            match call!(value_type(v)) {
                SQLITE_INTEGER => ValueRef::Int(call!(value_int64(v))),
                SQLITE_FLOAT => ValueRef::Real(call!(value_double(v))),
                SQLITE_TEXT => {
                    let b = bytes(call!(value_text(v)));
                    // Checked whole first: valid text (nearly all) is borrowed as it is.
                    ValueRef::Text(match std::str::from_utf8(b) {
                        Ok(s) => std::borrow::Cow::Borrowed(s),
                        Err(_) => String::from_utf8_lossy(b),
                    })
                }
                SQLITE_BLOB => ValueRef::Blob(bytes(call!(value_blob(v)) as *const u8)),
                _ => ValueRef::Null,
            }
        }
    }
}

/// Prepared statements kept per connection, keyed by the core's SQL text, so that a trigger
/// running the same few statements for every inserted row does not parse and plan them each
/// time (preparing was most of the cost of an insert).
///
/// Lifetime: `sqlite3_close` refuses to close a connection with unfinalized statements, and
/// SQLite has no close hook that runs before that check, except that it disconnects every
/// virtual table first (FTS5 keeps its statements the same way). So the extension registers
/// a tiny eponymous virtual table `mem__stmt_cache` on every connection, whose module owns
/// the connection's [`State`] (freed when SQLite destroys the connection's modules), and the
/// first use connects it; its `xDisconnect`, run by `sqlite3_close`/`sqlite3_close_v2` before
/// the busy check, finalizes the connection's statements. If SQLite disconnects it earlier
/// for any reason, the statements are just finalized early and the next use connects it
/// again.
///
/// A statement is taken out of the cache while it runs, so a nested use of the same SQL
/// (a statement firing a trigger that calls back into the extension) prepares its own copy.
mod cache {
    use crate::api::call;
    use crate::eponymous::{self, Module, Tab};
    use crate::state::Shared;
    use sqlite_loadable::ext::{sqlite3, sqlite3_stmt, sqlite3_vtab};
    use std::collections::hash_map::Entry as Slot;
    use std::ffi::{c_char, c_int, c_void};
    use std::sync::OnceLock;

    /// Distinct statements kept per connection (the core has a few dozen).
    const MAX_STATEMENTS: usize = 256;
    const PROBE_SQL: &[u8] = b"SELECT 1 FROM mem__stmt_cache\0";

    /// Takes the cached statement for `sql`, connecting the cache's table on first use.
    pub(super) fn take(db: *mut sqlite3, state: Shared, sql: &str) -> Option<super::Stmt> {
        // SAFETY: the caller's connection is open and holds no other borrow of its state.
        let st = unsafe { state.get() };
        if !st.caching {
            st.caching = connect(db);
            return None;
        }
        let (key, raw) = st.statements.remove_entry(sql)?;
        Some(super::Stmt {
            raw,
            state,
            key: Some(key),
            failed: false,
        })
    }

    /// Returns a reset statement to the cache; gives it back when it cannot be kept.
    pub(super) fn give_back(
        state: Shared,
        key: String,
        raw: *mut sqlite3_stmt,
    ) -> Option<*mut sqlite3_stmt> {
        // SAFETY: as in `take`.
        let st = unsafe { state.get() };
        if !st.caching || st.statements.len() >= MAX_STATEMENTS {
            return Some(raw);
        }
        match st.statements.entry(key) {
            Slot::Vacant(v) => {
                v.insert(raw);
                None
            }
            Slot::Occupied(_) => Some(raw),
        }
    }

    /// Finalizes and forgets the connection's statements (`sqlite3_close` disconnects its
    /// virtual tables before it checks for busy statements).
    unsafe extern "C" fn x_disconnect(vtab: *mut sqlite3_vtab) -> c_int {
        let tab = Box::from_raw(vtab as *mut Tab);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let st = tab.state.get();
            st.caching = false;
            for (_, raw) in st.statements.drain() {
                // SAFETY: each cached statement is owned by the cache alone, finalized once.
                call!(finalize(raw));
            }
        }));
        0
    }

    /// The module's destructor: the connection closed, its state goes.
    unsafe extern "C" fn free(aux: *mut c_void) {
        let _ = std::panic::catch_unwind(|| Shared(aux as *mut crate::state::State).free());
    }

    fn module() -> &'static Module {
        static MODULE: OnceLock<Module> = OnceLock::new();
        MODULE.get_or_init(|| {
            Module(eponymous::module(
                1,
                eponymous::connect!(c"CREATE TABLE x(x)"),
                x_disconnect,
            ))
        })
    }

    /// Registers the cache's table on `db`, which owns `state` from now on.
    pub(crate) fn register(db: *mut sqlite3, state: Shared) -> c_int {
        eponymous::register_owning(
            db,
            c"mem__stmt_cache",
            module(),
            state.0 as *mut c_void,
            free,
        )
    }

    /// Connects the table, so that its disconnect runs when the connection closes.
    fn connect(db: *mut sqlite3) -> bool {
        // SAFETY: db is live; the probe is finalized here.
        unsafe {
            let mut probe: *mut sqlite3_stmt = std::ptr::null_mut();
            let rc = call!(prepare_v2(
                db,
                PROBE_SQL.as_ptr() as *const c_char,
                -1,
                &mut probe,
                std::ptr::null_mut()
            ));
            if !probe.is_null() {
                call!(finalize(probe));
            }
            rc == 0
        }
    }
}

pub(crate) use cache::register as register_state;

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn session(&mut self) -> &mut Session {
        &mut self.state().session
    }

    fn as_conn(&mut self) -> &mut dyn Conn {
        self
    }

    /// Reads the defensive flag, clears it for `f` and sets it back to what it was, whatever
    /// `f` returns (better-sqlite3, for one, opens every connection defensive).
    fn unguarded_schema(&mut self, f: &mut Work<'_>) -> Result<()> {
        const SQLITE_DBCONFIG_DEFENSIVE: c_int = 1010;
        let mut was: c_int = 0;
        // SAFETY: the connection is open while a call runs on it; the flag's query form
        // writes one int through the pointer.
        let read = unsafe {
            call!(db_config(
                self.db,
                SQLITE_DBCONFIG_DEFENSIVE,
                -1 as c_int,
                &mut was as *mut c_int
            ))
        };
        if read != 0 || was == 0 {
            return f(self);
        }
        // SAFETY: as above; the set form reads `on` and writes nothing back.
        let set = |db, on: c_int| unsafe {
            call!(db_config(
                db,
                SQLITE_DBCONFIG_DEFENSIVE,
                on,
                std::ptr::null_mut::<c_int>()
            ))
        };
        set(self.db, 0);
        let outcome = f(self);
        set(self.db, was);
        outcome
    }

    /// `AGENTMEM_FAILPOINT` and `AGENTMEM_FAILPOINT_MARK` from the process environment
    /// (crash tests), read once.
    fn failpoint(&mut self) -> Option<(String, String)> {
        static FAILPOINT: std::sync::OnceLock<Option<(String, String)>> =
            std::sync::OnceLock::new();
        FAILPOINT
            .get_or_init(|| {
                Some((
                    std::env::var("AGENTMEM_FAILPOINT").ok()?,
                    std::env::var("AGENTMEM_FAILPOINT_MARK").ok()?,
                ))
            })
            .clone()
    }

    /// Steps a trivial cached statement: SQLite fails any statement of an interrupted
    /// connection (`sqlite3_interrupt`), and the statement's steps count towards the progress
    /// handler, whose non-zero answer interrupts it.
    fn check_interrupt(&mut self) -> Result<()> {
        self.query("SELECT 1", &[]).map(|_| ())
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let mut stmt = self.prepare(sql, params)?;
        // SAFETY: stmt is valid until dropped at the end of this function.
        let ncols = unsafe { call!(column_count(stmt.raw)) };
        let mut rows = Vec::new();
        loop {
            match unsafe { call!(step(stmt.raw)) } {
                SQLITE_ROW => rows.push((0..ncols).map(|i| stmt.column(i)).collect()),
                SQLITE_DONE => return Ok(rows),
                _ => {
                    stmt.failed = true;
                    return Err(self.error());
                }
            }
        }
    }

    fn for_each_row(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(&[ValueRef<'_>]) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.prepare(sql, params)?;
        // SAFETY: stmt is valid until dropped at the end of this function.
        let ncols = unsafe { call!(column_count(stmt.raw)) };
        let mut row: Vec<ValueRef<'_>> = Vec::with_capacity(ncols.max(0) as usize);
        let done = loop {
            // The borrowed values stay valid until the next step: the row is emptied first.
            row.clear();
            match unsafe { call!(step(stmt.raw)) } {
                SQLITE_ROW => {
                    row.extend((0..ncols).map(|i| stmt.column_ref(i)));
                    f(&row)?;
                }
                SQLITE_DONE => break true,
                _ => break false,
            }
        };
        drop(row);
        if done {
            Ok(())
        } else {
            stmt.failed = true;
            Err(self.error())
        }
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let mut stmt = self.prepare(sql, params)?;
        loop {
            // SAFETY: as in query.
            match unsafe { call!(step(stmt.raw)) } {
                SQLITE_ROW => continue,
                SQLITE_DONE => break,
                _ => {
                    stmt.failed = true;
                    return Err(self.error());
                }
            }
        }
        // SAFETY: db is live.
        Ok(unsafe { call!(changes(self.db)) } as u64)
    }

    fn execute_batch(&mut self, sql: &str) -> Result<()> {
        let sql = Dialect::Sqlite.statement(sql);
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
