-- The search engine's storage (core/src/search, docs/search.md). One engine serves several
-- document kinds; every table is keyed by a namespace ('msg' for mem_messages; 'task' and
-- 'obs' later). A document is identified by a BIGINT key (mem_messages.seq for 'msg').

-- One row per namespace: a random id of this index (part of the segment cache key) and the
-- row that flushes, merges and reindexes lock before they rewrite shared state.
CREATE TABLE mem_idx_meta (
  ns          TEXT PRIMARY KEY,
  index_uuid  TEXT NOT NULL,
  generation  BIGINT NOT NULL DEFAULT 0
);

-- Immutable segments: an fst term dictionary and block-compressed postings in one blob.
-- seg_id is random, so a cached decoded segment can never be stale.
CREATE TABLE mem_idx_segments (
  ns          TEXT NOT NULL,
  seg_id      TEXT NOT NULL,
  doc_count   BIGINT NOT NULL,
  total_len   BIGINT NOT NULL,
  byte_size   BIGINT NOT NULL,
  data        @BLOB NOT NULL,
  PRIMARY KEY (ns, seg_id)
);

-- Every live document: where it is (seg_id, or NULL while it is in the delta), its exact
-- length in tokens and created_at. Delta rows also carry their tokens (terms); a flush moves
-- them into a new segment and clears terms. ver changes on every write, so a flush never
-- moves a version it did not read.
CREATE TABLE mem_idx_docs (
  ns          TEXT NOT NULL,
  doc         BIGINT NOT NULL,
  seg_id      TEXT,
  ver         BIGINT NOT NULL,
  len         BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  terms       @BLOB,
  PRIMARY KEY (ns, doc)
);
-- Serves both the delta (seg_id IS NULL) and a segment's documents (merges).
CREATE INDEX mem_idx_docs_seg ON mem_idx_docs (ns, seg_id);

-- A document deleted or replaced while its old version sits in a segment: the segment's
-- posting is masked and its length subtracted from the statistics until a merge drops it.
CREATE TABLE mem_idx_tombstones (
  ns          TEXT NOT NULL,
  seg_id      TEXT NOT NULL,
  doc         BIGINT NOT NULL,
  len         BIGINT NOT NULL,
  PRIMARY KEY (ns, seg_id, doc)
);
