//! The tables an export carries, their columns, and which rows belong to a scope.
//!
//! One list serves export (what is read, in which order) and import (what is written, in an
//! order the triggers accept): base rows only — derived ones (search index, closure, hubs,
//! memory files, vector chunks, counters, blocked state) are rebuilt by the triggers as the
//! rows go in, exactly as for any plain `INSERT`.

/// How a column's value is carried in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Kind {
    Text,
    Int,
    Real,
    /// A JSON column: carried as JSON, not as a string.
    Json,
    /// Bytes: carried as lowercase hex.
    Blob,
}

/// One exported table.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    /// `ORDER BY` of the export (a stable, unique order).
    pub order: &'static str,
    /// The rows of a thread (`?1` its id), or `None` when the table has none.
    pub of_thread: Option<&'static str>,
    /// The rows of a resource (`?1` its id).
    pub of_resource: &'static str,
}

use Kind::{Blob, Int, Json, Real, Text};

/// Messages of the scope, for the tables that hang on them (`{col}` is `thread_id` or
/// `resource_id`). The links are found by message id in a subquery, not a join: a
/// distributed database runs it in two steps (a join on a column other than the resource it
/// cannot run).
macro_rules! tasks_of {
    ($col:literal) => {
        concat!(
            "id IN (SELECT task_id FROM mem_task_messages WHERE message_id IN \
               (SELECT id FROM mem_messages WHERE ",
            $col,
            " = ?1) UNION SELECT task_id FROM mem_messages WHERE ",
            $col,
            " = ?1 AND task_id IS NOT NULL)"
        )
    };
}

/// The tasks of a resource: its own, and those linked to its messages.
macro_rules! resource_tasks {
    () => {
        concat!("resource_id = ?1 OR ", tasks_of!("resource_id"))
    };
}

/// The scratchpad rows of the observer's sessions in a thread.
const OBSERVED_IN_THREAD: &str = "session_id IN (SELECT id FROM mem_observer_sessions WHERE thread_id = ?1)";

/// In import order: tasks before messages (a message names its task), threads before their
/// messages, memories and messages before their vectors, nodes before edges.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const TABLES: &[Table] = &[
    Table {
        name: "mem_tasks",
        columns: &[
            ("id", Text),
            ("title", Text),
            ("description", Text),
            ("status", Text),
            ("priority", Int),
            ("type", Text),
            ("assignee", Text),
            ("session_id", Text),
            ("created_at", Int),
            ("updated_at", Int),
            ("closed_at", Int),
            ("close_reason", Text),
            ("summary", Text),
            ("compaction_level", Int),
            ("compacted_at", Int),
            ("original_content", Text),
            ("metadata", Json),
            ("defer_until", Int),
            ("resource_id", Text),
        ],
        order: "id",
        of_thread: Some(tasks_of!("thread_id")),
        of_resource: resource_tasks!(),
    },
    Table {
        name: "mem_task_labels",
        columns: &[("task_id", Text), ("label", Text)],
        order: "task_id, label",
        of_thread: Some(concat!("task_id IN (SELECT id FROM mem_tasks WHERE ", tasks_of!("thread_id"), ")")),
        of_resource: concat!("task_id IN (SELECT id FROM mem_tasks WHERE ", resource_tasks!(), ")"),
    },
    Table {
        name: "mem_task_deps",
        columns: &[
            ("task_id", Text),
            ("depends_on_id", Text),
            ("type", Text),
            ("created_at", Int),
        ],
        order: "task_id, depends_on_id, type",
        of_thread: Some(concat!(
            "task_id IN (SELECT id FROM mem_tasks WHERE ", tasks_of!("thread_id"), ") ",
            "AND depends_on_id IN (SELECT id FROM mem_tasks WHERE ", tasks_of!("thread_id"), ")"
        )),
        of_resource: concat!(
            "task_id IN (SELECT id FROM mem_tasks WHERE ", resource_tasks!(), ") ",
            "AND depends_on_id IN (SELECT id FROM mem_tasks WHERE ", resource_tasks!(), ")"
        ),
    },
    Table {
        name: "mem_threads",
        columns: &[
            ("id", Text),
            ("resource_id", Text),
            ("agent_id", Text),
            ("user_id", Text),
            ("title", Text),
            ("metadata", Json),
            ("state", Text),
            ("created_at", Int),
            ("updated_at", Int),
        ],
        order: "id",
        of_thread: Some("id = ?1"),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_messages",
        columns: &[
            ("id", Text),
            ("thread_id", Text),
            ("message_index", Int),
            ("role", Text),
            ("raw_content", Text),
            ("search_text", Text),
            ("injection_text", Text),
            ("summary", Text),
            ("compaction_level", Int),
            ("task_id", Text),
            ("token_count", Int),
            ("created_at", Int),
            ("metadata", Json),
        ],
        order: "thread_id, message_index",
        of_thread: Some("thread_id = ?1"),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_compactions",
        columns: &[
            ("id", Text),
            ("thread_id", Text),
            ("resource_id", Text),
            ("start_index", Int),
            ("end_index", Int),
            ("message_count", Int),
            ("summary", Text),
            ("original_message_ids", Json),
            ("created_at", Int),
        ],
        order: "id",
        of_thread: Some("thread_id = ?1"),
        of_resource: "thread_id IN (SELECT id FROM mem_threads WHERE resource_id = ?1)",
    },
    Table {
        name: "mem_task_messages",
        columns: &[
            ("task_id", Text),
            ("message_id", Text),
            ("relation", Text),
            ("created_at", Int),
        ],
        order: "task_id, message_id",
        of_thread: Some("message_id IN (SELECT id FROM mem_messages WHERE thread_id = ?1)"),
        of_resource: "message_id IN (SELECT id FROM mem_messages WHERE resource_id = ?1)",
    },
    Table {
        name: "mem_om_records",
        columns: &[
            ("id", Text),
            ("lookup_key", Text),
            ("scope", Text),
            ("thread_id", Text),
            ("resource_id", Text),
            ("generation", Int),
            ("is_active", Int),
            ("origin_type", Text),
            ("active_observations", Text),
            ("observation_tokens", Int),
            ("buffered_chunks", Json),
            ("last_observed_at", Int),
            ("observed_message_ids", Json),
            ("last_reflection_at", Int),
            ("total_tokens_observed", Int),
            ("last_buffered_at_tokens", Int),
            ("last_buffered_at_time", Int),
            ("is_observing", Int),
            ("is_reflecting", Int),
            ("is_buffering_observation", Int),
            ("is_buffering_reflection", Int),
            ("config", Json),
            ("lock_owner_id", Text),
            ("lock_operation_id", Text),
            ("lock_expires_at", Int),
            ("last_heartbeat_at", Int),
            ("buffered_reflection", Text),
            ("buffered_reflection_base", Text),
            ("created_at", Int),
            ("updated_at", Int),
        ],
        order: "lookup_key, generation, id",
        of_thread: Some("thread_id = ?1"),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_working_memory",
        columns: &[("scope_key", Text), ("content", Text), ("updated_at", Int)],
        order: "scope_key",
        of_thread: Some("scope_key = 'thread:' || ?1"),
        of_resource: "scope_key = 'resource:' || ?1 \
            OR scope_key IN (SELECT 'thread:' || id FROM mem_threads WHERE resource_id = ?1)",
    },
    Table {
        name: "mem_memories",
        columns: &[
            ("id", Text),
            ("resource_id", Text),
            ("type", Text),
            ("content", Text),
            ("confidence", Real),
            ("tags", Json),
            ("related_files", Json),
            ("related_modules", Json),
            ("scope", Text),
            ("source", Text),
            ("session_id", Text),
            ("commit_sha", Text),
            ("relations", Json),
            ("decay_half_life_days", Real),
            ("needs_review", Int),
            ("user_verified", Int),
            ("pinned", Int),
            ("deprecated", Int),
            ("deprecated_at", Int),
            ("superseded_by", Text),
            ("stale_at", Int),
            ("access_count", Int),
            ("accesses_since_correction", Int),
            ("last_accessed_at", Int),
            ("citation_text", Text),
            ("target_node_id", Text),
            ("created_at", Int),
            ("updated_at", Int),
        ],
        order: "id",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_embeddings",
        columns: &[
            ("kind", Text),
            ("owner_id", Text),
            ("model", Text),
            ("dims", Int),
            ("vector", Blob),
            ("created_at", Int),
        ],
        order: "kind, owner_id, model",
        of_thread: Some(
            "kind = 'message' AND owner_id IN (SELECT id FROM mem_messages WHERE thread_id = ?1)",
        ),
        of_resource: "(kind = 'message' AND owner_id IN (SELECT id FROM mem_messages WHERE resource_id = ?1)) \
            OR (kind = 'memory' AND owner_id IN (SELECT id FROM mem_memories WHERE resource_id = ?1))",
    },
    Table {
        name: "mem_graph_settings",
        columns: &[
            ("resource_id", Text),
            ("max_depth", Int),
            ("hub_in_degree", Int),
            ("updated_at", Int),
        ],
        order: "resource_id",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_graph_nodes",
        columns: &[
            ("id", Text),
            ("resource_id", Text),
            ("type", Text),
            ("label", Text),
            ("file_path", Text),
            ("language", Text),
            ("start_line", Int),
            ("end_line", Int),
            ("layer", Int),
            ("source", Text),
            ("confidence", Real),
            ("content_hash", Text),
            ("metadata", Json),
            ("created_at", Int),
            ("updated_at", Int),
            ("stale_at", Int),
        ],
        order: "id",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_graph_edges",
        columns: &[
            ("id", Text),
            ("from_id", Text),
            ("to_id", Text),
            ("resource_id", Text),
            ("type", Text),
            ("layer", Int),
            ("weight", Real),
            ("source", Text),
            ("confidence", Real),
            ("metadata", Json),
            ("created_at", Int),
            ("updated_at", Int),
            ("stale_at", Int),
            ("valid_at", Int),
            ("invalid_at", Int),
        ],
        order: "id",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_graph_refs",
        columns: &[
            ("resource_id", Text),
            ("file_id", Text),
            ("from_id", Text),
            ("kind", Text),
            ("ref_no", Int),
            ("target", Text),
            ("rank", Int),
            ("line", Int),
            ("to_id", Text),
        ],
        order: "file_id, ref_no, rank",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_code_chunks",
        columns: &[
            ("id", Text),
            ("resource_id", Text),
            ("file_id", Text),
            ("node_id", Text),
            ("file_path", Text),
            ("start_line", Int),
            ("end_line", Int),
            ("content", Text),
            ("token_count", Int),
            ("created_at", Int),
        ],
        order: "id",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_items",
        columns: &[
            ("id", Text),
            ("resource_id", Text),
            ("namespace", Text),
            ("key", Text),
            ("value", Json),
            ("fields", Json),
            ("created_at", Int),
            ("updated_at", Int),
            ("ttl_minutes", Real),
            ("expires_at", Int),
        ],
        order: "namespace, key",
        of_thread: None,
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_sessions",
        columns: &[
            ("id", Text),
            ("resource_id", Text),
            ("session_type", Text),
            ("thread_id", Text),
            ("status", Text),
            ("outcome", Text),
            ("step", Int),
            ("events", Int),
            ("steps_completed", Int),
            ("input_tokens", Int),
            ("max_step_tokens", Int),
            ("external_step", Int),
            ("self_corrections", Int),
            ("recent", Json),
            ("scratch_rows", Int),
            ("max_scratch_rows", Int),
            ("evicted", Int),
            ("early", Json),
            ("result", Json),
            ("synthesis", Text),
            ("started_at", Int),
            ("updated_at", Int),
            ("finalized_at", Int),
            ("rev", Int),
        ],
        order: "id",
        of_thread: Some("thread_id = ?1"),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_files",
        columns: &[
            ("resource_id", Text),
            ("session_id", Text),
            ("path", Text),
            ("reads", Int),
            ("edits", Int),
            ("config", Int),
            ("left_for_search", Int),
            ("first_step", Int),
            ("last_step", Int),
            ("first_event", Int),
            ("last_event", Int),
        ],
        order: "session_id, path",
        of_thread: Some(OBSERVED_IN_THREAD),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_patterns",
        columns: &[
            ("resource_id", Text),
            ("session_id", Text),
            ("kind", Text),
            ("pattern", Text),
            ("count", Int),
            ("first_step", Int),
            ("last_step", Int),
            ("first_event", Int),
        ],
        order: "session_id, kind, pattern",
        of_thread: Some(OBSERVED_IN_THREAD),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_errors",
        columns: &[
            ("resource_id", Text),
            ("session_id", Text),
            ("fingerprint", Text),
            ("tool", Text),
            ("sample", Text),
            ("count", Int),
            ("first_step", Int),
            ("last_step", Int),
            ("resolved_step", Int),
        ],
        order: "session_id, fingerprint",
        of_thread: Some(OBSERVED_IN_THREAD),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_pairs",
        columns: &[
            ("resource_id", Text),
            ("session_id", Text),
            ("file_a", Text),
            ("file_b", Text),
            ("count", Int),
            ("last_step", Int),
        ],
        order: "session_id, file_a, file_b",
        of_thread: Some(OBSERVED_IN_THREAD),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_events",
        columns: &[
            ("resource_id", Text),
            ("session_id", Text),
            ("n", Int),
            ("token", Int),
            ("event", Json),
        ],
        order: "session_id, n",
        of_thread: Some(OBSERVED_IN_THREAD),
        of_resource: "resource_id = ?1",
    },
    Table {
        name: "mem_observer_notes",
        columns: &[
            ("resource_id", Text),
            ("session_id", Text),
            ("class", Text),
            ("step", Int),
            ("text", Text),
            ("data", Json),
        ],
        order: "session_id, seq",
        of_thread: Some(OBSERVED_IN_THREAD),
        of_resource: "resource_id = ?1",
    },
];

/// The table called `name`.
pub(crate) fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}
