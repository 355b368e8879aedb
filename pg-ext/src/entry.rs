//! One C entry point for many SQL functions: Postgres binds each SQL function of a catalog to
//! the same symbol, and the entry point finds the called one's declaration by the function's
//! name, once per call site.

use crate::error::ok;
use agentmem_core::Error;
use pgrx::pg_sys;

/// Exports `$name` as a version-1 C function that runs `$body(fcinfo)`, errors and panics
/// turned into Postgres errors.
macro_rules! entry_point {
    ($(#[$doc:meta])* $name:ident, $finfo:ident, $body:path) => {
        /// Tells Postgres that the entry point uses the version-1 calling convention.
        #[no_mangle]
        #[doc(hidden)]
        pub extern "C" fn $finfo() -> &'static pgrx::pg_sys::Pg_finfo_record {
            const V1: pgrx::pg_sys::Pg_finfo_record =
                pgrx::pg_sys::Pg_finfo_record { api_version: 1 };
            &V1
        }

        $(#[$doc])*
        ///
        /// # Safety
        /// Called by Postgres's function manager with a valid `fcinfo`.
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $name(
            fcinfo: pgrx::pg_sys::FunctionCallInfo,
        ) -> pgrx::pg_sys::Datum {
            // SAFETY: the guard turns a panic or a Rust-side error into an ereport; fcinfo is
            // valid.
            unsafe { pgrx::pg_sys::submodules::panic::pgrx_extern_c_guard(|| $body(fcinfo)) }
        }
    };
}
pub(crate) use entry_point;

/// The declaration of the called SQL function in `catalog` (which `find` searches by name),
/// looked up on the first call and kept in `fn_extra` for the next ones.
///
/// # Safety
/// `fcinfo` is valid for the call, and only this function stores into its `fn_extra`, only
/// `&'static T` of one `T` per entry point.
pub unsafe fn declaration<T: 'static>(
    fcinfo: pg_sys::FunctionCallInfo,
    catalog: &str,
    find: impl Fn(&str) -> Option<&'static T>,
) -> &'static T {
    // SAFETY (whole function): as the caller promises.
    let flinfo = unsafe { &mut *(*fcinfo).flinfo };
    if !flinfo.fn_extra.is_null() {
        return unsafe { &*(flinfo.fn_extra as *const T) };
    }
    let name = unsafe { pg_sys::get_func_name(flinfo.fn_oid) };
    let found = (!name.is_null())
        .then(|| unsafe { std::ffi::CStr::from_ptr(name) }.to_str().ok())
        .flatten()
        .and_then(find);
    let found = ok(found.ok_or_else(|| {
        Error::internal(format!(
            "function {} is bound to agentmem's entry point but is not in its {catalog}",
            flinfo.fn_oid.to_u32()
        ))
    }));
    flinfo.fn_extra = found as *const T as *mut std::ffi::c_void;
    found
}
