-- Observational memory (seed 000 "Production Implementation Details", seed 001 resource scope)
-- and working memory. One active generation per lookup key; reflections add generations and
-- keep the old ones as history.

CREATE TABLE mem_om_records (
  seq                       @ROWID,
  id                        TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  lookup_key                TEXT NOT NULL,
  scope                     TEXT NOT NULL CHECK (scope IN ('thread', 'resource')),
  thread_id                 TEXT,
  resource_id               TEXT NOT NULL,
  generation                BIGINT NOT NULL DEFAULT 0,
  is_active                 INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
  origin_type               TEXT NOT NULL DEFAULT 'initialization'
                              CHECK (origin_type IN ('initialization', 'observation', 'reflection')),
  active_observations       TEXT NOT NULL DEFAULT '',
  observation_tokens        BIGINT NOT NULL DEFAULT 0,
  -- JSON array of chunks: {content, currentTask, suggestedResponse, threadId, messageIds,
  -- messageTokens, createdAt}, oldest first.
  buffered_chunks           @JSON NOT NULL DEFAULT '[]',
  -- Cursor: messages created at or after it are unobserved unless listed in observed_message_ids.
  last_observed_at          BIGINT,
  observed_message_ids      @JSON NOT NULL DEFAULT '[]',
  last_reflection_at        BIGINT,
  total_tokens_observed     BIGINT NOT NULL DEFAULT 0,
  last_buffered_at_tokens   BIGINT NOT NULL DEFAULT 0,
  last_buffered_at_time     BIGINT,
  is_observing              INTEGER NOT NULL DEFAULT 0,
  is_reflecting             INTEGER NOT NULL DEFAULT 0,
  is_buffering_observation  INTEGER NOT NULL DEFAULT 0,
  is_buffering_reflection   INTEGER NOT NULL DEFAULT 0,
  config                    @JSON NOT NULL DEFAULT '{}',
  lock_owner_id             TEXT,
  lock_operation_id         TEXT,
  lock_expires_at           BIGINT,
  last_heartbeat_at         BIGINT,
  created_at                BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at                BIGINT NOT NULL DEFAULT (mem_now())
);
CREATE UNIQUE INDEX mem_om_records_active ON mem_om_records (lookup_key) WHERE is_active = 1;
CREATE INDEX mem_om_records_history ON mem_om_records (lookup_key, generation);
CREATE INDEX mem_om_records_resource ON mem_om_records (resource_id);

CREATE TABLE IF NOT EXISTS mem_working_memory (
  scope_key   TEXT PRIMARY KEY,
  content     TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);
