-- Message memory: threads, messages (three stores: raw, search, injection), compactions.
-- Neutral dialect: see core/src/schema.rs for the markers.

CREATE TABLE mem_threads (
  id                  TEXT PRIMARY KEY DEFAULT (mem_uuid7()),
  resource_id         TEXT NOT NULL,
  title               TEXT,
  metadata            @JSON NOT NULL DEFAULT '{}',
  created_at          BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at          BIGINT NOT NULL DEFAULT (mem_now()),
  -- Bookkeeping kept by the message triggers: the next message_index to hand out and
  -- running totals. Updating the counter row serialises concurrent writers of one thread.
  next_message_index  BIGINT NOT NULL DEFAULT 0,
  message_count       BIGINT NOT NULL DEFAULT 0,
  token_count         BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX mem_threads_resource ON mem_threads (resource_id, created_at);

CREATE TABLE mem_messages (
  seq               @ROWID,
  id                TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  thread_id         TEXT NOT NULL REFERENCES mem_threads (id) ON DELETE CASCADE,
  resource_id       TEXT @FILLED,
  role              TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
  raw_content       TEXT NOT NULL,
  search_text       TEXT @FILLED,
  injection_text    TEXT @FILLED,
  summary           TEXT,
  compaction_level  INTEGER NOT NULL DEFAULT 0 CHECK (compaction_level BETWEEN 0 AND 2),
  task_id           TEXT,
  message_index     BIGINT @FILLED,
  token_count       BIGINT @FILLED,
  created_at        BIGINT NOT NULL DEFAULT (mem_now()),
  metadata          @JSON NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX mem_messages_thread_index ON mem_messages (thread_id, message_index);
-- (scope, created_at, token_count): pending tokens of a thread or resource are an index range
-- sum, without reading the rows (observational memory's status on every agent step).
CREATE INDEX mem_messages_resource ON mem_messages (resource_id, created_at, token_count);
CREATE INDEX mem_messages_thread_time ON mem_messages (thread_id, created_at, token_count);
CREATE INDEX mem_messages_created ON mem_messages (created_at);
CREATE INDEX mem_messages_task ON mem_messages (task_id) WHERE task_id IS NOT NULL;

@trigger mem_messages insert mem__message_insert
-- The guard skips SQLite's own completion write (search_text is NULL only until the insert
-- trigger has filled the row; Postgres never sees it NULL).
@trigger mem_messages update(raw_content,search_text) mem__message_update if OLD.search_text IS NOT NULL
@trigger mem_messages delete mem__message_delete

CREATE TABLE mem_compactions (
  id                    TEXT PRIMARY KEY DEFAULT (mem_uuid7()),
  thread_id             TEXT NOT NULL REFERENCES mem_threads (id) ON DELETE CASCADE,
  resource_id           TEXT,
  start_index           BIGINT NOT NULL,
  end_index             BIGINT NOT NULL,
  message_count         BIGINT NOT NULL,
  summary               TEXT NOT NULL,
  original_message_ids  @JSON NOT NULL DEFAULT '[]',
  created_at            BIGINT NOT NULL DEFAULT (mem_now()),
  CHECK (end_index >= start_index)
);
CREATE INDEX mem_compactions_thread ON mem_compactions (thread_id, start_index);

-- SQLite enforces the ON DELETE CASCADE above only under PRAGMA foreign_keys = ON, which is
-- off by default; this trigger gives the same result either way.
@sqlite CREATE TRIGGER mem_threads_cascade AFTER DELETE ON mem_threads FOR EACH ROW BEGIN DELETE FROM mem_messages WHERE thread_id = OLD.id; DELETE FROM mem_compactions WHERE thread_id = OLD.id; END;
