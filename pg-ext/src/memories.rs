//! Long-term memories' row triggers: the search index follows the rows (the rules are in
//! `agentmem_core::memories`), after the row is written or gone.

use crate::conn::SpiConn;
use crate::error::ok;
use crate::triggers::{internal, seq, text, Fired};
use agentmem_core::memories::{self, OldMemory};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{JsonB, WhoAllocated};

/// The indexed columns of a row as the core reads them (JSON arrays as text).
fn old_memory<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> OldMemory {
    let json = |col: &str| {
        row.get_by_name::<JsonB>(col)
            .ok()
            .flatten()
            .map(|j| j.0.to_string())
            .unwrap_or_else(|| "[]".into())
    };
    OldMemory {
        content: text(row, "content"),
        tags: json("tags"),
        related_files: json("related_files"),
    }
}

/// AFTER INSERT on mem_memories.
#[pg_trigger]
fn mem__memory_insert<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(memories::on_insert(&mut SpiConn, seq(&new)));
    }
    Ok(None)
}

/// AFTER UPDATE of the indexed columns.
#[pg_trigger]
fn mem__memory_update<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let (Some(old), Some(new)) = (trigger.old(), trigger.new()) {
        ok(memories::on_update(
            &mut SpiConn,
            seq(&new),
            &old_memory(&old),
        ));
    }
    Ok(None)
}

/// AFTER INSERT, or UPDATE of a text column, on mem_memories: no secret is stored.
#[pg_trigger]
fn mem__memory_secrets<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(memories::check_secrets(&mut SpiConn, seq(&new)));
    }
    Ok(None)
}

/// AFTER DELETE on mem_memories.
#[pg_trigger]
fn mem__memory_delete<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        ok(memories::on_delete(
            &mut SpiConn,
            seq(&old),
            &old_memory(&old),
        ));
    }
    Ok(None)
}
