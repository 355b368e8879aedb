//! Whether Citus is installed: calls are then routed by resource, tables here may be the
//! shells of shards on other nodes, and a call that writes commits in two phases.

use pgrx::prelude::*;

/// Whether Citus is installed in this database. Citus runs only from
/// `shared_preload_libraries`, which a backend reads once: a server without it pays nothing
/// per call, one with it a catalog lookup.
pub fn installed() -> bool {
    thread_local! {
        static PRELOADED: bool = {
            // SAFETY: reads a GUC's value (not missing_ok: the setting always exists); the
            // string is copied before any other GUC call.
            let libs = unsafe {
                std::ffi::CStr::from_ptr(pg_sys::GetConfigOption(
                    c"shared_preload_libraries".as_ptr(),
                    false,
                    false,
                ))
            };
            libs.to_string_lossy().contains("citus")
        };
    }
    if !PRELOADED.with(|p| *p) {
        return false;
    }
    // SAFETY: a catalog lookup by name inside a transaction; missing_ok.
    let oid = unsafe { pg_sys::get_extension_oid(c"citus".as_ptr(), true) };
    oid != pg_sys::InvalidOid
}

/// Makes Citus commit this transaction's remote writes in two phases, even when they went to
/// one node only (where it would send a plain `COMMIT`).
///
/// A one-phase commit on a worker whose answer is lost (the worker stopping, the connection
/// breaking) fails the caller's statement although the worker may have committed: a call
/// would then say it failed and its write be there. With a prepared transaction the
/// coordinator's own commit decides, and `recover_prepared_transactions()` finishes or rolls
/// back what a worker holds prepared accordingly. Citus has no setting for it; its
/// `Use2PCForCoordinatedTransaction()` (exported, the flag its executor sets for multi-node
/// writes) is looked up once per backend; a Citus without it fails the call, naming it.
pub fn commit_in_two_phases() {
    thread_local! {
        static USE_2PC: unsafe extern "C" fn() = {
            // SAFETY: Citus is loaded (shared_preload_libraries, checked by `installed`), so
            // the library is found among the loaded ones; signalNotFound raises an error
            // naming the symbol if this Citus lacks it. The symbol is `void (void)`.
            unsafe {
                let f = pg_sys::load_external_function(
                    c"$libdir/citus".as_ptr(),
                    c"Use2PCForCoordinatedTransaction".as_ptr(),
                    true,
                    std::ptr::null_mut(),
                );
                std::mem::transmute::<*mut std::ffi::c_void, unsafe extern "C" fn()>(f)
            }
        };
    }
    // SAFETY: sets a flag of Citus's transaction state, cleared when the transaction ends.
    USE_2PC.with(|f| unsafe { f() });
}
