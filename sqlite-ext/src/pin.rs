//! Keeps the extension mapped for the life of the process.
//!
//! SQLite `dlclose`s an extension when the connection that loaded it closes. Rust's standard
//! library registers thread-local destructors that live in this library (the panic count,
//! for one); if a thread outlives the unload, its exit jumps into unmapped memory. Taking a
//! second, never-released reference with `RTLD_NODELETE` makes the unload a no-op, as Rust
//! cdylibs loaded by C hosts must.

use std::sync::Once;

static PIN: Once = Once::new();

pub fn pin_self() {
    PIN.call_once(|| {
        // SAFETY: dladdr reads the address of one of our own functions; dlopen with
        // RTLD_NOLOAD only takes a reference on the already loaded file.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr(pin_self as *const libc::c_void, &mut info) != 0
                && !info.dli_fname.is_null()
            {
                libc::dlopen(
                    info.dli_fname,
                    libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
                );
            }
        }
    });
}

/// Panics are caught at every entry point and reported as SQL errors; the default hook would
/// also print them on the host's stderr. This library has its own copy of std, so the hook set
/// here does not touch the host's.
pub fn quiet_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}
