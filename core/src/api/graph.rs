//! The knowledge graph: nodes, edges, neighbors, impact and staleness. Its statements are
//! lookups by key, so each function keeps generic plans on Postgres (planning each call anew,
//! what `auto` chooses for a LIMIT or a range parameter, cost a quarter of a neighborhood
//! query).

use super::{functions, Function};
use crate::graph::query::{self, Neighbor};
use crate::graph::{files, load, nodes, outline, settings, upkeep};

pub(super) const FUNCTIONS: &[Function] = functions! {
    graph_node_upsert(resource_id: &str, node: &str) -> Text, writer, generic_plans, by_resource
        => nodes::upsert;
    graph_node_remove(id: &str) -> Int, writer, generic_plans, by_node_id => nodes::remove;
    graph_edge_add(from_id: &str, to_id: &str, r#type: &str, options: Option<&str>) -> Text,
        writer, generic_plans, by_edge_source => upkeep::edge_add;
    graph_edge_remove(id: &str) -> Int, writer, generic_plans, by_edge => upkeep::edge_remove;
    graph_edge_invalidate(id: &str, at: Option<i64>) -> Int, writer, generic_plans, by_edge
        => upkeep::edge_invalidate;
    graph_neighbors(node_id: &str, options: Option<&str>) -> Table<Neighbor>, reader,
        generic_plans, by_node => query::neighbors;
    graph_impact(node_id: &str, options: Option<&str>) -> Json, reader, generic_plans, by_node
        => query::impact;
    graph_mark_stale(resource_id: &str, file_path: &str, now: Option<i64>) -> Int, writer,
        generic_plans, by_resource => nodes::mark_stale;
    graph_file_changed(resource_id: &str, file_path: &str, content_hash: &str) -> Bool, writer,
        generic_plans, by_resource => nodes::file_changed;
    graph_stats(resource_id: &str) -> Json, reader, generic_plans, by_resource => query::stats;
    graph_configure(resource_id: &str, options: Option<&str>) -> Json, writer, generic_plans,
        by_resource => settings::configure;
    graph_load(resource_id: &str, graph: &str) -> Json, writer, generic_plans, by_resource
        => load::load;
    graph_outline(path: &str, source: &str, options: Option<&str>) -> Json, pure
        => |_, path, source, options| outline::outline(path, source, options);
    graph_index_file(resource_id: &str, path: &str, source: &str, options: Option<&str>) -> Json,
        writer, by_resource => index_file;
    graph_index_files(resource_id: &str, files: &str) -> Json, writer, by_resource
        => index_files;
    graph_remove_file(resource_id: &str, path: &str) -> Json, writer, by_resource
        => files::remove_file;
};

#[cfg(feature = "code")]
use crate::graph::index::{index_file, index_files};

/// Without the grammars, indexing is refused by name.
#[cfg(not(feature = "code"))]
fn no_grammars(function: &str) -> crate::Error {
    crate::Error::invalid(
        function,
        "this build has no grammars (it was built without the feature `code`)",
    )
}

#[cfg(not(feature = "code"))]
fn index_file(
    _: &mut dyn crate::Conn,
    _: &str,
    _: &str,
    _: &str,
    _: Option<&str>,
) -> crate::Result<String> {
    Err(no_grammars("graph_index_file"))
}

#[cfg(not(feature = "code"))]
fn index_files(_: &mut dyn crate::Conn, _: &str, _: &str) -> crate::Result<String> {
    Err(no_grammars("graph_index_files"))
}
