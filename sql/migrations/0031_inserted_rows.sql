-- SQLite: the insert trigger of mem_messages writes the whole new row to
-- mem__message_inserted, not its key alone, so that its handler completes the row without
-- reading it back. Postgres' trigger reads NEW, and is made again unchanged.
@triggers
