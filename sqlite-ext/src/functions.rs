//! The scalar SQL functions: every scalar entry of the core's catalog, registered as it says.

use crate::api::call;
use crate::conn::transient;
use crate::state::Shared;
use crate::{args, conn::SqliteConn};
use agentmem_core::api::{self, Function, Nature, Returns};
use agentmem_core::{db::seen, error::catch_panic, schema::types, triggers, Error, Result, Value};
use sqlite_loadable::{
    api as sqlite_api, ext::sqlite3, ext::sqlite3_context, ext::sqlite3ext_context_db_handle,
    FunctionFlags,
};
use std::ffi::{c_char, c_int, c_void, CString};

/// Hands a value to SQLite as the call's result.
pub fn set_result(ctx: *mut sqlite3_context, v: &Value) -> sqlite_loadable::Result<()> {
    match v {
        Value::Null => sqlite_api::result_null(ctx),
        Value::Int(i) => sqlite_api::result_int64(ctx, *i),
        Value::Real(f) => sqlite_api::result_double(ctx, *f),
        Value::Text(s) => result_text(ctx, s)?,
        Value::Blob(b) => sqlite_api::result_blob(ctx, b),
        Value::Json(j) => result_text(ctx, &j.to_text())?,
    }
    Ok(())
}

/// Hands text to SQLite as the call's result, ending in a NUL that SQLite knows of. Text given
/// by its length alone is copied again, to put a NUL after it, when a driver reads it as C
/// text (`sqlite3_column_text`, what Python's and Node's drivers call); text SQLite measured
/// itself is taken as it is. Text holding a NUL goes by its length and is copied: SQLite's
/// measure would stop at the first NUL.
fn result_text(ctx: *mut sqlite3_context, s: &str) -> sqlite_loadable::Result<()> {
    let n = c_int::try_from(s.len()).map_err(|_| {
        sqlite_loadable::Error::new_message(format!(
            "result is {} bytes of text; SQLite's limit is 2 GiB",
            s.len()
        ))
    })?;
    if s.contains('\0') {
        // SAFETY: SQLite copies the text before this returns (SQLITE_TRANSIENT).
        unsafe {
            call!(result_text(
                ctx,
                s.as_ptr().cast::<c_char>(),
                n,
                transient()
            ))
        };
        return Ok(());
    }
    let mut bytes = Vec::with_capacity(s.len() + 1);
    bytes.extend_from_slice(s.as_bytes());
    // SAFETY: the text holds no NUL; the result owns the string until SQLite drops it through
    // `drop_c_string`, which measures it as SQLite did.
    unsafe {
        let text = CString::from_vec_unchecked(bytes).into_raw();
        call!(result_text(ctx, text, -1, Some(drop_c_string)));
    }
    Ok(())
}

/// Frees a result's text made in [`result_text`].
unsafe extern "C" fn drop_c_string(p: *mut c_void) {
    // SAFETY: `p` came from `CString::into_raw` and holds no NUL before its end.
    drop(unsafe { CString::from_raw(p.cast::<c_char>()) });
}

/// Turns a core error into the SQLite error message (NULs removed: C strings end at them).
pub fn sql_error(e: &Error) -> sqlite_loadable::Error {
    sqlite_loadable::Error::new_message(e.to_string().replace('\0', ""))
}

/// Registers every scalar function on `db`, with the connection's `state`: the public ones,
/// the functions of the row triggers (`core::triggers`), `mem__internal()`,
/// `mem__adding_booked` and `mem__seen`.
pub fn register(db: *mut sqlite3, state: Shared) -> sqlite_loadable::Result<()> {
    for f in api::functions() {
        let Returns::Scalar(_, run) = f.returns else {
            continue;
        };
        let mut flags = FunctionFlags::UTF8;
        if f.nature == Nature::Pure {
            flags |= FunctionFlags::DETERMINISTIC | FunctionFlags::INNOCUOUS;
        }
        sqlite_loadable::define_scalar_function_with_aux(
            db,
            f.name,
            -1,
            move |ctx, values, state: &Shared| {
                let call = f.bind(args::values(values)).map_err(|e| sql_error(&e))?;
                let result = enter(ctx, *state, |c| run_as(f, c, |c| run(c, &call)));
                match result {
                    Ok(v) => set_result(ctx, &v),
                    Err(e) => Err(sql_error(&e)),
                }
            },
            flags,
            state,
        )?;
    }
    for name in triggers::sqlite_functions() {
        sqlite_loadable::define_scalar_function_with_aux(
            db,
            name,
            -1,
            move |ctx, values, state: &Shared| {
                let args = args::values(values);
                // Trigger functions run inside the writing statement, whose failure undoes
                // them: no transaction of their own.
                let result = enter(ctx, *state, |c| triggers::fire_sqlite(c, name, args, false));
                match result {
                    Ok(v) => set_result(ctx, &v),
                    Err(e) => Err(sql_error(&e)),
                }
            },
            FunctionFlags::UTF8,
            state,
        )?;
    }
    sqlite_loadable::define_scalar_function_with_aux(
        db,
        "mem__internal",
        0,
        |ctx, _, state: &Shared| {
            // SAFETY: the connection of this call is open; the depth is read and let go.
            let depth = unsafe { state.get() }.depth;
            sqlite_api::result_int64(ctx, i64::from(depth > 0));
            Ok(())
        },
        FunctionFlags::UTF8,
        state,
    )?;
    // Whether mem_message_add is inserting a row it booked (core `triggers::adding_booked`):
    // read from the session, no statement runs.
    sqlite_loadable::define_scalar_function_with_aux(
        db,
        triggers::ADDING_BOOKED,
        1,
        |ctx, values, state: &Shared| {
            let booked = values.first().is_some_and(|v| {
                // SAFETY: the connection of this call is open; the session is read and let go.
                let session = &mut unsafe { state.get() }.session;
                args::with_text(*v, |id| {
                    std::str::from_utf8(id).is_ok_and(|id| triggers::adding_booked(session, id))
                })
                .unwrap_or(false)
            });
            sqlite_api::result_int64(ctx, i64::from(booked));
            Ok(())
        },
        FunctionFlags::UTF8,
        state,
    )?;
    // An update's own row, handed over by its `SET` list (core `db::seen`). Direct-only: a
    // trigger or view that called it could leave values for the next update to take.
    sqlite_loadable::define_scalar_function_with_aux(
        db,
        seen::FUNCTION,
        -1,
        |ctx, values, state: &Shared| {
            let args = args::values(values);
            match enter(ctx, *state, |c| Ok(seen::see(c, args))) {
                Ok(v) => set_result(ctx, &v),
                Err(e) => Err(sql_error(&e)),
            }
        },
        FunctionFlags::UTF8 | FunctionFlags::DIRECTONLY,
        state,
    )?;
    // The type checks' test for text that may hold U+0000: pure, and called for every text a
    // row stores, so it reads the value in place and enters nothing.
    sqlite_loadable::define_scalar_function(
        db,
        triggers::MAY_HOLD_NUL,
        -1,
        |ctx, values| {
            let json = values
                .get(1)
                .is_some_and(|v| sqlite_api::value_int64(v) != 0);
            let found = values
                .first()
                .and_then(|v| args::with_text(*v, |b| triggers::may_hold_nul(b, json)));
            match found {
                Some(found) => sqlite_api::result_int64(ctx, i64::from(found)),
                None => sqlite_api::result_null(ctx),
            }
            Ok(())
        },
        FunctionFlags::UTF8 | FunctionFlags::DETERMINISTIC | FunctionFlags::INNOCUOUS,
    )?;
    // The type checks of a row, called by every insert and update of a table: pure, reading
    // the values in place. A value of the wrong type fails as `RAISE(ABORT, …)` would, with
    // SQLite's code for a trigger's constraint.
    for (name, changes) in [(types::CHECK_TYPES, false), (types::CHECK_CHANGES, true)] {
        sqlite_loadable::define_scalar_function(
            db,
            name,
            -1,
            move |ctx, values| {
                match args::checked(values, |a| catch_panic(|| types::check(a, changes))) {
                    Ok(()) => sqlite_api::result_null(ctx),
                    Err(e) => {
                        sqlite_api::result_error(ctx, &e.to_string().replace('\0', ""))?;
                        if matches!(e, Error::Refused(_)) {
                            sqlite_api::result_error_code(ctx, SQLITE_CONSTRAINT_TRIGGER);
                        }
                    }
                }
                Ok(())
            },
            FunctionFlags::UTF8 | FunctionFlags::DETERMINISTIC | FunctionFlags::INNOCUOUS,
        )?;
    }
    Ok(())
}

/// `SQLITE_CONSTRAINT_TRIGGER`: the extended code of a trigger's `RAISE(ABORT, …)`.
const SQLITE_CONSTRAINT_TRIGGER: i32 = 19 | 7 << 8;

/// Runs a call on the calling connection, with panics caught and the connection marked as
/// inside agentmem for `mem__internal()`.
fn enter(
    ctx: *mut sqlite3_context,
    state: Shared,
    run: impl FnOnce(&mut SqliteConn) -> Result<Value>,
) -> Result<Value> {
    // SAFETY: ctx is the live context of this call.
    enter_db(unsafe { sqlite3ext_context_db_handle(ctx) }, state, run)
}

/// [`enter`], given the connection. While a call runs, the connection's depth inside
/// agentmem is above zero: the schema's guards on derived columns (`@derived` in
/// core::schema) let writes through only then, so the counters and the blocked state are
/// written by agentmem alone.
pub fn enter_db<T>(
    db: *mut sqlite3,
    state: Shared,
    run: impl FnOnce(&mut SqliteConn) -> Result<T>,
) -> Result<T> {
    let mut conn = SqliteConn::new(db, state);
    conn.state().depth += 1;
    let result = catch_panic(|| run(&mut conn));
    conn.state().depth -= 1;
    result
}

/// Runs a call as its nature asks: a writer all-or-nothing, anything else as it is.
pub fn run_as<T>(
    f: &Function,
    conn: &mut SqliteConn,
    run: impl FnOnce(&mut SqliteConn) -> Result<T>,
) -> Result<T> {
    match f.nature {
        Nature::Writer => atomic(conn, run),
        Nature::Pure | Nature::Volatile | Nature::Reader => run(conn),
    }
}

/// Runs a writing call as one unit.
///
/// Called as `SELECT f(…)` outside a transaction, the statements the core runs would each
/// commit on their own, and a failure (or a SIGKILL) half-way would leave half a change. So
/// the call runs in `BEGIN IMMEDIATE … COMMIT`: all or nothing, and the write lock is taken
/// first, through the busy handler, because a read transaction that later wants to write
/// fails at once with SQLITE_BUSY when another connection wrote meanwhile (WAL snapshots).
/// Inside the caller's transaction the call nests as a savepoint; inside a writing statement
/// (`INSERT … SELECT f()`) it is already part of that statement's all-or-nothing.
fn atomic<T>(conn: &mut SqliteConn, run: impl FnOnce(&mut SqliteConn) -> Result<T>) -> Result<T> {
    use agentmem_core::Conn;
    if conn.in_writing_statement() {
        return run(conn);
    }
    let (begin, commit, rollback) = if conn.in_transaction() {
        (
            "SAVEPOINT agentmem_call",
            "RELEASE agentmem_call",
            "ROLLBACK TO agentmem_call; RELEASE agentmem_call",
        )
    } else {
        ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
    };
    conn.execute(begin, &[])?;
    // After `sqlite3_interrupt` SQLite refuses to prepare any statement until the host's
    // statement ends, ROLLBACK included, and an interrupted read-only statement (ROLLBACK is
    // one) rolls nothing back. An interrupted *writing* statement rolls the whole transaction
    // back, so a harmless one, prepared now, is the way out when the rollback fails.
    let guard = match conn.prepare_kept(agentmem_core::schema::VERSION_TABLE) {
        Ok(g) => g,
        Err(e) => {
            conn.execute_batch(rollback).ok();
            return Err(e);
        }
    };
    let result = run(conn).and_then(|v| conn.execute(commit, &[]).map(|_| v));
    if result.is_err() && conn.execute_batch(rollback).is_err() {
        guard.step_once();
    }
    result
}
