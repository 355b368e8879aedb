-- The code graph's references and chunks (docs/graph.md, "The code graph"). graph_index_file
-- writes both from a file's outline, with the caller's rights, as it writes the file's nodes.

-- Every reference a file makes, resolved or not: what keeps the file's imports, calls,
-- extends and implements edges exact when another file changes. A file that gains, loses or
-- moves a definition has the references of other files to that name resolved again; one that
-- resolves to nothing keeps its row with no node, so no edge points at a symbol that is gone.
CREATE TABLE mem_graph_refs (
  seq          @ROWID,
  resource_id  TEXT NOT NULL,
  -- The file node whose outline makes the reference, and the node that makes it (the file
  -- or one of its symbols).
  file_id      TEXT NOT NULL,
  from_id      TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('imports', 'calls', 'extends', 'implements')),
  -- The reference's number in its file: the candidate paths of one import share it.
  ref_no       BIGINT NOT NULL CHECK (ref_no >= 0),
  -- A name (calls, extends, implements), or one candidate path of an import, tried in `rank`
  -- order (an import no path can satisfy keeps the module as written).
  target       TEXT NOT NULL,
  rank         BIGINT NOT NULL DEFAULT 0 CHECK (rank >= 0),
  line         BIGINT NOT NULL CHECK (line >= 1),
  -- The node it resolves to; NULL while it resolves to none.
  to_id        TEXT
);
CREATE INDEX mem_graph_refs_file ON mem_graph_refs (file_id);
CREATE INDEX mem_graph_refs_target ON mem_graph_refs (resource_id, target);
CREATE INDEX mem_graph_refs_to ON mem_graph_refs (to_id);

-- A file's code cut where its syntax allows, for search and recall: one chunk per symbol
-- (its lines without those of the symbols it holds, so no body is split or repeated) and
-- windows of the lines outside every symbol. The search index follows the rows.
CREATE TABLE mem_code_chunks (
  seq          @ROWID,
  -- The symbol's node id (so a hit leads into the graph), or a window's own id.
  id           TEXT NOT NULL UNIQUE,
  resource_id  TEXT NOT NULL,
  file_id      TEXT NOT NULL,
  -- The symbol the chunk is; NULL for a window.
  node_id      TEXT,
  file_path    TEXT NOT NULL,
  start_line   BIGINT NOT NULL CHECK (start_line >= 1),
  end_line     BIGINT NOT NULL CHECK (end_line >= start_line),
  -- A context line (the path and the enclosing symbols), then the chunk's lines.
  content      TEXT NOT NULL,
  -- Tokens of `content` (o200k_base).
  token_count  BIGINT NOT NULL CHECK (token_count >= 0),
  created_at   BIGINT NOT NULL DEFAULT (mem_now())
);
CREATE INDEX mem_code_chunks_file ON mem_code_chunks (file_id);
CREATE INDEX mem_code_chunks_resource ON mem_code_chunks (resource_id, file_path);

@refuse mem_code_chunks seq : mem_code_chunks.seq cannot change: it keys the search index (delete the chunk and insert it again)

@triggers

@types mem_graph_refs resource_id:text file_id:text from_id:text kind:text ref_no:int target:text rank:int line:int to_id:text?
@types mem_code_chunks id:text resource_id:text file_id:text node_id:text? file_path:text start_line:int end_line:int content:text token_count:int created_at:int
