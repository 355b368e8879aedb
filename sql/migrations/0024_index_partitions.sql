-- The search index partitioned by resource (core/src/search/partition.rs, docs/scale-out.md):
-- every mem_idx_* row names the resource whose index it belongs to ('' for a namespace's one
-- shared index, the default), so a database can keep one index per namespace and resource —
-- what a cluster sharded by resource needs, each resource's index beside its rows. The
-- existing rows are the shared indexes' and stay where they are.

@postgres ALTER TABLE mem_idx_meta ADD COLUMN resource_id TEXT NOT NULL DEFAULT '';
@postgres ALTER TABLE mem_idx_meta DROP CONSTRAINT mem_idx_meta_pkey;
@postgres ALTER TABLE mem_idx_meta ADD PRIMARY KEY (ns, resource_id);
@sqlite CREATE TEMP TABLE mem__idx_meta_copy AS SELECT ns, index_uuid, generation FROM mem_idx_meta;
@sqlite DROP TABLE mem_idx_meta;
@sqlite CREATE TABLE mem_idx_meta (ns TEXT NOT NULL, index_uuid TEXT NOT NULL, generation BIGINT NOT NULL DEFAULT 0, resource_id TEXT NOT NULL DEFAULT '', PRIMARY KEY (ns, resource_id));
@sqlite INSERT INTO mem_idx_meta (ns, index_uuid, generation) SELECT ns, index_uuid, generation FROM temp.mem__idx_meta_copy;
@sqlite DROP TABLE temp.mem__idx_meta_copy;

@postgres ALTER TABLE mem_idx_delta ADD COLUMN resource_id TEXT NOT NULL DEFAULT '';
@postgres ALTER TABLE mem_idx_delta DROP CONSTRAINT mem_idx_delta_pkey;
@postgres ALTER TABLE mem_idx_delta ADD PRIMARY KEY (ns, resource_id, doc);
@sqlite CREATE TEMP TABLE mem__idx_delta_copy AS SELECT ns, doc, ver, len, created, old_seg, old_ord, old_len, terms, old_terms FROM mem_idx_delta;
@sqlite DROP TABLE mem_idx_delta;
@sqlite CREATE TABLE mem_idx_delta (ns TEXT NOT NULL, doc BIGINT NOT NULL, ver BIGINT NOT NULL, len BIGINT, created BIGINT, old_seg BIGINT, old_ord BIGINT, old_len BIGINT, terms BLOB, old_terms BLOB, resource_id TEXT NOT NULL DEFAULT '', PRIMARY KEY (ns, resource_id, doc));
@sqlite INSERT INTO mem_idx_delta (ns, doc, ver, len, created, old_seg, old_ord, old_len, terms, old_terms) SELECT ns, doc, ver, len, created, old_seg, old_ord, old_len, terms, old_terms FROM temp.mem__idx_delta_copy;
@sqlite DROP TABLE temp.mem__idx_delta_copy;

-- Segments and pages are found by number (unique across partitions); the column lets a
-- sharded database find the shard that holds them.
ALTER TABLE mem_idx_segments ADD COLUMN resource_id TEXT NOT NULL DEFAULT '';
DROP INDEX mem_idx_segments_ns;
CREATE INDEX mem_idx_segments_ns ON mem_idx_segments (ns, resource_id, max_key);
ALTER TABLE mem_idx_pages ADD COLUMN resource_id TEXT NOT NULL DEFAULT '';

-- How the database partitions its indexes: no row, one shared index per namespace; a row
-- with by_resource = 1, one index per namespace and resource. Changed only by
-- mem_index_partition(), which rebuilds every index in the new layout.
CREATE TABLE mem_idx_layout (
  one          INTEGER PRIMARY KEY CHECK (one = 1),
  by_resource  INTEGER NOT NULL CHECK (by_resource IN (0, 1)),
  -- Set by mem_distribute(): the tables are split by resource on a Citus cluster, and their
  -- keys hold per resource.
  distributed  INTEGER NOT NULL DEFAULT 0 CHECK (distributed IN (0, 1))
);

-- A document's resource names its index: it does not change.
@refuse mem_om_records resource_id : mem_om_records.resource_id cannot change: it names the search index of the record
@refuse mem_code_chunks resource_id : mem_code_chunks.resource_id cannot change: it names the search index of the chunk

-- The delete triggers of tasks, memories and code chunks pass the row's resource (SQLite).
@triggers
