//! `mem_distribute()`: a Postgres database with Citus turned into the distributed layout,
//! every table that carries a resource — the conversations, the tasks, long-term memory and
//! its vectors, the knowledge graph, the observer's sessions — and the search index split by
//! `resource_id` and colocated, so that a resource's rows, vectors, closure and index pages
//! live on one node and a call that stays within a resource runs there (see
//! [`crate::cluster::route`]).
//!
//! Citus wants the distribution column in every primary key and unique index, and a
//! foreign key between distributed tables to include it: those keys widen here, and only
//! here (one node keeps its narrower keys, measured to be what it needs). The rows that
//! belong to an owner without carrying its resource (a task's labels, dependencies and links,
//! a memory's files, vectors and their chunks) gain it here (the statements of a call write
//! it there). Tables without a resource that every node reads become reference tables.

use crate::search::layout;
use crate::{Conn, Dialect, Error, Result, Value};
use serde_json::json;

/// Keys widened to lead with `resource_id`, run before the tables are distributed.
const WIDEN: &str = "
ALTER TABLE mem_messages DROP CONSTRAINT mem_messages_thread_id_fkey;
ALTER TABLE mem_compactions DROP CONSTRAINT mem_compactions_thread_id_fkey;
ALTER TABLE mem_threads DROP CONSTRAINT mem_threads_pkey, ADD PRIMARY KEY (resource_id, id);
ALTER TABLE mem_messages DROP CONSTRAINT mem_messages_pkey, ADD PRIMARY KEY (resource_id, seq);
ALTER TABLE mem_messages DROP CONSTRAINT mem_messages_id_key, ADD UNIQUE (resource_id, id);
DROP INDEX mem_messages_thread_index;
CREATE UNIQUE INDEX mem_messages_thread_index ON mem_messages (resource_id, thread_id, message_index);
ALTER TABLE mem_messages ADD CONSTRAINT mem_messages_thread_id_fkey FOREIGN KEY (resource_id, thread_id)
  REFERENCES mem_threads (resource_id, id) ON DELETE CASCADE;
ALTER TABLE mem_compactions DROP CONSTRAINT mem_compactions_pkey, ADD PRIMARY KEY (resource_id, id);
ALTER TABLE mem_compactions ADD CONSTRAINT mem_compactions_thread_id_fkey FOREIGN KEY (resource_id, thread_id)
  REFERENCES mem_threads (resource_id, id) ON DELETE CASCADE;
ALTER TABLE agentmem_private.mem_idx_segments DROP CONSTRAINT mem_idx_segments_pkey,
  ADD PRIMARY KEY (resource_id, seg_no);
ALTER TABLE agentmem_private.mem_idx_pages DROP CONSTRAINT mem_idx_pages_pkey,
  ADD PRIMARY KEY (resource_id, id);
ALTER TABLE mem_tasks ALTER COLUMN resource_id SET NOT NULL;
UPDATE mem_task_deps d SET resource_id = t.resource_id FROM mem_tasks t WHERE t.id = d.task_id;
ALTER TABLE mem_task_deps ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_task_deps_pkey, ADD PRIMARY KEY (resource_id, seq);
DROP INDEX mem_task_deps_edge;
CREATE UNIQUE INDEX mem_task_deps_edge ON mem_task_deps (resource_id, task_id, depends_on_id, type);
UPDATE mem_task_labels l SET resource_id = t.resource_id FROM mem_tasks t WHERE t.id = l.task_id;
ALTER TABLE mem_task_labels ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_task_labels_pkey, ADD PRIMARY KEY (resource_id, task_id, label);
UPDATE mem_task_messages m SET resource_id = t.resource_id FROM mem_tasks t WHERE t.id = m.task_id;
ALTER TABLE mem_task_messages ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_task_messages_pkey, ADD PRIMARY KEY (resource_id, task_id, message_id);
UPDATE agentmem_private.mem_memory_files f SET resource_id = m.resource_id FROM mem_memories m WHERE m.seq = f.memory_seq;
ALTER TABLE agentmem_private.mem_memory_files ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_memory_files_pkey, ADD PRIMARY KEY (resource_id, file_path, memory_seq);
UPDATE mem_embeddings e SET resource_id = m.resource_id FROM mem_memories m
  WHERE e.kind = 'memory' AND m.id = e.owner_id;
UPDATE mem_embeddings e SET resource_id = m.resource_id FROM mem_messages m
  WHERE e.kind = 'message' AND m.id = e.owner_id;
DELETE FROM mem_embeddings WHERE resource_id IS NULL;
DELETE FROM agentmem_private.mem_vec_chunks;
UPDATE mem_embeddings SET chunk = NULL;
ALTER TABLE mem_embeddings ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_embeddings_pkey, ADD PRIMARY KEY (resource_id, seq);
ALTER TABLE mem_embeddings DROP CONSTRAINT mem_embeddings_kind_owner_id_model_key,
  ADD UNIQUE (resource_id, kind, owner_id, model);
DROP INDEX mem_embeddings_unpacked;
CREATE INDEX mem_embeddings_unpacked ON mem_embeddings (resource_id, model, chunk, seq);
DROP INDEX mem_embeddings_recent;
CREATE INDEX mem_embeddings_recent ON mem_embeddings (resource_id, model, seq);
ALTER TABLE agentmem_private.mem_vec_chunks ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_vec_chunks_next_pkey, ADD PRIMARY KEY (resource_id, model, chunk);
DROP INDEX mem_graph_edges_key;
CREATE UNIQUE INDEX mem_graph_edges_key ON mem_graph_edges (resource_id, from_id, to_id, type);
ALTER TABLE agentmem_private.mem_graph_closure DROP CONSTRAINT mem_graph_closure_pkey,
  ADD PRIMARY KEY (resource_id, ancestor, depth, descendant);
ALTER TABLE agentmem_private.mem_graph_hubs DROP CONSTRAINT mem_graph_hubs_pkey,
  ADD PRIMARY KEY (resource_id, node_id);
DROP INDEX mem_om_records_active;
CREATE UNIQUE INDEX mem_om_records_active ON mem_om_records (resource_id, lookup_key)
  WHERE is_active = 1;
UPDATE mem_working_memory SET resource_id = substr(scope_key, 10) WHERE scope_key LIKE 'resource:%';
UPDATE mem_working_memory w SET resource_id = t.resource_id FROM mem_threads t
  WHERE w.scope_key = 'thread:' || t.id;
ALTER TABLE mem_working_memory ALTER COLUMN resource_id SET NOT NULL,
  DROP CONSTRAINT mem_working_memory_pkey, ADD PRIMARY KEY (resource_id, scope_key);
";

/// The keys of the tables named by a row id and numbered by `seq` — their primary key, `id`
/// and any other unique key — widened the same way after [`WIDEN`]: `resource_id` in front.
const LEAD_WITH_RESOURCE: &str = "DO $$ DECLARE t text; c record; BEGIN \
    FOREACH t IN ARRAY ARRAY['mem_tasks', 'mem_memories', 'mem_graph_nodes', 'mem_graph_edges', \
                             'mem_graph_refs', 'mem_code_chunks', 'mem_items', 'mem_om_records', \
                             'mem_observer_sessions', 'mem_observer_files', \
                             'mem_observer_patterns', 'mem_observer_errors', \
                             'mem_observer_pairs', 'mem_observer_events', \
                             'mem_observer_notes'] LOOP \
      FOR c IN SELECT k.conname, k.contype, \
          (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY u.i) \
             FROM pg_catalog.unnest(k.conkey) WITH ORDINALITY AS u (n, i) \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n) AS cols \
        FROM pg_catalog.pg_constraint k WHERE k.conrelid = CAST(t AS regclass) \
          AND k.contype IN ('p', 'u') AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a \
            WHERE a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey) \
              AND a.attname = 'resource_id') LOOP \
        EXECUTE pg_catalog.format('ALTER TABLE %I DROP CONSTRAINT %I, ADD %s (resource_id, %s)', \
          t, c.conname, CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, c.cols); \
      END LOOP; \
    END LOOP; END $$";

/// The owner's resource on the rows of a task's labels, dependencies and links, of a
/// memory's files, and on vectors and their chunks, added on every node (each has its own copy
/// of the extension's tables, whose shape Citus plans the node's statements by) where it is
/// missing: before [`WIDEN`], and on each call for a node added since.
const LINK_COLUMNS: &str = "DO $$ DECLARE t text; BEGIN \
    FOREACH t IN ARRAY ARRAY['mem_task_deps', 'mem_task_labels', 'mem_task_messages', \
                             'agentmem_private.mem_memory_files', 'mem_embeddings', \
                             'agentmem_private.mem_vec_chunks', 'mem_working_memory'] LOOP \
      IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute WHERE attrelid = CAST(t AS regclass) \
                       AND attname = 'resource_id' AND NOT attisdropped) THEN \
        EXECUTE pg_catalog.format('ALTER TABLE %s ADD COLUMN resource_id TEXT', \
                                  CAST(t AS regclass)); \
      END IF; \
    END LOOP; END $$";

/// The extension's functions as a distributed database needs them, on every node: the trigger
/// function that forgets the vectors of a deleted memory or message names their resource (so
/// that from a shard it deletes in the colocated one), and no function forces generic plans
/// (Citus sends a statement to one shard only when it plans it knowing the resource, and
/// cannot plan some statements at all with their parameters unknown). Replaced where the
/// extension put them; Citus would refuse to send the change of an extension's function, and
/// refuses it on a worker unless it is not to be sent.
const NODE_FUNCTIONS: &str = "DO $$ \
    DECLARE s text; f regprocedure; \
      sending text := pg_catalog.current_setting('citus.enable_ddl_propagation'); \
    BEGIN \
    PERFORM pg_catalog.set_config('citus.enable_ddl_propagation', 'off', true); \
    SELECT n.nspname INTO STRICT s FROM pg_catalog.pg_proc p \
      JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
      JOIN pg_catalog.pg_depend d ON d.objid = p.oid AND d.deptype = 'e' \
      JOIN pg_catalog.pg_extension x ON x.oid = d.refobjid AND x.extname = 'agentmem' \
      WHERE p.proname = 'mem__forget_vectors'; \
    EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.mem__forget_vectors() \
      RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN DELETE FROM mem_embeddings \
      WHERE kind = TG_ARGV[0] AND owner_id = OLD.id AND resource_id = OLD.resource_id; \
      RETURN NULL; END $f$', s); \
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p \
      JOIN pg_catalog.pg_depend d ON d.objid = p.oid AND d.deptype = 'e' \
      JOIN pg_catalog.pg_extension x ON x.oid = d.refobjid AND x.extname = 'agentmem' \
      WHERE p.proconfig::text LIKE '%plan_cache_mode%' LOOP \
      EXECUTE pg_catalog.format('ALTER FUNCTION %s RESET plan_cache_mode', f); \
    END LOOP; \
    PERFORM pg_catalog.set_config('citus.enable_ddl_propagation', sending, true); \
    END $$";

/// Tables every node reads whole: no resource of their own.
const REFERENCE: &[&str] = &[
    "agentmem_private.mem_idx_layout",
    "agentmem_private.mem_schema_version",
];

/// Tables split by `resource_id`, the first the colocation group of the rest.
const DISTRIBUTED: &[&str] = &[
    "mem_threads",
    "mem_messages",
    "mem_compactions",
    "agentmem_private.mem_idx_meta",
    "agentmem_private.mem_idx_segments",
    "agentmem_private.mem_idx_pages",
    "agentmem_private.mem_idx_delta",
    "mem_tasks",
    "mem_task_deps",
    "mem_task_labels",
    "mem_task_messages",
    "mem_memories",
    "agentmem_private.mem_memory_files",
    "mem_embeddings",
    "agentmem_private.mem_vec_chunks",
    "mem_graph_nodes",
    "mem_graph_edges",
    "agentmem_private.mem_graph_closure",
    "mem_graph_settings",
    "agentmem_private.mem_graph_hubs",
    "mem_graph_refs",
    "mem_code_chunks",
    "mem_items",
    "mem_om_records",
    "mem_working_memory",
    "mem_observer_sessions",
    "mem_observer_files",
    "mem_observer_patterns",
    "mem_observer_errors",
    "mem_observer_pairs",
    "mem_observer_events",
    "mem_observer_notes",
];

/// Moves a worker's sequences — those that number the distributed tables' rows — to the
/// range of its group (group `g` numbers from `g << 48`; the coordinator is group 0 and keeps
/// the numbers it gave), unless they are in it already: every node numbers its inserts
/// without asking another, and a number stays unique in the cluster. Run on every worker.
/// One row (run_command_on_workers wants one): how many sequences moved.
const SEQUENCE_RANGES: &str = "SELECT count(pg_catalog.setval(CAST(q.s AS regclass), g.start, false)) \
    FROM (VALUES ('mem_messages_seq_seq'), ('agentmem_private.mem_idx_segments_seg_no_seq'), \
                 ('agentmem_private.mem_idx_pages_id_seq'), ('mem_tasks_seq_seq'), \
                 ('mem_task_deps_seq_seq'), ('mem_memories_seq_seq'), \
                 ('mem_embeddings_seq_seq'), ('mem_graph_nodes_seq_seq'), \
                 ('mem_graph_edges_seq_seq'), ('mem_graph_refs_seq_seq'), \
                 ('mem_code_chunks_seq_seq'), ('mem_items_seq_seq'), ('mem_om_records_seq_seq'), \
                 ('mem_observer_sessions_seq_seq'), ('mem_observer_files_seq_seq'), \
                 ('mem_observer_patterns_seq_seq'), ('mem_observer_errors_seq_seq'), \
                 ('mem_observer_pairs_seq_seq'), ('mem_observer_events_seq_seq'), \
                 ('mem_observer_notes_seq_seq')) AS q (s), \
         (SELECT CAST(groupid AS bigint) << 48 AS start FROM pg_catalog.pg_dist_local_group) AS g \
    WHERE g.start > 0 \
      AND coalesce(pg_catalog.pg_sequence_last_value(CAST(q.s AS regclass)), 0) < g.start";

/// The function a call is handed over through, sent by its first argument (the resource)
/// to the node holding the colocated shards; forced, so that it is sent from within a
/// transaction or another function too, and every statement it runs must then stay on that
/// resource's shards.
const HANDOVER: &str = "mem__delegate(text,text,text)";

/// `mem_distribute()`: turns this database into the distributed layout, once; a second
/// call changes nothing. Returns `{"changed": …, "distributed": [...], "reference": [...]}`.
pub(crate) fn distribute(conn: &mut dyn Conn) -> Result<String> {
    if conn.dialect() != Dialect::Postgres {
        return Err(Error::invalid(
            "mem_distribute",
            "needs Postgres with Citus (this database is SQLite)",
        ));
    }
    let citus = conn.query_value(
        "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus'",
        &[],
    )?;
    if citus.is_none() {
        return Err(Error::invalid(
            "mem_distribute",
            "needs the Citus extension in this database (CREATE EXTENSION citus)",
        ));
    }
    let coordinator = conn.query_value("SELECT pg_catalog.citus_is_coordinator()", &[])?;
    if coordinator.and_then(|v| v.as_i64()) != Some(1) {
        return Err(Error::invalid(
            "mem_distribute",
            "must run on the Citus coordinator",
        ));
    }
    let changed = !layout::distributed(conn)?;
    // Every call, so that a node added since gets them; first, before this transaction
    // holds locks on the workers that their own transactions would wait for.
    conn.execute_batch(LINK_COLUMNS)?;
    on_workers(conn, LINK_COLUMNS, "its link columns")?;
    conn.execute_batch(NODE_FUNCTIONS)?;
    on_workers(conn, NODE_FUNCTIONS, "the extension's functions as a cluster runs them")?;
    if changed {
        refuse_orphans(conn)?;
        if !layout::by_resource(conn)? {
            crate::data::indexes::partition(conn, Some("resource"))?;
        }
        layout::set_distributed(conn)?;
        conn.execute_batch(
            "SELECT pg_catalog.set_config('citus.enable_unsafe_triggers', 'on', true); \
             SELECT pg_catalog.set_config('citus.multi_shard_modify_mode', 'sequential', true)",
        )?;
        conn.execute_batch(WIDEN)?;
        conn.execute_batch(LEAD_WITH_RESOURCE)?;
        // Citus copies the rows into the shards, whose triggers would book them again.
        switch_triggers(conn, "DISABLE")?;
        for table in REFERENCE {
            conn.execute(
                "SELECT pg_catalog.create_reference_table(CAST(?1 AS regclass))",
                &[Value::from(*table)],
            )?;
        }
        for (i, table) in DISTRIBUTED.iter().enumerate() {
            // The first starts a colocation group of its own, the others join it.
            let group = if i == 0 { "none" } else { DISTRIBUTED[0] };
            conn.execute(
                "SELECT pg_catalog.create_distributed_table(CAST(?1 AS regclass), 'resource_id', \
                   colocate_with => ?2)",
                &[Value::from(*table), Value::from(group)],
            )?;
        }
        switch_triggers(conn, "ENABLE")?;
        // The rows were copied to the shards; the coordinator's copies are dead weight.
        for table in REFERENCE.iter().chain(DISTRIBUTED) {
            conn.execute(
                "SELECT pg_catalog.truncate_local_data_after_distributing_table(CAST(?1 AS regclass))",
                &[Value::from(*table)],
            )?;
        }
        conn.execute(
            "SELECT pg_catalog.create_distributed_function(CAST(?1 AS regprocedure), '$1', \
               colocate_with => ?2, force_delegation => true)",
            &[Value::from(HANDOVER), Value::from(DISTRIBUTED[0])],
        )?;
    }
    on_workers(conn, SEQUENCE_RANGES, "its range of row numbers")?;
    Ok(json!({
        "changed": changed,
        "distributed": DISTRIBUTED,
        "reference": REFERENCE,
    })
    .to_string())
}

/// Runs `command` on every worker; `what` names what a worker could not get when it fails
/// (run_command_on_workers reports a worker's failure in its rows, not as an error).
fn on_workers(conn: &mut dyn Conn, command: &str, what: &str) -> Result<()> {
    let failed = conn.query(
        "SELECT nodeport, result FROM pg_catalog.run_command_on_workers(?1) WHERE NOT success",
        &[Value::from(command)],
    )?;
    match failed.into_iter().next() {
        None => Ok(()),
        Some(row) => {
            let mut row = row.into_iter();
            Err(Error::invalid(
                "mem_distribute",
                format!(
                    "could not give the worker on port {} {what}: {}",
                    row.next().and_then(|v| v.as_i64()).unwrap_or_default(),
                    row.next().and_then(Value::into_string).unwrap_or_default()
                ),
            ))
        }
    }
}

/// Rows that would have no node to live on, counted, and what the refusal says of them: a
/// task without a resource, and the working memory of a thread that is gone.
const ORPHANS: &[(&str, &str)] = &[
    (
        "SELECT count(*) FROM mem_tasks WHERE resource_id IS NULL",
        "task(s) have no resource_id: a task lives on its resource's node (create them again \
         with options.resource_id, or delete them)",
    ),
    (
        "SELECT count(*) FROM mem_working_memory w WHERE scope_key LIKE 'thread:%' \
         AND NOT EXISTS (SELECT 1 FROM mem_threads t WHERE w.scope_key = 'thread:' || t.id)",
        "working memories belong to threads that no longer exist: a working memory lives on \
         its thread's resource's node (delete them, or write them under resource:<id>)",
    ),
];

/// Refuses to distribute while [`ORPHANS`] exist.
fn refuse_orphans(conn: &mut dyn Conn) -> Result<()> {
    for (count, why) in ORPHANS {
        let n = conn
            .query_value(count, &[])?
            .and_then(|v| v.as_i64())
            .unwrap_or(0);
        if n > 0 {
            return Err(Error::invalid("mem_distribute", format!("{n} {why}")));
        }
    }
    Ok(())
}

/// Disables or enables the user triggers of the distributed tables (on their shards too).
/// One statement per call: Citus sends a table's DDL to its shards as the statement's text.
fn switch_triggers(conn: &mut dyn Conn, how: &str) -> Result<()> {
    for t in DISTRIBUTED {
        conn.execute_batch(&format!("ALTER TABLE {t} {how} TRIGGER USER"))?;
    }
    Ok(())
}
