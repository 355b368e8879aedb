-- Nothing one tenant does changes what another has, and every table holds what the other
-- database would (docs/security.md).
--
-- Packed vectors are kept per width: a model's loose chunk is numbered by its dimensions,
-- negated, so vectors of another width (another tenant's) never share or hide a chunk.
UPDATE mem_vec_chunks SET chunk = -dims WHERE chunk = 0;
UPDATE mem_embeddings SET chunk = -dims WHERE chunk = 0;

-- Identities that other rows refer to do not change under them.
@refuse mem_graph_nodes id : mem_graph_nodes.id cannot change: edges, the closure and memories refer to it (remove the node and upsert it again)
@refuse mem_graph_nodes resource_id : mem_graph_nodes.resource_id cannot change: its edges stay within the resource
@refuse mem_compactions thread_id : mem_compactions.thread_id cannot change: a compaction belongs to the thread of its messages
@sqlite CREATE TRIGGER mem_compactions_thread_exists BEFORE INSERT ON mem_compactions FOR EACH ROW WHEN NOT EXISTS (SELECT 1 FROM mem_threads WHERE id = NEW.thread_id) BEGIN SELECT RAISE(ABORT, 'mem_compactions.thread_id: no such thread (SQLite checks the foreign key Postgres has, whatever PRAGMA foreign_keys says)'); END;
@refuse mem_memories id : mem_memories.id cannot change: its vectors, relations and supersede links refer to it
@refuse mem_memories resource_id : mem_memories.resource_id cannot change: its relations and supersede links stay within the resource
@refuse mem_embeddings kind : mem_embeddings.kind cannot change: a vector belongs to its owner (set the vector of the other owner instead)
@refuse mem_embeddings owner_id : mem_embeddings.owner_id cannot change: a vector belongs to its owner (set the vector of the other owner instead)

-- No secret is stored in any text of a memory, whoever writes it (agentmem's functions scan
-- and refuse or redact first; plain SQL is refused here).
@sqlite CREATE TRIGGER mem__memory_secrets_insert_trg AFTER INSERT ON mem_memories FOR EACH ROW BEGIN SELECT mem__memory_secrets(NEW.seq); END;
@sqlite CREATE TRIGGER mem__memory_secrets_update_trg AFTER UPDATE OF content, tags, related_files, related_modules, session_id, commit_sha, citation_text, relations ON mem_memories FOR EACH ROW BEGIN SELECT mem__memory_secrets(NEW.seq); END;
@postgres CREATE TRIGGER mem__memory_secrets_trg AFTER INSERT OR UPDATE OF content, tags, related_files, related_modules, session_id, commit_sha, citation_text, relations ON mem_memories FOR EACH ROW EXECUTE FUNCTION mem__memory_secrets();

-- SQLite enforces no column type: every column of a documented table gets the type check
-- Postgres gives it, and no text holds U+0000 (Postgres' text cannot).
@types mem_threads id:text resource_id:text title:text? metadata:object created_at:int updated_at:int next_message_index:int message_count:int token_count:int state:text agent_id:text? user_id:text?
@types mem_messages id:text thread_id:text resource_id:text? role:text raw_content:text search_text:text? injection_text:text? summary:text? compaction_level:int task_id:text? message_index:int? token_count:int? created_at:int metadata:object
@types mem_compactions id:text thread_id:text resource_id:text? start_index:int end_index:int message_count:int summary:text original_message_ids:array created_at:int
@types mem_tasks id:text title:text description:text? status:text priority:int type:text assignee:text? session_id:text? created_at:int updated_at:int closed_at:int? close_reason:text? summary:text? compaction_level:int compacted_at:int? original_content:text? metadata:object defer_until:int? open_blockers:int blocked_parents:int is_blocked:int resource_id:text?
@types mem_task_deps task_id:text depends_on_id:text type:text created_at:int
@types mem_task_labels task_id:text label:text
@types mem_task_messages task_id:text message_id:text relation:text created_at:int
@types mem_om_records id:text lookup_key:text scope:text thread_id:text? resource_id:text generation:int is_active:int origin_type:text active_observations:text observation_tokens:int buffered_chunks:array last_observed_at:int? observed_message_ids:array last_reflection_at:int? total_tokens_observed:int last_buffered_at_tokens:int last_buffered_at_time:int? is_observing:int is_reflecting:int is_buffering_observation:int is_buffering_reflection:int config:object lock_owner_id:text? lock_operation_id:text? lock_expires_at:int? last_heartbeat_at:int? created_at:int updated_at:int buffered_reflection:text? buffered_reflection_base:text?
@types mem_working_memory scope_key:text content:text updated_at:int
@types mem_memories id:text resource_id:text type:text content:text confidence:real tags:array related_files:array related_modules:array scope:text source:text session_id:text? commit_sha:text? relations:array decay_half_life_days:real? needs_review:int user_verified:int pinned:int deprecated:int deprecated_at:int? superseded_by:text? stale_at:int? access_count:int accesses_since_correction:int last_accessed_at:int citation_text:text? target_node_id:text? created_at:int updated_at:int
@types mem_embeddings kind:text owner_id:text model:text dims:int vector:blob chunk:int? created_at:int
@types mem_graph_nodes id:text resource_id:text type:text label:text file_path:text? language:text? start_line:int? end_line:int? layer:int source:text confidence:real content_hash:text? metadata:object created_at:int updated_at:int stale_at:int?
@types mem_graph_edges id:text from_id:text to_id:text resource_id:text type:text layer:int weight:real source:text confidence:real metadata:object created_at:int updated_at:int stale_at:int? valid_at:int? invalid_at:int?
@types mem_graph_settings resource_id:text max_depth:int hub_in_degree:int updated_at:int
