//! Whether Citus is installed: calls are then routed by resource, and tables here may be the
//! shells of shards on other nodes.

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
