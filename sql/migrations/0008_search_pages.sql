-- The search index as pages (core/src/search, docs/search.md): a search reads the dictionary
-- pages of its terms, the postings blocks its cursors land in and the document pages of its
-- candidates — not whole segments. The old one-blob-per-segment tables go; the index of every
-- namespace is rebuilt from the tables by this migration.

-- Index ids become numbers (a search reads them with its snapshot); rows come back on the
-- next write of each namespace.
DELETE FROM mem_idx_meta;
DROP TABLE IF EXISTS mem_idx_tombstones;
DROP TABLE IF EXISTS mem_idx_docs;
DROP TABLE IF EXISTS mem_idx_segments;

-- One row per segment: small columns first (scans of the list never read the blobs), then
-- its header (read once per build and cached) and its deletions (a new version per flush
-- that adds to them). `build` and `dead_ver` are random: they key the caches.
CREATE TABLE mem_idx_segments (
  seg_no      @ROWID,
  ns          TEXT NOT NULL,
  build       BIGINT NOT NULL,
  doc_count   BIGINT NOT NULL,
  total_len   BIGINT NOT NULL,
  min_key     BIGINT NOT NULL,
  max_key     BIGINT NOT NULL,
  dead_count  BIGINT NOT NULL DEFAULT 0,
  dead_len    BIGINT NOT NULL DEFAULT 0,
  dead_ver    BIGINT NOT NULL DEFAULT 0,
  header      @BLOB NOT NULL,
  dead        @BLOB
);
CREATE INDEX mem_idx_segments_ns ON mem_idx_segments (ns, max_key);

-- The segments' pages: id = seg_no << 32 | area << 28 | page (postings, dictionary, documents).
CREATE TABLE mem_idx_pages (
  id    @ROWID,
  data  @BLOB NOT NULL
);
-- Pages are compressed already and below the inline limit: never TOASTed.
@postgres ALTER TABLE mem_idx_pages ALTER COLUMN data SET STORAGE PLAIN;

-- Writes not yet in a segment: a new version (its analysed terms), and/or the deletion of an
-- old version that lives in a segment (its place, length and distinct terms). `ver` is random
-- per write, so a flush removes only the versions it read.
CREATE TABLE mem_idx_delta (
  ns         TEXT NOT NULL,
  doc        BIGINT NOT NULL,
  ver        BIGINT NOT NULL,
  len        BIGINT,
  created    BIGINT,
  old_seg    BIGINT,
  old_ord    BIGINT,
  old_len    BIGINT,
  terms      @BLOB,
  old_terms  @BLOB,
  PRIMARY KEY (ns, doc)
);

-- The deletion handlers need the indexed text of the row that goes: SQLite passes it from OLD.
@drop_trigger mem_messages mem__message_update_trg
@sqlite CREATE TRIGGER mem__message_update_trg AFTER UPDATE OF raw_content, search_text, created_at ON mem_messages FOR EACH ROW WHEN OLD.search_text IS NOT NULL AND (NEW.raw_content IS NOT OLD.raw_content OR NEW.search_text IS NOT OLD.search_text OR NEW.created_at IS NOT OLD.created_at) BEGIN SELECT mem__message_update(NEW.seq, NEW.raw_content IS NOT OLD.raw_content, NEW.search_text IS NOT OLD.search_text, NEW.created_at IS NOT OLD.created_at, OLD.search_text); END;
@postgres CREATE TRIGGER mem__message_update_trg BEFORE UPDATE OF raw_content, search_text, created_at ON mem_messages FOR EACH ROW WHEN ((OLD.search_text IS NOT NULL) AND (NEW.raw_content IS DISTINCT FROM OLD.raw_content OR NEW.search_text IS DISTINCT FROM OLD.search_text OR NEW.created_at IS DISTINCT FROM OLD.created_at)) EXECUTE FUNCTION mem__message_update();
@drop_trigger mem_messages mem__message_delete_trg
@sqlite CREATE TRIGGER mem__message_delete_trg AFTER DELETE ON mem_messages FOR EACH ROW BEGIN SELECT mem__message_delete(OLD.seq, OLD.thread_id, OLD.token_count, OLD.search_text); END;
@postgres CREATE TRIGGER mem__message_delete_trg AFTER DELETE ON mem_messages FOR EACH ROW EXECUTE FUNCTION mem__message_delete();
@drop_trigger mem_tasks mem__task_text_trg
@sqlite CREATE TRIGGER mem__task_text_trg AFTER UPDATE OF title, description, summary ON mem_tasks FOR EACH ROW WHEN NEW.title IS NOT OLD.title OR NEW.description IS NOT OLD.description OR NEW.summary IS NOT OLD.summary BEGIN SELECT mem__task_text(NEW.seq, OLD.title, OLD.description, OLD.summary); END;
@postgres CREATE TRIGGER mem__task_text_trg BEFORE UPDATE OF title, description, summary ON mem_tasks FOR EACH ROW WHEN (NEW.title IS DISTINCT FROM OLD.title OR NEW.description IS DISTINCT FROM OLD.description OR NEW.summary IS DISTINCT FROM OLD.summary) EXECUTE FUNCTION mem__task_text();
@drop_trigger mem_tasks mem__task_delete_trg
@sqlite CREATE TRIGGER mem__task_delete_trg AFTER DELETE ON mem_tasks FOR EACH ROW BEGIN SELECT mem__task_delete(OLD.seq, OLD.id, OLD.title, OLD.description, OLD.summary); END;
@postgres CREATE TRIGGER mem__task_delete_trg AFTER DELETE ON mem_tasks FOR EACH ROW EXECUTE FUNCTION mem__task_delete();
