//! The backend's session (see `agentmem_core::db::session`): a Postgres backend is one
//! connection, run by one thread one statement at a time, so it has one session for its life.
//! The transaction callbacks here keep it in step with the transaction — every part of it: an
//! aborted subtransaction rolls back to where it began, an ended transaction commits or rolls
//! back — and a commit that would leave search documents held (the deferred trigger that
//! writes them did not run: it was disabled) fails instead of losing them.

use agentmem_core::db::session::Session;
use agentmem_core::transaction;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::{Cell, UnsafeCell};

thread_local! {
    static SESSION: UnsafeCell<Session> = UnsafeCell::new(Session::default());
    static WATCHING: Cell<bool> = const { Cell::new(false) };
}

/// The backend's session; the transaction callbacks are registered on first use.
pub fn get<'a>() -> &'a mut Session {
    watch_transactions();
    let session = SESSION.with(|s| s.get());
    // SAFETY: the backend's one thread owns the session for its life, and the core borrows it
    // only between the statements it runs, so no two borrows are alive at once.
    unsafe { &mut *session }
}

/// Registers the transaction callbacks once per backend.
fn watch_transactions() {
    if WATCHING.with(Cell::get) {
        return;
    }
    // SAFETY: plain C callbacks without arguments, registered once for the backend's life.
    unsafe {
        pg_sys::RegisterXactCallback(Some(on_xact), std::ptr::null_mut());
        pg_sys::RegisterSubXactCallback(Some(on_subxact), std::ptr::null_mut());
    }
    WATCHING.with(|w| w.set(true));
}

#[pg_guard]
unsafe extern "C-unwind" fn on_xact(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    let session = get();
    match event {
        pg_sys::XactEvent::XACT_EVENT_PRE_COMMIT | pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE
            if transaction::holds_unwritten(session) =>
        {
            session.rollback();
            error!(
                "agentmem: this transaction wrote messages whose search documents were not \
                 written: the deferred trigger mem__message_held_trg on mem_messages did not \
                 run (is it disabled?)"
            );
        }
        pg_sys::XactEvent::XACT_EVENT_ABORT | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT => {
            session.rollback();
        }
        pg_sys::XactEvent::XACT_EVENT_COMMIT | pg_sys::XactEvent::XACT_EVENT_PREPARE => {
            session.commit();
        }
        _ => {}
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn on_subxact(
    event: pg_sys::SubXactEvent::Type,
    my: pg_sys::SubTransactionId,
    _parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    let session = get();
    let id = u64::from(my);
    match event {
        pg_sys::SubXactEvent::SUBXACT_EVENT_START_SUB => session.savepoint(id),
        pg_sys::SubXactEvent::SUBXACT_EVENT_COMMIT_SUB => session.release(id),
        pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB => {
            session.rollback_to(id);
            session.release(id);
        }
        _ => {}
    }
}
