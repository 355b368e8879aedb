//! The resource of the call this backend runs for another node (see
//! `agentmem_core::db::home`), set around the call and put back however it ends.

use crate::conn::SpiConn;
use agentmem_core::db::home;
use pgrx::PgTryBuilder;

/// Runs `f` as a call handed over for `resource` (`agentmem_core::db::home`),
/// the previous resource put back whether `f` returns or raises an error.
pub fn at_home<T>(resource: &str, f: impl FnOnce() -> T) -> T {
    let before = home::swap_home(&mut SpiConn, Some(resource.to_owned()));
    let mut before = Some(before);
    PgTryBuilder::new(std::panic::AssertUnwindSafe(f))
        .finally(|| {
            if let Some(b) = before.take() {
                home::swap_home(&mut SpiConn, b);
            }
        })
        .execute()
}
