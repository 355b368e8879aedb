-- The observer's log (docs/observer.md): an event changes the session's scratchpad in the
-- connection's memory and is appended here, one row per event; the session's row and the
-- scratchpad tables catch up at each checkpoint (every 256 events, at finalize, or by
-- mem_session_checkpoint), writing each changed row once. A crash loses nothing a commit
-- saved: a connection that does not hold the scratchpad reads the row and the tables and
-- replays the log.

CREATE TABLE mem_observer_events (
  seq          @ROWID,
  resource_id  TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  -- The session's event number.
  n            BIGINT NOT NULL,
  -- The same for every event of one call: a connection uses the scratchpad it holds only
  -- while the log ends with the token it wrote.
  token        BIGINT NOT NULL,
  -- The event as the observer keeps it: the call already reduced to its paths, pattern and
  -- test, every text cut to its limit.
  event        @JSON NOT NULL,
  UNIQUE (session_id, n)
);

-- A token that changes at every checkpoint: a connection uses the scratchpad it holds only
-- while the row still carries the token it wrote.
ALTER TABLE mem_observer_sessions ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;

@types mem_observer_sessions id:text resource_id:text session_type:text thread_id:text? status:text outcome:text? step:int events:int steps_completed:int input_tokens:int max_step_tokens:int external_step:int? self_corrections:int recent:array scratch_rows:int max_scratch_rows:int evicted:int early:array result:object? synthesis:text? started_at:int updated_at:int finalized_at:int? rev:int
@types mem_observer_events resource_id:text session_id:text n:int token:int event:object
