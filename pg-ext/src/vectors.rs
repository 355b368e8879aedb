//! Client vectors' row triggers: the packed chunks follow the rows (the rules are in
//! `agentmem_core::vectors::store`), after the row is written or gone.

use crate::conn::SpiConn;
use crate::error::ok;
use crate::triggers::{internal, seq, text, Fired};
use agentmem_core::vectors::store;
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::WhoAllocated;

/// The row's model and chunk before the change.
fn place<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> (String, Option<i64>) {
    (
        text(row, "model"),
        row.get_by_name::<i64>("chunk").ok().flatten(),
    )
}

/// AFTER INSERT on mem_embeddings.
#[pg_trigger]
fn mem__embedding_insert<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(store::on_insert(&mut SpiConn, seq(&new)));
    }
    Ok(None)
}

/// AFTER UPDATE of the vector, its dims or its model.
#[pg_trigger]
fn mem__embedding_update<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let (Some(old), Some(new)) = (trigger.old(), trigger.new()) {
        let (model, chunk) = place(&old);
        ok(store::on_update(&mut SpiConn, seq(&new), &model, chunk));
    }
    Ok(None)
}

/// AFTER DELETE on mem_embeddings.
#[pg_trigger]
fn mem__embedding_delete<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        let (model, chunk) = place(&old);
        ok(store::on_delete(&mut SpiConn, seq(&old), &model, chunk));
    }
    Ok(None)
}
