-- Recall (docs/recall.md). Which memories name which file (their related_files), so that
-- recall finds the memories about a file and about its graph neighbors by key instead of
-- reading every memory's JSON. Derived: written only by the memory triggers (plain SQL on
-- mem_memories keeps it exact).

CREATE TABLE mem_memory_files (
  file_path   TEXT NOT NULL,
  memory_seq  BIGINT NOT NULL,
  PRIMARY KEY (file_path, memory_seq)
@sqlite ) WITHOUT ROWID;
@postgres );

@sqlite INSERT INTO mem_memory_files SELECT DISTINCT j.value, m.seq FROM mem_memories m, json_each(m.related_files) j WHERE j.type = 'text';
@postgres INSERT INTO mem_memory_files SELECT DISTINCT j.value, m.seq FROM mem_memories m, jsonb_array_elements_text(m.related_files) AS j(value);

-- The memories attached to a graph node.
CREATE INDEX mem_memories_target ON mem_memories (target_node_id);

-- The current memories of a resource (what every read returns by default) from the index
-- alone: a search filter is probed, and a resource's memories listed, without reading rows.
CREATE INDEX mem_memories_current
  ON mem_memories (resource_id, deprecated, superseded_by, stale_at, scope, type);

-- A chunk's build: a random number written with every version of the chunk, so that a search
-- can keep decoded chunks in memory by build and never read a stale one (NULL: not cached).
-- It sits before the blobs: SQLite reads a column after a large blob by walking the blob's
-- overflow pages, so the table is rebuilt rather than altered.
CREATE TABLE mem_vec_chunks_next (
  model    TEXT NOT NULL,
  chunk    BIGINT NOT NULL,
  dims     INTEGER NOT NULL,
  upto     BIGINT NOT NULL,
  build    BIGINT,
  seqs     @BLOB NOT NULL,
  vectors  @BLOB NOT NULL,
  PRIMARY KEY (model, chunk)
);
INSERT INTO mem_vec_chunks_next (model, chunk, dims, upto, seqs, vectors)
  SELECT model, chunk, dims, upto, seqs, vectors FROM mem_vec_chunks;
DROP TABLE mem_vec_chunks;
ALTER TABLE mem_vec_chunks_next RENAME TO mem_vec_chunks;
