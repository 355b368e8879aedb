//! The knowledge graph: nodes and typed, weighted edges the client supplies (an agent, a
//! tree-sitter or SCIP indexer), and the closure the database keeps exact from them.
//!
//! Every change of an edge — through these functions or plain SQL — reaches the closure in
//! the row triggers of `mem_graph_edges` ([`upkeep::on_edge_insert`] and the others), so there
//! is one way the closure is maintained (a call that writes one edge row has its trigger note
//! the change and applies it right after the statement). A node's removal removes its edges
//! (and so their closure rows) in the trigger of `mem_graph_nodes`.

internal!(bound);
pub(crate) mod chunks;
pub(crate) mod closure;
pub(crate) mod gopkg;
internal!(edges);
internal!(files);
pub(crate) mod flat;
#[cfg(feature = "code")]
internal!(index);
pub(crate) mod keys;
internal!(load);
internal!(nodes);
internal!(outline);
pub(crate) mod path;
internal!(rebuild);
pub(crate) mod refs;
pub(crate) mod query;
internal!(settings);
internal!(stored);
internal!(upkeep);
pub(crate) mod walk;

/// The documented tables that hold a resource's graph: a caller that reaches none of its rows
/// there may not touch or count its derived rows ([`crate::db::access`]).
pub(crate) const TABLES: &[&str] = &[
    "mem_graph_nodes",
    "mem_graph_edges",
    "mem_graph_settings",
    "mem_graph_refs",
    "mem_code_chunks",
];
