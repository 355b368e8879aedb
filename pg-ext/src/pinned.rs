//! The settings a catalog call's statements run with: the pinned search path (`pg_catalog`,
//! the extension's schema, the private one, and temporary tables last — never the caller's
//! schemas) and, for the functions that ask, generic plans. They are set before the call's
//! first statement and put back when the call returns, as a function's `SET` clause would set
//! them for the whole call; a call whose reads and writes all go without statements (see
//! `direct`, whose tables `relids` finds without the search path) then costs nothing for them:
//! a `SET` clause made every call save, parse and restore both settings.
//!
//! Other functions (triggers, bootstrap) keep their `SET` clause: they are not catalog calls.

use agentmem_core::schema::PRIVATE_SCHEMA;
use pgrx::pg_sys;
use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString};

/// What the running catalog call wants of its statements, and the settings' nesting level
/// once they are set.
#[derive(Clone, Copy)]
struct Call {
    wanted: bool,
    generic_plans: bool,
    level: Option<i32>,
}

const NONE: Call = Call {
    wanted: false,
    generic_plans: false,
    level: None,
};

thread_local! {
    static CALL: Cell<Call> = const { Cell::new(NONE) };
    /// The pinned search path, made for the memo state of `relids` it was read under.
    static PATH: RefCell<Option<(u64, CString)>> = const { RefCell::new(None) };
}

/// Marks a catalog call until the guard drops: its statements run with the pinned settings
/// (`runs_statements`), with generic plans too where `generic_plans`. On drop, settings the
/// call took are put back — when it returns; when an error unwinds, the abort of its
/// transaction or subtransaction puts them back, as it does a `SET` clause's.
pub fn for_call(runs_statements: bool, generic_plans: bool) -> impl Drop {
    struct Restore(Call);
    impl Drop for Restore {
        fn drop(&mut self) {
            let done = CALL.with(|c| c.replace(self.0));
            if let (Some(level), false) = (done.level, std::thread::panicking()) {
                // SAFETY: the level NewGUCNestLevel gave this call; nothing nested is open.
                unsafe { pg_sys::AtEOXact_GUC(true, level) };
            }
        }
    }
    // Never where Citus is installed: its planner routes a statement by its parameters' values,
    // which a generic plan does not have (`mem_distribute` removes them from the `SET` clauses
    // of earlier releases for that reason).
    let generic_plans = generic_plans && !crate::citus::installed();
    Restore(CALL.with(|c| {
        c.replace(Call {
            wanted: runs_statements,
            generic_plans,
            level: None,
        })
    }))
}

/// Sets the running catalog call's settings before its first statement; nothing outside a
/// catalog call, or once they are set.
pub fn before_statement() {
    let call = CALL.with(Cell::get);
    if !call.wanted || call.level.is_some() {
        return;
    }
    let path = search_path();
    // SAFETY: a new nesting level for this call's settings, recorded before they are set (an
    // error in between leaves the abort to undo them).
    unsafe {
        let level = pg_sys::NewGUCNestLevel();
        CALL.with(|c| {
            c.set(Call {
                level: Some(level),
                ..call
            })
        });
        set(c"search_path", &path);
        if call.generic_plans {
            set(c"plan_cache_mode", c"force_generic_plan");
        }
    }
}

/// Sets `name` to `value` for the current nesting level, as a `SET` clause does.
///
/// # Safety
///
/// Inside a nesting level [`before_statement`] opened.
unsafe fn set(name: &CStr, value: &CStr) {
    pg_sys::set_config_option(
        name.as_ptr(),
        value.as_ptr(),
        pg_sys::GucContext::PGC_USERSET,
        pg_sys::GucSource::PGC_S_SESSION,
        pg_sys::GucAction::GUC_ACTION_SAVE,
        true,
        0,
        false,
    );
}

/// The pinned search path: `pg_catalog`, the extension's schema `home` (quoted; left out when
/// there is none), the private schema, and temporary tables last. Also the `SET` clause of
/// the functions that keep one (see `functions`).
pub fn path(home: Option<&str>) -> String {
    let mut schemas = vec!["pg_catalog"];
    schemas.extend(home);
    schemas.extend([PRIVATE_SCHEMA, "pg_temp"]);
    schemas.join(", ")
}

/// [`path`] of the extension's schema, made once per state of `relids`' memo.
fn search_path() -> CString {
    let changes = crate::relids::changes();
    if let Some(path) = PATH.with(|p| {
        p.borrow()
            .as_ref()
            .filter(|(c, _)| *c == changes)
            .map(|(_, path)| path.clone())
    }) {
        return path;
    }
    let home = crate::relids::home();
    // SAFETY: the schema's name, copied before any other catalog call; quote_identifier
    // returns its argument or a palloc'd copy, read at once.
    let home = unsafe {
        let name = pg_sys::get_namespace_name(home);
        (!name.is_null()).then(|| {
            CStr::from_ptr(pg_sys::quote_identifier(name))
                .to_string_lossy()
                .into_owned()
        })
    };
    let path = CString::new(path(home.as_deref())).unwrap_or_default();
    // Under the memo state it was read in: an invalidation during the lookups makes it stale.
    PATH.with(|p| *p.borrow_mut() = Some((changes, path.clone())));
    path
}
