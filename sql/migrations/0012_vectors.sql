-- Client vectors (docs/vectors.md): one float32 vector per (owner, model), from the client's
-- embedding model, and their exact top-k search. The rows are the truth; the search reads
-- them packed: every 256 new vectors of a model are copied into one chunk row (their seqs and
-- their floats, contiguous), so a scan reads a few large blobs instead of a row per vector.
-- The row triggers keep the chunks exact for plain SQL too.

CREATE TABLE mem_embeddings (
  seq         @ROWID,
  kind        TEXT NOT NULL CHECK (kind IN ('memory', 'message')),
  owner_id    TEXT NOT NULL,
  model       TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
  dims        INTEGER NOT NULL CHECK (dims BETWEEN 1 AND 8192),
  vector      @BLOB NOT NULL,
  -- The chunk the vector is packed in (derived; NULL until packed).
  chunk       BIGINT,
  created_at  BIGINT NOT NULL DEFAULT (mem_now()),
  UNIQUE (kind, owner_id, model)
);
CREATE INDEX mem_embeddings_unpacked ON mem_embeddings (model, chunk, seq);
CREATE INDEX mem_embeddings_recent ON mem_embeddings (model, seq);

CREATE TABLE mem_vec_chunks (
  model    TEXT NOT NULL,
  chunk    BIGINT NOT NULL,
  dims     INTEGER NOT NULL,
  -- The largest seq when the chunk was packed: rows above it are the model's new ones.
  upto     BIGINT NOT NULL,
  -- The vectors' seqs (int64 little-endian) and floats (float32 little-endian), in order.
  seqs     @BLOB NOT NULL,
  vectors  @BLOB NOT NULL,
  PRIMARY KEY (model, chunk)
);

@derived mem_embeddings chunk : mem_embeddings.chunk is kept by agentmem: write the vector instead

@sqlite CREATE TRIGGER mem__embedding_insert_trg AFTER INSERT ON mem_embeddings FOR EACH ROW BEGIN SELECT mem__embedding_insert(NEW.seq); END;
@sqlite CREATE TRIGGER mem__embedding_update_trg AFTER UPDATE OF vector, dims, model ON mem_embeddings FOR EACH ROW BEGIN SELECT mem__embedding_update(NEW.seq, OLD.model, OLD.chunk); END;
@sqlite CREATE TRIGGER mem__embedding_delete_trg AFTER DELETE ON mem_embeddings FOR EACH ROW BEGIN SELECT mem__embedding_delete(OLD.seq, OLD.model, OLD.chunk); END;
@postgres CREATE TRIGGER mem__embedding_insert_trg AFTER INSERT ON mem_embeddings FOR EACH ROW EXECUTE FUNCTION mem__embedding_insert();
@postgres CREATE TRIGGER mem__embedding_update_trg AFTER UPDATE OF vector, dims, model ON mem_embeddings FOR EACH ROW EXECUTE FUNCTION mem__embedding_update();
@postgres CREATE TRIGGER mem__embedding_delete_trg AFTER DELETE ON mem_embeddings FOR EACH ROW EXECUTE FUNCTION mem__embedding_delete();

@types mem_embeddings kind:text owner_id:text model:text dims:int created_at:int

-- An owner's vectors go with it.
@sqlite CREATE TRIGGER mem_memories_forget_vectors AFTER DELETE ON mem_memories FOR EACH ROW BEGIN DELETE FROM mem_embeddings WHERE kind = 'memory' AND owner_id = OLD.id; END;
@sqlite CREATE TRIGGER mem_messages_forget_vectors AFTER DELETE ON mem_messages FOR EACH ROW BEGIN DELETE FROM mem_embeddings WHERE kind = 'message' AND owner_id = OLD.id; END;
@postgres CREATE FUNCTION mem__forget_vectors() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM mem_embeddings WHERE kind = TG_ARGV[0] AND owner_id = OLD.id; RETURN NULL; END $$;
@postgres CREATE TRIGGER mem_memories_forget_vectors AFTER DELETE ON mem_memories FOR EACH ROW EXECUTE FUNCTION mem__forget_vectors('memory');
@postgres CREATE TRIGGER mem_messages_forget_vectors AFTER DELETE ON mem_messages FOR EACH ROW EXECUTE FUNCTION mem__forget_vectors('message');
