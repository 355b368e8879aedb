-- A transaction's new messages keep their search documents in memory until it commits, then
-- write them at once: as one segment when there are many (core/src/search/held.rs).
--
-- SQLite: the insert trigger writes each new row's seq to the eponymous virtual table
-- mem__message_inserted, which completes the row and, being written to, joins the
-- transaction: it writes what is held before the commit and forgets it on a rollback.
@sqlite DROP TRIGGER mem__message_insert_trg;
@sqlite CREATE TRIGGER mem__message_insert_trg AFTER INSERT ON mem_messages FOR EACH ROW BEGIN INSERT INTO mem__message_inserted (seq) VALUES (NEW.seq); END;
-- Postgres: a deferred constraint trigger fires when the transaction commits (or at the end
-- of each statement under SET CONSTRAINTS ... IMMEDIATE); its first firing writes what the
-- transaction holds.
@postgres CREATE CONSTRAINT TRIGGER mem__message_held_trg AFTER INSERT ON mem_messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION mem__message_held();
-- Postgres: a statement's rows are booked when it ends, all at once: each thread's counters
-- in one update (not one per row: a row updated again and again in one transaction grows a
-- chain of versions that every later update walks), and the search documents of the rows it
-- really inserted.
@postgres CREATE TRIGGER mem__messages_booked_trg AFTER INSERT ON mem_messages REFERENCING NEW TABLE AS mem__inserted FOR EACH STATEMENT EXECUTE FUNCTION mem__messages_booked();
