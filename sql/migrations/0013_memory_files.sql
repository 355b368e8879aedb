-- Which memories name which file (their related_files), so that recall finds the memories
-- about a file and about its graph neighbours by key instead of reading every memory's JSON.
-- Derived: written only by the memory triggers (plain SQL on mem_memories keeps it exact).

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
