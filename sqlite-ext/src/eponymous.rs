//! Eponymous virtual tables that exist for their hooks and read as empty: the statement
//! cache's (its disconnect finalizes the connection's statements) and
//! `mem__message_inserted` (its transaction callbacks write held documents). What they share
//! is here: the table's connection, and a scan that returns no rows.

use crate::api::call;
use crate::state::Shared;
use sqlite_loadable::ext::{
    sqlite3, sqlite3_context, sqlite3_index_info, sqlite3_module, sqlite3_value, sqlite3_vtab,
    sqlite3_vtab_cursor,
};
use std::ffi::{c_char, c_int, c_void, CStr};

const SQLITE_OK: c_int = 0;

/// A connected table: SQLite's base struct, the connection it lives on and the connection's
/// state (the client data its module was registered with).
#[repr(C)]
pub struct Tab {
    pub base: sqlite3_vtab,
    pub db: *mut sqlite3,
    pub state: Shared,
}

/// A module table, shareable between threads (function pointers, never written after it is
/// built).
pub struct Module(pub sqlite3_module);

// SAFETY: see the type's doc.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

/// A module of `version` with `connect` and `disconnect` (also its `xDestroy`) and a scan that
/// returns no rows; the caller adds its hooks. Without `xCreate` the table is eponymous only:
/// no `CREATE VIRTUAL TABLE` makes another.
pub fn module(
    version: c_int,
    connect: unsafe extern "C" fn(
        *mut sqlite3,
        *mut c_void,
        c_int,
        *const *const c_char,
        *mut *mut sqlite3_vtab,
        *mut *mut c_char,
    ) -> c_int,
    disconnect: unsafe extern "C" fn(*mut sqlite3_vtab) -> c_int,
) -> sqlite3_module {
    // SAFETY: all-zero is a valid sqlite3_module (every callback None).
    let mut m: sqlite3_module = unsafe { std::mem::zeroed() };
    m.iVersion = version;
    m.xConnect = Some(connect);
    m.xDisconnect = Some(disconnect);
    m.xDestroy = Some(disconnect);
    m.xBestIndex = Some(x_best_index);
    m.xOpen = Some(x_open);
    m.xClose = Some(x_close);
    m.xFilter = Some(x_filter);
    m.xNext = Some(x_next);
    m.xEof = Some(x_eof);
    m.xColumn = Some(x_column);
    m.xRowid = Some(x_rowid);
    m
}

/// An `xConnect` that declares the table `$schema` (a C string literal) and makes the [`Tab`]
/// for the connection, whose state is the module's client data.
macro_rules! connect {
    ($schema:expr) => {{
        unsafe extern "C" fn x_connect(
            db: *mut sqlite_loadable::ext::sqlite3,
            aux: *mut std::ffi::c_void,
            _argc: std::ffi::c_int,
            _argv: *const *const std::ffi::c_char,
            pp_vtab: *mut *mut sqlite_loadable::ext::sqlite3_vtab,
            _err: *mut *mut std::ffi::c_char,
        ) -> std::ffi::c_int {
            $crate::eponymous::connect_declaring(db, aux, $schema, pp_vtab)
        }
        x_connect
    }};
}
pub(crate) use connect;

/// The body of an `xConnect`: declares `schema` and makes the [`Tab`] for `db`, whose state is
/// the module's client data `aux`.
///
/// # Safety
/// The arguments are those SQLite passed to `xConnect`.
pub unsafe fn connect_declaring(
    db: *mut sqlite3,
    aux: *mut c_void,
    schema: &CStr,
    pp_vtab: *mut *mut sqlite3_vtab,
) -> c_int {
    let rc = call!(declare_vtab(db, schema.as_ptr()));
    if rc != SQLITE_OK {
        return rc;
    }
    let tab = Box::new(Tab {
        // SAFETY: an all-zero sqlite3_vtab is what SQLite expects from xConnect.
        base: std::mem::zeroed(),
        db,
        state: Shared(aux as *mut crate::state::State),
    });
    *pp_vtab = Box::into_raw(tab) as *mut sqlite3_vtab;
    SQLITE_OK
}

/// Registers `module` as `name` on `db` with `aux` as its client data (what `xConnect`
/// receives), which SQLite hands to `destroy` when the connection drops the module (it closes,
/// or the module is registered again); SQLite's result code.
pub fn register_owning(
    db: *mut sqlite3,
    name: &CStr,
    module: &'static Module,
    aux: *mut c_void,
    destroy: unsafe extern "C" fn(*mut c_void),
) -> c_int {
    // SAFETY: db is live; the module table is static; SQLite calls destroy once, even when
    // the registration fails.
    unsafe {
        call!(create_module_v2(
            db,
            name.as_ptr(),
            &module.0,
            aux,
            Some(destroy)
        ))
    }
}

/// Registers `module` as `name` on `db` with the connection's state as its client data (the
/// state's owner is the statement cache's module); SQLite's result code.
pub fn register(db: *mut sqlite3, name: &CStr, module: &'static Module, state: Shared) -> c_int {
    // SAFETY: db is live; the module table is static.
    unsafe {
        call!(create_module_v2(
            db,
            name.as_ptr(),
            &module.0,
            state.0 as *mut c_void,
            None
        ))
    }
}

unsafe extern "C" fn x_best_index(_v: *mut sqlite3_vtab, info: *mut sqlite3_index_info) -> c_int {
    (*info).estimatedCost = 1.0;
    SQLITE_OK
}

unsafe extern "C" fn x_open(_v: *mut sqlite3_vtab, pp: *mut *mut sqlite3_vtab_cursor) -> c_int {
    // SAFETY: an all-zero cursor; SQLite fills pVtab.
    *pp = Box::into_raw(Box::new(std::mem::zeroed::<sqlite3_vtab_cursor>()));
    SQLITE_OK
}

unsafe extern "C" fn x_close(c: *mut sqlite3_vtab_cursor) -> c_int {
    drop(Box::from_raw(c));
    SQLITE_OK
}

unsafe extern "C" fn x_filter(
    _c: *mut sqlite3_vtab_cursor,
    _n: c_int,
    _s: *const c_char,
    _argc: c_int,
    _argv: *mut *mut sqlite3_value,
) -> c_int {
    SQLITE_OK
}

unsafe extern "C" fn x_next(_c: *mut sqlite3_vtab_cursor) -> c_int {
    SQLITE_OK
}

unsafe extern "C" fn x_eof(_c: *mut sqlite3_vtab_cursor) -> c_int {
    1
}

unsafe extern "C" fn x_column(
    _c: *mut sqlite3_vtab_cursor,
    _ctx: *mut sqlite3_context,
    _i: c_int,
) -> c_int {
    SQLITE_OK
}

unsafe extern "C" fn x_rowid(_c: *mut sqlite3_vtab_cursor, r: *mut i64) -> c_int {
    *r = 0;
    SQLITE_OK
}
