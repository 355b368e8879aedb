//! The relations the core's tables and indexes name, found by name once and remembered until
//! the catalog changes.
//!
//! A read or write without a statement finds its table by the search path and its index in the
//! table's schema: two catalog lookups, each a hash of the name and a probe of the system
//! caches, repeated for every read of every call (a twentieth of a `mem_message_add`). The answer
//! changes only when a relation or a schema is created, dropped or renamed, or when the search
//! path is another; Postgres announces the first through its invalidation callbacks, which
//! empty the memo, and the memo keeps the search path it was filled under.

use pgrx::pg_sys;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{CStr, CString};

/// What the lookups found, under which search path.
#[derive(Default)]
struct Memo {
    path: Vec<u8>,
    schemas: HashMap<String, pg_sys::Oid>,
    tables: HashMap<String, pg_sys::Oid>,
    /// By schema and name: a few dozen, compared without making a key.
    indexes: Vec<(pg_sys::Oid, String, pg_sys::Oid)>,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static CHANGES: Cell<u64> = const { Cell::new(0) };
}

/// How many times the memo was emptied: what is derived from the catalog and kept elsewhere
/// (a schema's owner) is good while this stays the same.
pub fn changes() -> u64 {
    CHANGES.with(Cell::get)
}

/// The table `name` as the search path finds it (`RelnameGetRelid`), `InvalidOid` when there is
/// none (not remembered: it may be created).
pub fn table(name: &str) -> pg_sys::Oid {
    remembered(
        |m| m.tables.get(name).copied(),
        || {
            let c = CString::new(name).ok()?;
            // SAFETY: a NUL-terminated name, looked up in a transaction.
            Some(unsafe { pg_sys::RelnameGetRelid(c.as_ptr()) })
        },
        |m, oid| {
            m.tables.insert(name.to_owned(), oid);
        },
    )
}

/// The schema `name` (`get_namespace_oid`), `InvalidOid` when there is none.
pub fn schema(name: &str) -> pg_sys::Oid {
    remembered(
        |m| m.schemas.get(name).copied(),
        || {
            let c = CString::new(name).ok()?;
            // SAFETY: a NUL-terminated name, looked up in a transaction; missing_ok.
            Some(unsafe { pg_sys::get_namespace_oid(c.as_ptr(), true) })
        },
        |m, oid| {
            m.schemas.insert(name.to_owned(), oid);
        },
    )
}

/// The relation `name` in schema `namespace` (`get_relname_relid`), `InvalidOid` when there is
/// none.
pub fn in_schema(name: &str, namespace: pg_sys::Oid) -> pg_sys::Oid {
    remembered(
        |m| {
            m.indexes
                .iter()
                .find(|(ns, n, _)| *ns == namespace && n == name)
                .map(|&(_, _, oid)| oid)
        },
        || {
            let c = CString::new(name).ok()?;
            // SAFETY: a NUL-terminated name, looked up in a transaction.
            Some(unsafe { pg_sys::get_relname_relid(c.as_ptr(), namespace) })
        },
        |m, oid| {
            m.indexes.push((namespace, name.to_owned(), oid));
        },
    )
}

/// `known`'s answer from the memo when it was filled under the current search path, else
/// `look`'s, kept by `keep` when it names a relation.
fn remembered(
    known: impl FnOnce(&Memo) -> Option<pg_sys::Oid>,
    look: impl FnOnce() -> Option<pg_sys::Oid>,
    keep: impl FnOnce(&mut Memo, pg_sys::Oid),
) -> pg_sys::Oid {
    watch();
    // SAFETY: the search path GUC's string, NUL-terminated, read before any other call.
    let path = unsafe {
        let p = pg_sys::namespace_search_path;
        if p.is_null() {
            &[][..]
        } else {
            CStr::from_ptr(p).to_bytes()
        }
    };
    let hit = MEMO.with(|m| {
        let m = m.borrow();
        if m.path == path {
            known(&m)
        } else {
            None
        }
    });
    if let Some(oid) = hit {
        return oid;
    }
    let path = path.to_vec();
    // Never borrowed across the lookup: it may run the invalidation callback.
    let Some(oid) = look() else {
        return pg_sys::InvalidOid;
    };
    // A path that names the current user's schema answers each user alike only by chance (the
    // core's statements switch to the owner for derived data); the pinned path never does.
    if oid != pg_sys::InvalidOid && !path.windows(5).any(|w| w == b"$user") {
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.path != path {
                *m = Memo {
                    path,
                    ..Memo::default()
                };
            }
            keep(&mut m, oid);
        });
    }
    oid
}

/// Makes sure [`forget`] hears of every change to a relation's or a schema's catalog row.
fn watch() {
    if !WATCHING.with(|w| w.replace(true)) {
        // SAFETY: registers callbacks with a static lifetime, once per backend.
        unsafe {
            for cache in [
                pg_sys::SysCacheIdentifier::RELNAMENSP,
                pg_sys::SysCacheIdentifier::NAMESPACEOID,
            ] {
                pg_sys::CacheRegisterSyscacheCallback(
                    cache as i32,
                    Some(forget),
                    pg_sys::Datum::from(0usize),
                );
            }
        }
    }
}

/// Empties the memo: a relation or a schema was created, dropped, renamed or moved (or given
/// another owner; see [`changes`]).
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn forget(_arg: pg_sys::Datum, _cache: i32, _hash: u32) {
    // Never borrowed across a call into Postgres, so free whenever an invalidation arrives.
    MEMO.with(|m| *m.borrow_mut() = Memo::default());
    CHANGES.with(|c| c.set(c.get() + 1));
}
