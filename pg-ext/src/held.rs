//! The message search documents a transaction holds back until it commits (see
//! [`agentmem_core::search::held`]), on Postgres.
//!
//! The insert trigger of `mem_messages` holds a new message's document in this backend's
//! session when the table also has the deferred constraint trigger `mem__message_held_trg`.
//! Postgres fires that trigger when the transaction commits (or at the end of the statement
//! under `SET CONSTRAINTS … IMMEDIATE`), and its first firing writes everything held. The
//! transaction callbacks here keep the session in step with the transaction (every part of it,
//! not only what is held): an aborted subtransaction rolls back to where it began, an aborted
//! transaction forgets everything, and a commit that would leave something held (the deferred
//! trigger was disabled) fails instead of losing search documents.

use crate::conn::SpiConn;
use crate::error::ok;
use agentmem_core::search::{self, held};
use agentmem_core::Conn;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::Cell;

/// The deferred trigger that writes what is held.
const TRIGGER: &str = "mem__message_held_trg";

/// Whether the relation of this trigger call has the enabled trigger `name`: the message
/// triggers change what they do by the triggers their table has, so that a newer library
/// serves a database whose schema is older.
pub fn has_trigger(trigger: &PgTrigger<'_>, name: &str) -> bool {
    let rel = trigger.trigger_data().tg_relation;
    // SAFETY: the trigger's relation is open for the call; trigdesc, when not NULL, holds
    // numtriggers entries whose names are NUL-terminated.
    unsafe {
        let desc = (*rel).trigdesc;
        if desc.is_null() {
            return false;
        }
        let all = std::slice::from_raw_parts((*desc).triggers, (*desc).numtriggers as usize);
        all.iter().any(|t| {
            t.tgenabled != pg_sys::TRIGGER_DISABLED as std::ffi::c_char
                && std::ffi::CStr::from_ptr(t.tgname).to_bytes() == name.as_bytes()
        })
    }
}

/// Whether the message triggers may hold search documents: `mem_messages` has the deferred
/// trigger that writes them.
pub fn may_hold(trigger: &PgTrigger<'_>) -> bool {
    has_trigger(trigger, TRIGGER)
}

/// Writes what the transaction holds (the deferred trigger's work; its first firing of a
/// transaction finds everything, later ones nothing).
pub fn write() {
    if held::of(&mut SpiConn).any() {
        ok(search::write_held(&mut SpiConn));
    }
}

thread_local! {
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
}

/// Registers the transaction callbacks once per backend, before its session is first used.
pub fn watch_transactions() {
    if REGISTERED.with(Cell::get) {
        return;
    }
    // SAFETY: plain C callbacks without arguments, registered once for the backend's life.
    unsafe {
        pg_sys::RegisterXactCallback(Some(on_xact), std::ptr::null_mut());
        pg_sys::RegisterSubXactCallback(Some(on_subxact), std::ptr::null_mut());
    }
    REGISTERED.with(|r| r.set(true));
}

#[pg_guard]
unsafe extern "C-unwind" fn on_xact(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    match event {
        pg_sys::XactEvent::XACT_EVENT_PRE_COMMIT | pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE
            if held::of(&mut SpiConn).any() =>
        {
            SpiConn.session().rollback();
            error!(
                "agentmem: this transaction wrote messages whose search documents were not \
                 written: the deferred trigger {TRIGGER} on mem_messages did not run (is it \
                 disabled?)"
            );
        }
        pg_sys::XactEvent::XACT_EVENT_ABORT | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT => {
            SpiConn.session().rollback();
        }
        pg_sys::XactEvent::XACT_EVENT_COMMIT | pg_sys::XactEvent::XACT_EVENT_PREPARE => {
            SpiConn.session().commit();
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
    let id = u64::from(my);
    match event {
        pg_sys::SubXactEvent::SUBXACT_EVENT_START_SUB => SpiConn.session().savepoint(id),
        pg_sys::SubXactEvent::SUBXACT_EVENT_COMMIT_SUB => SpiConn.session().release(id),
        pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB => {
            let mut conn = SpiConn;
            let session = conn.session();
            session.rollback_to(id);
            session.release(id);
        }
        _ => {}
    }
}
