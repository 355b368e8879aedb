-- Every index of mem_messages is written by every message, and the one on created_at alone
-- served no query of agentmem's: threads and resources read their messages through
-- (thread_id, …) and (resource_id, created_at, token_count), and a search's time filter is
-- applied to the rows its other filters chose. Writing it was 2–3% of a message's
-- instructions on SQLite (benches/results/ingest-2026-12-07-created-index.md). Only
-- mem_stats' daily counts over the whole database read it, and they read each message's row
-- for its token count anyway; they scan the table now.
DROP INDEX IF EXISTS mem_messages_created;
