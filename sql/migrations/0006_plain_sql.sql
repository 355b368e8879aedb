-- Plain SQL stays exact, or is refused with the reason (docs/functions.md, "Plain SQL").
-- Neutral dialect: see core/src/schema.rs for the markers.
--
-- * Column types SQLite would not enforce (@types); JSON columns hold objects on both.
-- * A message's identity (seq, id, thread, resource, index) and its token count cannot be
--   updated; a thread's id and resource neither. Counters and the blocked state are written
--   only by agentmem (@derived).
-- * SQLite's INSERT OR REPLACE deletes conflicting rows without their delete triggers: a
--   before-insert trigger tells the insert handler which rows a replacement may remove, and a
--   replaced thread row gets its counters recounted from its messages.
-- * Row handlers run after the row is written or gone where they recount, so each one is
--   idempotent and harmless when called by hand.

-- Databases written before this version may hold counters that the defects fixed here made
-- wrong: recount them once (before the triggers that guard the counters exist).
UPDATE mem_threads SET
  message_count = (SELECT count(*) FROM mem_messages m WHERE m.thread_id = mem_threads.id),
  token_count = (SELECT coalesce(sum(m.token_count), 0) FROM mem_messages m WHERE m.thread_id = mem_threads.id),
  next_message_index = (SELECT CASE WHEN max(m.message_index) >= mem_threads.next_message_index
                                    THEN max(m.message_index) + 1 ELSE mem_threads.next_message_index END
                        FROM mem_messages m WHERE m.thread_id = mem_threads.id)
  WHERE EXISTS (SELECT 1 FROM mem_messages m WHERE m.thread_id = mem_threads.id);

-- Threads.
@types mem_threads id:text resource_id:text title:text? metadata:object created_at:int updated_at:int next_message_index:int message_count:int token_count:int state:text
@refuse mem_threads id : mem_threads.id cannot change: messages, compactions and observations refer to it
@refuse mem_threads resource_id : mem_threads.resource_id cannot change: its messages and observational memory carry it
@derived mem_threads next_message_index,message_count,token_count : mem_threads counters are kept by agentmem: add, update or delete messages instead
@sqlite CREATE TRIGGER mem__thread_recount_trg AFTER INSERT ON mem_threads FOR EACH ROW WHEN EXISTS (SELECT 1 FROM mem_messages WHERE thread_id = NEW.id) BEGIN SELECT mem__thread_recount(NEW.id); END;

-- Messages.
@types mem_messages id:text thread_id:text resource_id:text? role:text raw_content:text search_text:text? injection_text:text? summary:text? compaction_level:int task_id:text? message_index:int? token_count:int? created_at:int metadata:object
@refuse mem_messages seq if NOT mem__internal() : mem_messages.seq cannot change: it keys the search index (delete the message and add it again)
@refuse mem_messages id if NOT mem__internal() : mem_messages.id cannot change: task links and observations refer to it
@refuse mem_messages thread_id if NOT mem__internal() : mem_messages.thread_id cannot change: delete the message and add it to the other thread
@refuse mem_messages resource_id if NOT mem__internal() : mem_messages.resource_id cannot change: it is the resource of the thread
@refuse mem_messages message_index if NOT mem__internal() : mem_messages.message_index cannot change: it is the place of the message in its thread
@refuse mem_messages token_count if NOT mem__internal() : mem_messages.token_count cannot change: it is recounted when raw_content changes
@sqlite CREATE TRIGGER mem__message_conflicts_trg BEFORE INSERT ON mem_messages FOR EACH ROW WHEN EXISTS (SELECT 1 FROM mem_messages WHERE seq = NEW.seq OR id = NEW.id OR (thread_id = NEW.thread_id AND message_index = NEW.message_index)) BEGIN SELECT mem__message_conflicts(NEW.seq, NEW.id, NEW.thread_id, NEW.message_index); END;
@drop_trigger mem_messages mem__message_update_trg
@trigger mem_messages update(raw_content,search_text,created_at) mem__message_update if OLD.search_text IS NOT NULL
@drop_trigger mem_messages mem__message_delete_trg
@sqlite CREATE TRIGGER mem__message_delete_trg AFTER DELETE ON mem_messages FOR EACH ROW BEGIN SELECT mem__message_delete(OLD.seq, OLD.thread_id, OLD.token_count); END;
@postgres CREATE TRIGGER mem__message_delete_trg AFTER DELETE ON mem_messages FOR EACH ROW EXECUTE FUNCTION mem__message_delete();

-- Tasks: the blocked state is recounted after the write, so the handlers see the new rows.
@types mem_tasks id:text title:text description:text? status:text priority:int type:text assignee:text? session_id:text? created_at:int updated_at:int closed_at:int? close_reason:text? summary:text? compaction_level:int compacted_at:int? original_content:text? metadata:object defer_until:int? open_blockers:int blocked_parents:int is_blocked:int
@derived mem_tasks open_blockers,blocked_parents,is_blocked : mem_tasks blocked state is kept by agentmem: add or remove dependencies instead
@postgres CREATE TRIGGER mem__task_status_after_trg AFTER UPDATE OF status ON mem_tasks FOR EACH ROW WHEN ((OLD.status = 'closed') <> (NEW.status = 'closed')) EXECUTE FUNCTION mem__task_status_after();
@types mem_task_deps task_id:text depends_on_id:text type:text created_at:int
@drop_trigger mem_task_deps mem__task_dep_insert_trg
@sqlite CREATE TRIGGER mem__task_dep_insert_trg AFTER INSERT ON mem_task_deps FOR EACH ROW BEGIN SELECT mem__task_dep_insert(NEW.seq); END;
@postgres CREATE TRIGGER mem__task_dep_insert_trg AFTER INSERT ON mem_task_deps FOR EACH ROW EXECUTE FUNCTION mem__task_dep_insert();
@drop_trigger mem_task_deps mem__task_dep_delete_trg
@sqlite CREATE TRIGGER mem__task_dep_delete_trg AFTER DELETE ON mem_task_deps FOR EACH ROW BEGIN SELECT mem__task_dep_delete(OLD.task_id); END;
@postgres CREATE TRIGGER mem__task_dep_delete_trg AFTER DELETE ON mem_task_deps FOR EACH ROW EXECUTE FUNCTION mem__task_dep_delete();
@types mem_task_labels task_id:text label:text
@types mem_task_messages task_id:text message_id:text relation:text created_at:int

-- Working memory.
@types mem_working_memory scope_key:text content:text updated_at:int
