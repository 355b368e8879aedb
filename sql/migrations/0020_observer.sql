-- The memory observer (docs/observer.md): a session's events kept as cheap per-session
-- analytics (the scratchpad), durable at each commit, and promoted into long-term memories
-- when the session ends. Every table carries the session's resource, so row-level security
-- is written per resource as for every other table (docs/security.md), and the cross-session
-- counts of a promotion read only the sessions the caller can see. The counters are written
-- by agentmem's calls only; a plain INSERT may start a session.

CREATE TABLE mem_observer_sessions (
  seq              @ROWID,
  id               TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  resource_id      TEXT NOT NULL,
  session_type     TEXT NOT NULL DEFAULT 'build' CHECK (session_type IN ('build', 'insights',
                     'roadmap', 'terminal', 'changelog', 'spec', 'pr_review')),
  thread_id        TEXT,
  status           TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'finalized')),
  outcome          TEXT CHECK (outcome IS NULL OR outcome IN ('success', 'failure', 'partial',
                     'abandoned')),
  -- The highest step seen; out-of-order events never move it back.
  step             BIGINT NOT NULL DEFAULT 0 CHECK (step >= 0),
  events           BIGINT NOT NULL DEFAULT 0 CHECK (events >= 0),
  steps_completed  BIGINT NOT NULL DEFAULT 0 CHECK (steps_completed >= 0),
  input_tokens     BIGINT NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  max_step_tokens  BIGINT NOT NULL DEFAULT 0 CHECK (max_step_tokens >= 0),
  -- The step of the first external (web) tool call: the trust gate's line.
  external_step    BIGINT,
  self_corrections BIGINT NOT NULL DEFAULT 0 CHECK (self_corrections >= 0),
  -- The last tool calls, newest last: [[tool, kind, [paths]], …] (at most 8).
  recent           @JSON NOT NULL DEFAULT '[]',
  -- Scratchpad rows kept for the session, and the bound past which the lowest-value go.
  scratch_rows     BIGINT NOT NULL DEFAULT 0 CHECK (scratch_rows >= 0),
  max_scratch_rows BIGINT NOT NULL DEFAULT 5000 CHECK (max_scratch_rows >= 100),
  evicted          BIGINT NOT NULL DEFAULT 0 CHECK (evicted >= 0),
  -- The in-session triggers that fired, each answered once.
  early            @JSON NOT NULL DEFAULT '[]',
  -- What mem_session_finalize answered, so that a second call answers the same.
  result           @JSON,
  -- The one LLM call of the session: asked for by finalize, answered by mem_synthesis_answer.
  synthesis        TEXT CHECK (synthesis IS NULL OR synthesis IN ('pending', 'answered')),
  started_at       BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at       BIGINT NOT NULL DEFAULT (mem_now()),
  finalized_at     BIGINT
);
CREATE INDEX mem_observer_sessions_resource ON mem_observer_sessions (resource_id, status);

-- Files the session touched.
CREATE TABLE mem_observer_files (
  seq          @ROWID,
  resource_id  TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  path         TEXT NOT NULL,
  reads        BIGINT NOT NULL DEFAULT 0 CHECK (reads >= 0),
  edits        BIGINT NOT NULL DEFAULT 0 CHECK (edits >= 0),
  config       INTEGER NOT NULL DEFAULT 0 CHECK (config IN (0, 1)),
  -- Read, then left for a search elsewhere (the next call a grep or glob): a wrong guess.
  left_for_search INTEGER NOT NULL DEFAULT 0 CHECK (left_for_search IN (0, 1)),
  first_step   BIGINT NOT NULL,
  last_step    BIGINT NOT NULL,
  -- The session's event number of the first and last access: the order within a step.
  first_event  BIGINT NOT NULL,
  last_event   BIGINT NOT NULL,
  UNIQUE (session_id, path)
);
CREATE INDEX mem_observer_files_resource ON mem_observer_files (resource_id, path);

-- Patterns the session searched for, commands it ran for tests, and the tool sequences it
-- repeated: (kind, pattern) with how often and when.
CREATE TABLE mem_observer_patterns (
  seq          @ROWID,
  resource_id  TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('grep', 'glob', 'test', 'sequence', 'web')),
  pattern      TEXT NOT NULL,
  count        BIGINT NOT NULL DEFAULT 0 CHECK (count >= 0),
  first_step   BIGINT NOT NULL,
  last_step    BIGINT NOT NULL,
  first_event  BIGINT NOT NULL,
  UNIQUE (session_id, kind, pattern)
);
CREATE INDEX mem_observer_patterns_resource ON mem_observer_patterns (resource_id, kind, pattern);

-- Errors by fingerprint (numbers, paths, hex and quoted values stripped), and the step at
-- which the same tool next succeeded.
CREATE TABLE mem_observer_errors (
  seq           @ROWID,
  resource_id   TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  fingerprint   TEXT NOT NULL,
  tool          TEXT NOT NULL,
  sample        TEXT NOT NULL,
  count         BIGINT NOT NULL DEFAULT 0 CHECK (count >= 0),
  first_step    BIGINT NOT NULL,
  last_step     BIGINT NOT NULL,
  resolved_step BIGINT,
  UNIQUE (session_id, fingerprint)
);
CREATE INDEX mem_observer_errors_resource ON mem_observer_errors (resource_id, fingerprint);

-- Files accessed close together (within the last tool calls), as ordered pairs a < b.
CREATE TABLE mem_observer_pairs (
  seq          @ROWID,
  resource_id  TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  file_a       TEXT NOT NULL,
  file_b       TEXT NOT NULL CHECK (file_a < file_b),
  count        BIGINT NOT NULL DEFAULT 0 CHECK (count >= 0),
  last_step    BIGINT NOT NULL,
  UNIQUE (session_id, file_a, file_b)
);
CREATE INDEX mem_observer_pairs_resource ON mem_observer_pairs (resource_id, file_a, file_b);

-- Moments worth a memory on their own: a self-correction or a dead end in the agent's text,
-- a token spike, a backtrack, an external reference.
CREATE TABLE mem_observer_notes (
  seq          @ROWID,
  resource_id  TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  class        TEXT NOT NULL,
  step         BIGINT NOT NULL,
  text         TEXT NOT NULL,
  data         @JSON NOT NULL DEFAULT '{}'
);
CREATE INDEX mem_observer_notes_session ON mem_observer_notes (session_id, class);

@types mem_observer_sessions id:text resource_id:text session_type:text thread_id:text? status:text outcome:text? step:int events:int steps_completed:int input_tokens:int max_step_tokens:int external_step:int? self_corrections:int recent:array scratch_rows:int max_scratch_rows:int evicted:int early:array result:object? synthesis:text? started_at:int updated_at:int finalized_at:int?
@types mem_observer_files resource_id:text session_id:text path:text reads:int edits:int config:int left_for_search:int first_step:int last_step:int first_event:int last_event:int
@types mem_observer_patterns resource_id:text session_id:text kind:text pattern:text count:int first_step:int last_step:int first_event:int
@types mem_observer_errors resource_id:text session_id:text fingerprint:text tool:text sample:text count:int first_step:int last_step:int resolved_step:int?
@types mem_observer_pairs resource_id:text session_id:text file_a:text file_b:text count:int last_step:int
@types mem_observer_notes resource_id:text session_id:text class:text step:int text:text data:object
@refuse mem_observer_sessions id : mem_observer_sessions.id cannot change: the scratchpad is keyed by it
@refuse mem_observer_sessions resource_id : mem_observer_sessions.resource_id cannot change: the scratchpad belongs to it
@derived mem_observer_sessions step,events,steps_completed,input_tokens,max_step_tokens,self_corrections,scratch_rows,evicted : the observer counters are written by mem_observe only
