-- SQLite: an update checks the types of the columns it sets, numbers and text by separate
-- triggers, so that the counters written with every message (the thread's, and a plain
-- INSERT's index and token count) no longer scan the row's text and JSON again. Postgres has
-- nothing to change: its columns are typed.
@types mem_threads id:text resource_id:text title:text? metadata:object created_at:int updated_at:int next_message_index:int message_count:int token_count:int state:text agent_id:text? user_id:text?
@types mem_messages id:text thread_id:text resource_id:text? role:text raw_content:text search_text:text? injection_text:text? summary:text? compaction_level:int task_id:text? message_index:int? token_count:int? created_at:int metadata:object
