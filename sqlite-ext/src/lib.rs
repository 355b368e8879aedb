//! agentmem as a SQLite loadable extension: `.load ./agentmem0` then `SELECT mem_init();`.
//!
//! This crate only translates: SQL values to core arguments and back, and the core's [`Conn`]
//! onto the calling connection. Every rule lives in `agentmem-core`.
//!
//! [`Conn`]: agentmem_core::Conn

mod api;
mod args;
mod conn;
mod eponymous;
mod functions;
mod inserted;
mod pin;
mod state;
mod table;

use sqlite_loadable::ext::{sqlite3, sqlite3_api_routines};
use std::os::raw::{c_char, c_int};

/// Rust memory comes from mimalloc, not the host's `malloc`: a call's many short-lived values
/// cost a fraction there (docs/design.md, "Allocation").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SQLITE_OK: c_int = 0;
const SQLITE_ERROR: c_int = 1;

/// The entry point SQLite derives from the file name `agentmem0.so`.
///
/// # Safety
/// Called by SQLite's extension loader with a live connection and its API table.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_agentmem_init(
    db: *mut sqlite3,
    pz_err_msg: *mut *mut c_char,
    p_api: *mut sqlite3_api_routines,
) -> c_int {
    pin::pin_self();
    pin::quiet_panics();
    sqlite3_agentmem_linked_init(db, pz_err_msg, p_api)
}

/// The entry point for a program that links agentmem in instead of loading it: hand it to
/// `sqlite3_auto_extension`, and every connection the program opens gets the functions.
/// Unlike [`sqlite3_agentmem_init`] it leaves the program's panic hook alone (a loaded
/// library has its own copy of std; a linked one shares the program's).
///
/// # Safety
/// Called by SQLite with a live connection and its API table.
pub unsafe extern "C" fn sqlite3_agentmem_linked_init(
    db: *mut sqlite3,
    pz_err_msg: *mut *mut c_char,
    p_api: *mut sqlite3_api_routines,
) -> c_int {
    sqlite_loadable::ext::faux_sqlite_extension_init2(p_api);
    api::init(p_api);
    // The connection's state, owned (and freed when the connection closes) by the
    // statement cache's module, registered first.
    let state = state::Shared::new();
    if conn::register_state(db, state) != SQLITE_OK {
        report(pz_err_msg, "agentmem0: cannot register mem__stmt_cache");
        return SQLITE_ERROR;
    }
    let registered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        functions::register(db, state)
            .and_then(|_| table::register(db, state))
            .and_then(|_| inserted::register(db, state))
    }));
    match registered {
        Ok(Ok(())) => SQLITE_OK,
        Ok(Err(e)) => {
            report(pz_err_msg, &e.result_error_message());
            SQLITE_ERROR
        }
        Err(_) => {
            report(pz_err_msg, "agentmem0: panic while registering functions");
            SQLITE_ERROR
        }
    }
}

/// Hands an error message to the loader (which frees it with sqlite3_free).
unsafe fn report(pz_err_msg: *mut *mut c_char, msg: &str) {
    let Ok(msg) = std::ffi::CString::new(msg.replace('\0', "")) else {
        return;
    };
    if !pz_err_msg.is_null() {
        // "%s" so that the message is never read as a format string.
        *pz_err_msg = api::call!(mprintf(c"%s".as_ptr(), msg.as_ptr()));
    }
}
