-- Thread lifecycle (seed 004): active -> archived -> deleted, with the transitions the core
-- allows. Existing threads become active.

ALTER TABLE mem_threads ADD COLUMN state TEXT NOT NULL DEFAULT 'active'
  CHECK (state IN ('active', 'archived', 'deleted'));
CREATE INDEX mem_threads_state ON mem_threads (resource_id, state);
