//! `mem__message_inserted`: the table the insert trigger of `mem_messages` writes each new
//! row's `seq` to, so that the message's bookkeeping runs inside the writing transaction's
//! hooks.
//!
//! SQLite tells a function nothing about the transaction it runs in, but it tells a virtual
//! table that is written to: `xSync` before the transaction commits, `xRollback`, and each
//! savepoint's begin, release and rollback (statement-level ones included). That is how FTS5
//! keeps its pending terms in memory until commit, and how this table lets the core hold a
//! transaction's new search documents in memory ([`agentmem_core::transaction`]): an insert
//! here completes the row (as the insert trigger's function did) with the document held, and
//! `xSync` writes what the transaction holds into the index before it commits. A held
//! document therefore never outlives its transaction in memory: a rollback of the
//! transaction, or of a savepoint or statement it came from, forgets it.
//!
//! The table is eponymous (it exists on every connection that loaded the extension) and has
//! two columns, the message's `seq` and `id` (the row `mem_message_add` prepared is known by
//! its id, and not read back); reading it returns no rows.

use crate::api::call;
use crate::conn::SqliteConn;
use crate::eponymous::{self, Module, Tab};
use crate::functions::enter_db;
use crate::state::Shared;
use agentmem_core::transaction;
use agentmem_core::{triggers, Conn, Error, Result, Value};

/// The trigger function whose work an insert here does, documents held.
const INSERT_TRIGGER: &str = "mem__message_insert";
use sqlite_loadable::ext::{sqlite3, sqlite3_value, sqlite3_vtab};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

const SQLITE_OK: c_int = 0;
const SQLITE_ERROR: c_int = 1;
const SQLITE_NULL: c_int = 5;

/// Runs `f` on the table's connection with panics caught; an error becomes the table's error
/// message and SQLITE_ERROR.
unsafe fn guarded(vtab: *mut sqlite3_vtab, f: impl FnOnce(&mut SqliteConn) -> Result<()>) -> c_int {
    let tab = vtab as *mut Tab;
    let (db, state) = ((*tab).db, (*tab).state);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| enter_db(db, state, f)))
        .unwrap_or_else(|_| Err(Error::internal("panic in mem__message_inserted")));
    match outcome {
        Ok(()) => SQLITE_OK,
        Err(e) => {
            let msg = std::ffi::CString::new(e.to_string().replace('\0', "")).unwrap_or_default();
            if !(*tab).base.zErrMsg.is_null() {
                call!(free((*tab).base.zErrMsg as *mut c_void));
            }
            (*tab).base.zErrMsg = call!(mprintf(c"%s".as_ptr(), msg.as_ptr()));
            SQLITE_ERROR
        }
    }
}

/// What the connection still holds goes with the connection's state, when it closes.
unsafe extern "C" fn x_disconnect(vtab: *mut sqlite3_vtab) -> c_int {
    let tab = Box::from_raw(vtab as *mut Tab);
    if !tab.base.zErrMsg.is_null() {
        call!(free(tab.base.zErrMsg as *mut c_void));
    }
    SQLITE_OK
}

/// An insert of `(seq, id)`: completes and books that message row, its search document held.
/// A trigger older than the id column writes the seq alone (id NULL).
unsafe extern "C" fn x_update(
    vtab: *mut sqlite3_vtab,
    argc: c_int,
    argv: *mut *mut sqlite3_value,
    rowid: *mut i64,
) -> c_int {
    guarded(vtab, |c| {
        let args = std::slice::from_raw_parts(argv, argc.max(0) as usize);
        // An insert: argv[0] is NULL, argv[1] the new rowid (NULL), then seq and id.
        let is_insert = argc == 4 && call!(value_type(args[0])) == SQLITE_NULL;
        let mut new = crate::args::values(args.get(2..).unwrap_or_default()).into_iter();
        let (true, Some(Value::Int(seq))) = (is_insert, new.next()) else {
            return Err(Error::invalid(
                "mem__message_inserted",
                "takes inserts of a message seq and id only (the insert trigger of mem_messages writes them)",
            ));
        };
        let id = match new.next() {
            Some(id @ Value::Text(_)) => id,
            _ => Value::Null,
        };
        *rowid = seq;
        triggers::fire_sqlite(c, INSERT_TRIGGER, vec![Value::Int(seq), id], true).map(|_| ())
    })
}

unsafe extern "C" fn x_sync(vtab: *mut sqlite3_vtab) -> c_int {
    guarded(vtab, |c| transaction::before_commit(c))
}

/// A transaction begins: what the connection held of an earlier one that ended without this
/// table (its documents, the keys it stored) goes.
unsafe extern "C" fn x_begin(vtab: *mut sqlite3_vtab) -> c_int {
    guarded(vtab, |c| {
        transaction::begin(c);
        Ok(())
    })
}

/// Held documents were written by xSync; what a failed sync did not take goes, with the rest
/// of what the session kept for the transaction.
unsafe extern "C" fn x_commit(vtab: *mut sqlite3_vtab) -> c_int {
    guarded(vtab, |c| {
        c.session().commit();
        Ok(())
    })
}

unsafe extern "C" fn x_rollback(vtab: *mut sqlite3_vtab) -> c_int {
    guarded(vtab, |c| {
        c.session().rollback();
        Ok(())
    })
}

/// A savepoint begins (every statement of a transaction that can fail half-way begins one).
unsafe extern "C" fn x_savepoint(vtab: *mut sqlite3_vtab, i: c_int) -> c_int {
    guarded(vtab, |c| transaction::savepoint(c, i as u64))
}

unsafe extern "C" fn x_release(vtab: *mut sqlite3_vtab, i: c_int) -> c_int {
    guarded(vtab, |c| {
        c.session().release(i as u64);
        Ok(())
    })
}

unsafe extern "C" fn x_rollback_to(vtab: *mut sqlite3_vtab, i: c_int) -> c_int {
    guarded(vtab, |c| {
        c.session().rollback_to(i as u64);
        Ok(())
    })
}

fn module() -> &'static Module {
    static MODULE: OnceLock<Module> = OnceLock::new();
    MODULE.get_or_init(|| {
        let mut m = eponymous::module(
            2,
            eponymous::connect!(c"CREATE TABLE x(seq INTEGER, id TEXT)"),
            x_disconnect,
        );
        m.xUpdate = Some(x_update);
        m.xBegin = Some(x_begin);
        m.xSync = Some(x_sync);
        m.xCommit = Some(x_commit);
        m.xRollback = Some(x_rollback);
        m.xSavepoint = Some(x_savepoint);
        m.xRelease = Some(x_release);
        m.xRollbackTo = Some(x_rollback_to);
        Module(m)
    })
}

/// Registers the table on `db`, with the connection's `state`.
pub fn register(db: *mut sqlite3, state: Shared) -> sqlite_loadable::Result<()> {
    if eponymous::register(db, c"mem__message_inserted", module(), state) != SQLITE_OK {
        return Err(sqlite_loadable::Error::new_message(
            "agentmem0: cannot register mem__message_inserted",
        ));
    }
    Ok(())
}
