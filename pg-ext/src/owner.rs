//! Statements on derived data run with the extension owner's rights.
//!
//! Derived data lives in the private schema ([`PRIVATE_SCHEMA`]), which no application role
//! may use. The core's rule ([`agentmem_core::db::privilege`]) says which statements touch
//! it and nothing else; those run as the schema's owner — the role that created the
//! extension — the way Postgres runs a `SECURITY DEFINER` function: the current user is
//! switched for the statement and switched back after it, on an error too. Every other
//! statement runs as the caller, so the caller's privileges and row-level security apply.

use agentmem_core::schema::PRIVATE_SCHEMA;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::Cell;

thread_local! {
    /// The private schema's oid and its owner, as last looked up, and the count of catalog
    /// changes then (a dropped and re-created extension has a new schema oid; a change of
    /// owner is a change to the schema's row).
    static OWNER: Cell<Option<(u64, pg_sys::Oid, pg_sys::Oid)>> = const { Cell::new(None) };
}

/// The owner of the private schema; `None` while it does not exist (an install script
/// before it creates it, or a database not yet updated to a version that has it).
fn owner() -> Option<pg_sys::Oid> {
    let schema = crate::relids::schema(PRIVATE_SCHEMA);
    if schema == pg_sys::InvalidOid {
        return None;
    }
    let changes = crate::relids::changes();
    if let Some((c, s, o)) = OWNER.with(Cell::get) {
        if (c, s) == (changes, schema) {
            return Some(o);
        }
    }
    // Every name qualified, the operator too: a call's settings may not be set yet.
    let owner = Spi::get_one_with_args::<pg_sys::Oid>(
        "SELECT nspowner FROM pg_catalog.pg_namespace WHERE oid OPERATOR(pg_catalog.=) $1",
        &[schema.into()],
    )
    .ok()
    .flatten()?;
    OWNER.with(|c| c.set(Some((changes, schema, owner))));
    Some(owner)
}

/// Puts the previous user back when dropped: after the statement, or while an error unwinds.
struct Restore(pg_sys::Oid, i32);

impl Drop for Restore {
    fn drop(&mut self) {
        // SAFETY: restores the values GetUserIdAndSecContext returned.
        unsafe { pg_sys::SetUserIdAndSecContext(self.0, self.1) };
    }
}

/// Runs `f` as the owner of the private schema.
pub fn as_owner<T>(f: impl FnOnce() -> T) -> T {
    let Some(owner) = owner() else {
        return f();
    };
    let (mut user, mut context) = (pg_sys::InvalidOid, 0);
    // SAFETY: out-parameters of the right types.
    unsafe { pg_sys::GetUserIdAndSecContext(&mut user, &mut context) };
    if user == owner {
        return f();
    }
    let _restore = Restore(user, context);
    // SAFETY: the owner is a live role (it owns the schema); the flag marks the change as
    // local, as SECURITY DEFINER does, so SET ROLE and friends refuse to run under it.
    unsafe {
        pg_sys::SetUserIdAndSecContext(owner, context | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32)
    };
    f()
}
