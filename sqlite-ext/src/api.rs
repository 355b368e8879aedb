//! The SQLite C API as the host hands it to a loadable extension.
//!
//! A loadable extension must not call `sqlite3_*` symbols directly: it calls through the
//! `sqlite3_api_routines` table the host passes to the entry point (what the C macro
//! `SQLITE_EXTENSION_INIT2` does). sqlite-loadable keeps that table privately and exposes only
//! part of it, so the entry point keeps its own copy here for the statement API.

use sqlite_loadable::ext::sqlite3_api_routines;
use std::sync::atomic::{AtomicPtr, Ordering};

static API: AtomicPtr<sqlite3_api_routines> = AtomicPtr::new(std::ptr::null_mut());

/// Records the host's routine table. Called by the entry point before anything else.
pub fn init(api: *mut sqlite3_api_routines) {
    if !api.is_null() {
        API.store(api, Ordering::Release);
    }
}

/// The host's routine table. Only valid after [`init`]; every caller runs after it.
pub fn routines() -> &'static sqlite3_api_routines {
    let p = API.load(Ordering::Acquire);
    assert!(
        !p.is_null(),
        "agentmem0: SQLite API table used before the entry point ran"
    );
    // SAFETY: the host keeps the table alive for the life of the process.
    unsafe { &*p }
}

/// Calls a routine of the table by name, panicking (caught at the FFI edge) if the host's
/// SQLite is too old to have it.
macro_rules! call {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        (crate::api::routines().$name.expect(concat!("SQLite API routine missing: ", stringify!($name))))($($arg),*)
    };
}
pub(crate) use call;
