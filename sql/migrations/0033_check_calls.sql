-- SQLite: the type checks of every table again, each trigger now one call of
-- mem__check_types (insert) or mem__check_changes (update) with the table's column list,
-- where it spelled out a CASE of every column. The CASEs were most of the schema's text:
-- every connection parses the schema when it first reads it, and every statement compiles
-- the triggers it fires. JSON is still judged by SQLite's json_valid and json_type, passed
-- to the call. The same errors for the same rows. Postgres has nothing to change.
@sqlite @types mem_code_chunks id:text resource_id:text file_id:text node_id:text? file_path:text start_line:int end_line:int content:text token_count:int created_at:int
@sqlite @types mem_compactions id:text thread_id:text resource_id:text? start_index:int end_index:int message_count:int summary:text original_message_ids:array created_at:int
@sqlite @types mem_embeddings kind:text owner_id:text model:text dims:int vector:blob chunk:int? created_at:int
@sqlite @types mem_graph_edges id:text from_id:text to_id:text resource_id:text type:text layer:int weight:real source:text confidence:real metadata:object created_at:int updated_at:int stale_at:int? valid_at:int? invalid_at:int?
@sqlite @types mem_graph_nodes id:text resource_id:text type:text label:text file_path:text? language:text? start_line:int? end_line:int? layer:int source:text confidence:real content_hash:text? metadata:object created_at:int updated_at:int stale_at:int?
@sqlite @types mem_graph_refs resource_id:text file_id:text from_id:text kind:text ref_no:int target:text rank:int line:int to_id:text?
@sqlite @types mem_graph_settings resource_id:text max_depth:int hub_in_degree:int updated_at:int
@sqlite @types mem_items id:text resource_id:text namespace:text key:text value:object fields:array? created_at:int updated_at:int ttl_minutes:real? expires_at:int?
@sqlite @types mem_memories id:text resource_id:text type:text content:text confidence:real tags:array related_files:array related_modules:array scope:text source:text session_id:text? commit_sha:text? relations:array decay_half_life_days:real? needs_review:int user_verified:int pinned:int deprecated:int deprecated_at:int? superseded_by:text? stale_at:int? access_count:int accesses_since_correction:int last_accessed_at:int citation_text:text? target_node_id:text? created_at:int updated_at:int
@sqlite @types mem_messages id:text thread_id:text resource_id:text?~ role:text raw_content:text search_text:text?~ injection_text:text?~ summary:text? compaction_level:int task_id:text?~ message_index:int?~ token_count:int?~ created_at:int metadata:object
@sqlite @types mem_observer_errors resource_id:text session_id:text fingerprint:text tool:text sample:text count:int first_step:int last_step:int resolved_step:int?
@sqlite @types mem_observer_events resource_id:text session_id:text n:int token:int event:object
@sqlite @types mem_observer_files resource_id:text session_id:text path:text reads:int edits:int config:int left_for_search:int first_step:int last_step:int first_event:int last_event:int
@sqlite @types mem_observer_notes resource_id:text session_id:text class:text step:int text:text data:object
@sqlite @types mem_observer_pairs resource_id:text session_id:text file_a:text file_b:text count:int last_step:int
@sqlite @types mem_observer_patterns resource_id:text session_id:text kind:text pattern:text count:int first_step:int last_step:int first_event:int
@sqlite @types mem_observer_sessions id:text resource_id:text session_type:text thread_id:text? status:text outcome:text? step:int events:int steps_completed:int input_tokens:int max_step_tokens:int external_step:int? self_corrections:int recent:array scratch_rows:int max_scratch_rows:int evicted:int early:array result:object? synthesis:text? started_at:int updated_at:int finalized_at:int? rev:int
@sqlite @types mem_om_records id:text lookup_key:text scope:text thread_id:text? resource_id:text generation:int is_active:int origin_type:text active_observations:text observation_tokens:int buffered_chunks:array last_observed_at:int? observed_message_ids:array last_reflection_at:int? total_tokens_observed:int last_buffered_at_tokens:int last_buffered_at_time:int? is_observing:int is_reflecting:int is_buffering_observation:int is_buffering_reflection:int config:object lock_owner_id:text? lock_operation_id:text? lock_expires_at:int? last_heartbeat_at:int? created_at:int updated_at:int buffered_reflection:text? buffered_reflection_base:text?
@sqlite @types mem_task_deps task_id:text depends_on_id:text type:text created_at:int
@sqlite @types mem_task_labels task_id:text label:text
@sqlite @types mem_task_messages task_id:text message_id:text relation:text created_at:int
@sqlite @types mem_tasks id:text title:text description:text? status:text priority:int type:text assignee:text? session_id:text? created_at:int updated_at:int closed_at:int? close_reason:text? summary:text? compaction_level:int compacted_at:int? original_content:text? metadata:object defer_until:int? open_blockers:int blocked_parents:int is_blocked:int resource_id:text?
@sqlite @types mem_threads id:text resource_id:text title:text? metadata:object created_at:int updated_at:int next_message_index:int message_count:int token_count:int state:text agent_id:text? user_id:text?
@sqlite @types mem_working_memory scope_key:text content:text updated_at:int
