//! The knowledge graph's row triggers: every change of an edge reaches the closure (the rules
//! are in `agentmem_core::graph`), after the row is written or gone.

use crate::conn::SpiConn;
use crate::error::ok;
use crate::triggers::{internal, seq, text, Fired};
use agentmem_core::graph::{self, OldEdge};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::WhoAllocated;

/// The closure's view of an edge row before the change.
fn old_edge<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> OldEdge {
    let set = |col: &str| row.get_by_name::<i64>(col).ok().flatten().is_some();
    OldEdge {
        from: text(row, "from_id"),
        to: text(row, "to_id"),
        ty: text(row, "type"),
        active: !set("stale_at") && !set("invalid_at"),
    }
}

/// AFTER INSERT on mem_graph_edges.
#[pg_trigger]
fn mem__graph_edge_insert<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(graph::on_edge_insert(&mut SpiConn, seq(&new)));
    }
    Ok(None)
}

/// AFTER UPDATE of the columns the closure sees.
#[pg_trigger]
fn mem__graph_edge_update<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let (Some(old), Some(new)) = (trigger.old(), trigger.new()) {
        ok(graph::on_edge_update(
            &mut SpiConn,
            seq(&new),
            &old_edge(&old),
        ));
    }
    Ok(None)
}

/// AFTER DELETE on mem_graph_edges.
#[pg_trigger]
fn mem__graph_edge_delete<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        let resource = text(&old, "resource_id");
        ok(graph::on_edge_delete(
            &mut SpiConn,
            &resource,
            &old_edge(&old),
        ));
    }
    Ok(None)
}

/// AFTER DELETE on mem_graph_nodes: the node's edges go.
#[pg_trigger]
fn mem__graph_node_delete<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        ok(graph::on_node_delete(&mut SpiConn, &text(&old, "id")));
    }
    Ok(None)
}

/// AFTER INSERT, UPDATE or DELETE on mem_graph_settings: the closure of each resource the row
/// named before or after is rebuilt to its bounds.
#[pg_trigger]
fn mem__graph_settings_changed<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    let mut resources: Vec<String> = [trigger.old(), trigger.new()]
        .into_iter()
        .flatten()
        .map(|row| text(&row, "resource_id"))
        .collect();
    resources.dedup();
    for r in resources {
        ok(graph::on_settings_change(&mut SpiConn, &r));
    }
    Ok(None)
}
