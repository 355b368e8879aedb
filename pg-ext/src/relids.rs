//! The relations the core's tables and indexes name, found by name once and remembered until
//! the catalog changes.
//!
//! A read or write without a statement finds its table where the pinned search path of the
//! core's statements finds it — in the extension's schema, else in the private one — and its
//! index in the table's schema, whatever the caller's search path: catalog lookups, each a hash
//! of the name and a probe of the system caches, repeated for every read of every call (a
//! twentieth of a `mem_message_add`). The answers change only when a relation or a schema is
//! created, dropped, renamed or moved; Postgres announces that through its invalidation
//! callbacks, which empty the memo.

use agentmem_core::schema::PRIVATE_SCHEMA;
use pgrx::pg_sys;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::CString;

/// What the lookups found.
#[derive(Default)]
struct Memo {
    /// The extension's schema, once read.
    home: Option<pg_sys::Oid>,
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

/// The core's table `name`: in the extension's schema, else in the private one (the pinned
/// search path's order; the caller's search path plays no part); `InvalidOid` when there is
/// none (not remembered: it may be created).
pub fn table(name: &str) -> pg_sys::Oid {
    remembered(
        |m| m.tables.get(name).copied(),
        || {
            let home = home();
            let private = schema(PRIVATE_SCHEMA);
            let found = [home, private]
                .into_iter()
                .filter(|&ns| ns != pg_sys::InvalidOid)
                .map(|ns| in_schema(name, ns))
                .find(|&oid| oid != pg_sys::InvalidOid);
            Some(found.unwrap_or(pg_sys::InvalidOid))
        },
        |m, oid| {
            m.tables.insert(name.to_owned(), oid);
        },
    )
}

/// The schema the extension is installed in (`pg_extension.extnamespace`, read by the
/// extension's name), `InvalidOid` when it is not installed.
pub fn home() -> pg_sys::Oid {
    remembered(
        |m| m.home,
        // SAFETY: a catalog scan by the unique name index, in a transaction.
        || Some(unsafe { extension_schema() }),
        |m, oid| m.home = Some(oid),
    )
}

/// [`home`] read from the catalog.
///
/// # Safety
///
/// In a transaction.
unsafe fn extension_schema() -> pg_sys::Oid {
    let rel = pg_sys::table_open(pg_sys::ExtensionRelationId, pg_sys::AccessShareLock as i32);
    let mut key: pg_sys::ScanKeyData = std::mem::zeroed();
    pg_sys::ScanKeyInit(
        &mut key,
        pg_sys::Anum_pg_extension_extname as i16,
        pg_sys::BTEqualStrategyNumber as u16,
        pg_sys::Oid::from(pg_sys::F_NAMEEQ),
        pg_sys::Datum::from(c"agentmem".as_ptr()),
    );
    let scan = pg_sys::systable_beginscan(
        rel,
        pg_sys::Oid::from(pg_sys::ExtensionNameIndexId),
        true,
        std::ptr::null_mut(),
        1,
        &mut key,
    );
    let tuple = pg_sys::systable_getnext(scan);
    let ns = if tuple.is_null() {
        pg_sys::InvalidOid
    } else {
        let data = (*tuple).t_data;
        let form = data
            .cast::<u8>()
            .add(usize::from((*data).t_hoff))
            .cast::<pg_sys::FormData_pg_extension>();
        (*form).extnamespace
    };
    pg_sys::systable_endscan(scan);
    pg_sys::table_close(rel, pg_sys::AccessShareLock as i32);
    ns
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

/// `known`'s answer from the memo, else `look`'s, kept by `keep` when it names something.
fn remembered(
    known: impl FnOnce(&Memo) -> Option<pg_sys::Oid>,
    look: impl FnOnce() -> Option<pg_sys::Oid>,
    keep: impl FnOnce(&mut Memo, pg_sys::Oid),
) -> pg_sys::Oid {
    watch();
    if let Some(oid) = MEMO.with(|m| known(&m.borrow())) {
        return oid;
    }
    // Never borrowed across the lookup: it may run the invalidation callback.
    let Some(oid) = look() else {
        return pg_sys::InvalidOid;
    };
    if oid != pg_sys::InvalidOid {
        MEMO.with(|m| keep(&mut m.borrow_mut(), oid));
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
