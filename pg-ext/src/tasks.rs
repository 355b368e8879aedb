//! Task memory: the row triggers of `mem_tasks` and `mem_task_deps`. Every rule is in `agentmem_core::tasks`.

use crate::conn::SpiConn;
use crate::error::ok;
use crate::triggers::{internal, new_row, read, write_back};
use agentmem_core::tasks::graph::{self, DepRow, TaskRow};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::AllocatedByRust;

#[pg_trigger]
fn mem__task_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let mut row = new_row(trigger);
    let mut t = read::<TaskRow, _>(&row);
    if ok(graph::on_task_insert(&mut SpiConn, &mut t)) {
        write_back(&mut row, &t);
    }
    Ok(Some(row))
}

/// BEFORE UPDATE of a status that crosses the closed line: fills the row.
#[pg_trigger]
fn mem__task_status<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let mut row = new_row(trigger);
    let mut t = read::<TaskRow, _>(&row);
    if ok(graph::on_task_status(&mut SpiConn, &mut t)) {
        write_back(&mut row, &t);
    }
    Ok(Some(row))
}

/// AFTER UPDATE of such a status: the dependents see the new status.
#[pg_trigger]
fn mem__task_status_after<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(graph::after_task_status(
            &mut SpiConn,
            &read::<TaskRow, _>(&new).id,
        ));
    }
    Ok(None)
}

#[pg_trigger]
fn mem__task_text<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let row = new_row(trigger);
    let old = trigger
        .old()
        .map(|o| read::<TaskRow, _>(&o).search_text())
        .unwrap_or_default();
    ok(graph::on_task_text(
        &mut SpiConn,
        &read::<TaskRow, _>(&row),
        &old,
    ));
    Ok(Some(row))
}

#[pg_trigger]
fn mem__task_id_change<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    ok(graph::on_task_id_change());
    Ok(None)
}

/// AFTER DELETE: the row is gone; its dependencies, labels, links and document follow.
#[pg_trigger]
fn mem__task_delete<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        let t = read::<TaskRow, _>(&old);
        ok(graph::on_task_delete(
            &mut SpiConn,
            t.seq,
            &t.id,
            &t.search_text(),
        ));
    }
    Ok(None)
}

/// AFTER INSERT: the new dependency is counted.
#[pg_trigger]
fn mem__task_dep_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(graph::on_dep_insert(&mut SpiConn, &read::<DepRow, _>(&new)));
    }
    Ok(None)
}

#[pg_trigger]
fn mem__task_dep_update<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    ok(graph::on_dep_update());
    Ok(None)
}

/// AFTER DELETE: the task is recounted without the dependency.
#[pg_trigger]
fn mem__task_dep_delete<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        ok(graph::on_dep_delete(
            &mut SpiConn,
            &read::<DepRow, _>(&old).task_id,
        ));
    }
    Ok(None)
}
