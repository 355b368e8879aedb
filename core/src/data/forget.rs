//! `mem_forget`: the hard delete of everything a resource owns, search postings included.
//!
//! Rows go through plain `DELETE`s, so the triggers that keep derived data exact (search
//! index, counters, closure, memory files, vector chunks, task links) do what they do for any
//! delete. The search engine only marks a deleted document until a merge; so afterwards every
//! namespace the resource wrote to is purged ([`search::purge`]): the segments that hold
//! deleted documents are rewritten without them, and no posting, position or term of the
//! forgotten text is left in an index page. The bytes of freed database pages are a storage
//! matter: SQLite zeroes them with `PRAGMA secure_delete = ON`, Postgres reclaims dead tuples
//! with `VACUUM` (docs/conversations.md, "Forget").
//!
//! Tasks carry no resource: a task goes with the resource when every message it is linked to
//! (by a task link or a message's `task_id`) is the resource's; links of other tasks to the
//! resource's messages go.

use super::tables;
use crate::db::access::{self, Act};
use crate::search;
use crate::{Conn, Result, Value};
use serde_json::{Map, Value as Json};

/// The tables `mem_forget` reports. A table's rows of the resource are those its export
/// takes (data/tables.rs); the closure and hubs, which no export carries, by `resource_id`.
/// Counted before anything is deleted: derived rows (closure, links, vectors) go through the
/// triggers of the rows they hang on.
pub(crate) const TABLES: &[&str] = &[
    "mem_threads",
    "mem_messages",
    "mem_compactions",
    "mem_tasks",
    "mem_task_messages",
    "mem_om_records",
    "mem_working_memory",
    "mem_memories",
    "mem_embeddings",
    "mem_graph_nodes",
    "mem_graph_edges",
    "mem_graph_closure",
    "mem_graph_hubs",
    "mem_graph_settings",
    "mem_graph_refs",
    "mem_code_chunks",
    "mem_items",
    "mem_observer_sessions",
    "mem_observer_files",
    "mem_observer_patterns",
    "mem_observer_errors",
    "mem_observer_pairs",
    "mem_observer_notes",
    "mem_observer_events",
];

/// The derived tables among [`TABLES`]: the graph's, kept by resource.
const DERIVED: &[&str] = &["mem_graph_closure", "mem_graph_hubs"];

/// The deletes, in order: the graph's edges before its nodes (their triggers take the closure
/// rows they carried), memories (their triggers take vectors, file rows and index documents),
/// then messages and compactions explicitly before their threads — the foreign keys' cascade
/// is off in SQLite unless the connection turned it on; the message delete trigger takes each
/// message out of the index and its vectors with it.
const DELETE_ORDER: &[&str] = &[
    "mem_observer_events",
    "mem_observer_notes",
    "mem_observer_pairs",
    "mem_observer_errors",
    "mem_observer_patterns",
    "mem_observer_files",
    "mem_observer_sessions",
    "mem_items",
    "mem_code_chunks",
    "mem_graph_refs",
    "mem_graph_edges",
    "mem_graph_nodes",
    "mem_graph_closure",
    "mem_graph_hubs",
    "mem_graph_settings",
    "mem_memories",
    "mem_task_messages",
    "mem_om_records",
    "mem_working_memory",
    "mem_compactions",
    "mem_messages",
    "mem_threads",
];

/// The condition (`?1` the resource) that selects a table's rows of a resource.
fn of_resource(table: &str) -> &'static str {
    tables::table(table).map_or("resource_id = ?1", |t| t.of_resource)
}

/// The tasks that go with the resource: its own (`resource_id`), and those of no resource
/// linked (by a task link or a message's `task_id`) to its messages and to no other
/// resource's.
const OWN_TASKS: &str = "SELECT id FROM mem_tasks WHERE resource_id = ?1 \
     UNION SELECT id FROM mem_tasks WHERE resource_id IS NULL AND id IN ( \
       SELECT task_id FROM mem_task_messages WHERE message_id IN \
         (SELECT id FROM mem_messages WHERE resource_id = ?1) \
       UNION SELECT task_id FROM mem_messages WHERE resource_id = ?1 AND task_id IS NOT NULL) \
     AND id NOT IN ( \
       SELECT task_id FROM mem_task_messages WHERE message_id IN \
         (SELECT id FROM mem_messages WHERE resource_id <> ?1) \
       UNION SELECT task_id FROM mem_messages WHERE resource_id <> ?1 AND task_id IS NOT NULL) \
     ORDER BY id";

/// `mem_forget(resource_id)` → JSON `{table: rows deleted}` for every table in [`TABLES`]
/// (zeros for a resource nobody wrote). All or nothing.
pub(crate) fn forget(conn: &mut dyn Conn, r: &str) -> Result<String> {
    let rid = [Value::from(r)];
    // The closure and hubs are the owner's rows: deleted and counted only when the caller
    // may write the resource's graph, asked before its rows go.
    let graph = access::may(conn, Act::Write, crate::graph::TABLES, r)?;
    let tasks: Vec<Value> = conn
        .query(OWN_TASKS, &rid)?
        .into_iter()
        .filter_map(|row| row.into_iter().next())
        .collect();
    let mut counts = Map::new();
    for table in TABLES {
        let n = if *table == "mem_tasks" {
            tasks.len() as i64
        } else if DERIVED.contains(table) && !graph {
            0
        } else {
            let sql = format!("SELECT count(*) FROM {table} WHERE {}", of_resource(table));
            conn.query_value(&sql, &rid)?
                .and_then(|v| v.as_i64())
                .unwrap_or(0)
        };
        counts.insert((*table).to_owned(), Json::from(n));
    }

    for t in &tasks {
        conn.execute(
            "DELETE FROM mem_tasks WHERE id = ?1",
            std::slice::from_ref(t),
        )?;
    }
    for table in DELETE_ORDER {
        if DERIVED.contains(table) && !graph {
            continue;
        }
        conn.execute(
            &format!("DELETE FROM {table} WHERE {}", of_resource(table)),
            &rid,
        )?;
    }
    for ns in super::indexes::namespaces() {
        search::partition::purge(conn, ns, r)?;
    }
    Ok(Json::Object(counts).to_string())
}
