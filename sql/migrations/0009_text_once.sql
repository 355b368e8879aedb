-- A message's three stores hold one copy of its text: `search_text` and `injection_text` are
-- NULL while they equal `raw_content` (readers use coalesce(search_text, raw_content)). Most
-- messages are never compacted, so this stores the text once instead of three times.
--
-- A row is complete once its token_count is filled (SQLite fills it after the insert); the
-- update handler skips that completion write. Triggers pass the indexed text of the old row.

@postgres ALTER TABLE mem_messages ALTER COLUMN search_text DROP NOT NULL;
@postgres ALTER TABLE mem_messages ALTER COLUMN injection_text DROP NOT NULL;
@drop_trigger mem_messages mem__message_update_trg
UPDATE mem_messages SET search_text = NULL WHERE search_text = raw_content;
UPDATE mem_messages SET injection_text = NULL WHERE injection_text = raw_content;
@sqlite CREATE TRIGGER mem__message_update_trg AFTER UPDATE OF raw_content, search_text, created_at ON mem_messages FOR EACH ROW WHEN OLD.token_count IS NOT NULL AND (NEW.raw_content IS NOT OLD.raw_content OR NEW.search_text IS NOT OLD.search_text OR NEW.created_at IS NOT OLD.created_at) BEGIN SELECT mem__message_update(NEW.seq, NEW.raw_content IS NOT OLD.raw_content, NEW.search_text IS NOT OLD.search_text, NEW.created_at IS NOT OLD.created_at, coalesce(OLD.search_text, OLD.raw_content)); END;
@postgres CREATE TRIGGER mem__message_update_trg BEFORE UPDATE OF raw_content, search_text, created_at ON mem_messages FOR EACH ROW WHEN ((OLD.token_count IS NOT NULL) AND (NEW.raw_content IS DISTINCT FROM OLD.raw_content OR NEW.search_text IS DISTINCT FROM OLD.search_text OR NEW.created_at IS DISTINCT FROM OLD.created_at)) EXECUTE FUNCTION mem__message_update();
@drop_trigger mem_messages mem__message_delete_trg
@sqlite CREATE TRIGGER mem__message_delete_trg AFTER DELETE ON mem_messages FOR EACH ROW BEGIN SELECT mem__message_delete(OLD.seq, OLD.thread_id, OLD.token_count, coalesce(OLD.search_text, OLD.raw_content)); END;
@postgres CREATE TRIGGER mem__message_delete_trg AFTER DELETE ON mem_messages FOR EACH ROW EXECUTE FUNCTION mem__message_delete();
