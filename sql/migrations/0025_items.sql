-- The item store (docs/functions.md, "Items"): JSON values under a namespace and a key, the
-- store an agent framework keeps its long-term items in (LangGraph's BaseStore). A namespace
-- is a path of labels, stored joined by '.', which no label holds, so a namespace prefix is a
-- prefix of the text. The search index follows the rows (namespace "item"), and vectors may
-- belong to an item as to a memory. With this version an observational record's search
-- document follows its row too (the catalog's triggers, below), so plain SQL on
-- mem_om_records keeps the index exact.
CREATE TABLE mem_items (
  seq          @ROWID,
  id           TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  resource_id  TEXT NOT NULL,
  namespace    TEXT NOT NULL CHECK (namespace <> ''),
  key          TEXT NOT NULL,
  value        @JSON NOT NULL,
  -- The value's paths whose text is searched: NULL for every string of the value, [] for
  -- none.
  fields       @JSON,
  created_at   BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at   BIGINT NOT NULL DEFAULT (mem_now()),
  -- Minutes an item lives after it was written (or read, when reads refresh it); NULL for
  -- ever. An expired item is invisible, and goes at the resource's next write.
  ttl_minutes  @DOUBLE CHECK (ttl_minutes > 0),
  expires_at   BIGINT
);
CREATE UNIQUE INDEX mem_items_key ON mem_items (resource_id, namespace, key);
CREATE INDEX mem_items_expiry ON mem_items (resource_id, expires_at);

@refuse mem_items seq : mem_items.seq cannot change: it keys the search index (delete the item and put it again)
@refuse mem_items id : mem_items.id cannot change: its vectors refer to it

@types mem_items id:text resource_id:text namespace:text key:text value:object fields:array? created_at:int updated_at:int ttl_minutes:real? expires_at:int?

-- A vector may belong to an item (mem_embed_set('item', id, …)), and goes with it. SQLite
-- cannot change a CHECK in place: the table is made again with its rows, constraints and
-- checks; its row triggers come back with the catalog's, below.
-- The check is found by what it says, not by its name: a node that kept a distributed
-- database's shards named its own check apart from theirs.
@postgres DO $$ DECLARE c text; BEGIN SELECT conname INTO STRICT c FROM pg_catalog.pg_constraint WHERE conrelid = CAST('mem_embeddings' AS regclass) AND contype = 'c' AND pg_catalog.pg_get_constraintdef(oid) LIKE '%kind%memory%message%'; EXECUTE pg_catalog.format('ALTER TABLE mem_embeddings DROP CONSTRAINT %I', c); END $$;
@postgres ALTER TABLE mem_embeddings ADD CHECK (kind IN ('memory', 'message', 'item'));
@sqlite CREATE TEMP TABLE mem__embeddings_copy AS SELECT seq, kind, owner_id, model, dims, vector, chunk, created_at FROM mem_embeddings;
@sqlite DROP TABLE mem_embeddings;
@sqlite CREATE TABLE mem_embeddings (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('memory', 'message', 'item')), owner_id TEXT NOT NULL, model TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 200), dims INTEGER NOT NULL CHECK (dims BETWEEN 1 AND 8192), vector BLOB NOT NULL, chunk BIGINT, created_at BIGINT NOT NULL DEFAULT (mem_now()), UNIQUE (kind, owner_id, model));
@sqlite INSERT INTO mem_embeddings (seq, kind, owner_id, model, dims, vector, chunk, created_at) SELECT seq, kind, owner_id, model, dims, vector, chunk, created_at FROM temp.mem__embeddings_copy;
@sqlite DROP TABLE temp.mem__embeddings_copy;
@sqlite CREATE INDEX mem_embeddings_unpacked ON mem_embeddings (model, chunk, seq);
@sqlite CREATE INDEX mem_embeddings_recent ON mem_embeddings (model, seq);
@sqlite @derived mem_embeddings chunk : mem_embeddings.chunk is kept by agentmem: write the vector instead
@sqlite @refuse mem_embeddings kind : mem_embeddings.kind cannot change: a vector belongs to its owner (set the vector of the other owner instead)
@sqlite @refuse mem_embeddings owner_id : mem_embeddings.owner_id cannot change: a vector belongs to its owner (set the vector of the other owner instead)
@sqlite @types mem_embeddings kind:text owner_id:text model:text dims:int vector:blob chunk:int? created_at:int
@sqlite CREATE TRIGGER mem_items_forget_vectors AFTER DELETE ON mem_items FOR EACH ROW BEGIN DELETE FROM mem_embeddings WHERE kind = 'item' AND owner_id = OLD.id; END;
@postgres CREATE TRIGGER mem_items_forget_vectors AFTER DELETE ON mem_items FOR EACH ROW EXECUTE FUNCTION mem__forget_vectors('item');

@triggers
