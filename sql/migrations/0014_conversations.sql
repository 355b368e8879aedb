-- Conversations (docs/conversations.md). Threads name the agent (and optionally the user) they
-- belong to. No index holds updated_at: every message moves it, and an index on it would
-- make each message's counter update rewrite the thread's index entries (and, in Postgres,
-- give up heap-only updates). Listing sorts the scope's threads instead. The lifecycle is
-- enforced: no message goes into a thread that is not active (the message insert trigger
-- refuses it), and the one change of state no event makes — deleted to archived — is refused
-- for plain SQL as mem_thread_archive refuses it.

ALTER TABLE mem_threads ADD COLUMN agent_id TEXT;
ALTER TABLE mem_threads ADD COLUMN user_id TEXT;
CREATE INDEX mem_threads_deleted ON mem_threads (state, resource_id);

@types mem_threads id:text resource_id:text title:text? metadata:object created_at:int updated_at:int next_message_index:int message_count:int token_count:int state:text agent_id:text? user_id:text?
@refuse mem_threads state if OLD.state = 'deleted' AND NEW.state = 'archived' : invalid transition: deleted -[archive]-> archived (mem_thread_restore reopens a deleted thread)
