-- Postgres: mem_message_add writes the thread's counters and its message in one statement,
-- and indexes the message itself; the message insert trigger lets that row pass
-- (mem__adding(id), in its condition) instead of being called for nothing.
@triggers
