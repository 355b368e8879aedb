-- Postgres: every message updates its thread's row (its counters and next index). An update
-- stays on the row's page, with no new index entries (a HOT update), only while the page has
-- room for the new version; the versions a transaction leaves behind cannot be pruned before
-- it ends, so a transaction that adds many messages filled full pages and then wrote every
-- update as a new tuple elsewhere, with a new entry in each of the table's indexes. Pages
-- half filled by inserts keep room for those versions. Existing rows move to such pages as
-- they are updated; SQLite has nothing to change.
@postgres ALTER TABLE mem_threads SET (fillfactor = 50);
