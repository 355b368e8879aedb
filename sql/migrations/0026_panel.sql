-- The memory panel's reads (docs/ui.md), each a range of an index instead of a scan of the
-- resource's memories: its memories newest first (every state, and the review queue), the
-- memories another one superseded, and the dashboard's counts of the current memories
-- (mem_health) from the index alone. Each is one more index entry per memory written;
-- memories are written a few at a time, and read by people far more often.
CREATE INDEX mem_memories_recent ON mem_memories (resource_id, seq);
CREATE INDEX mem_memories_review ON mem_memories (resource_id, seq) WHERE needs_review = 1;
CREATE INDEX mem_memories_superseded ON mem_memories (resource_id, superseded_by)
  WHERE superseded_by IS NOT NULL;
CREATE INDEX mem_memories_health ON mem_memories (resource_id, deprecated, superseded_by,
  needs_review, stale_at, pinned, user_verified, last_accessed_at, created_at);
