-- SQLite: the trigger that finds the rows an INSERT OR REPLACE of a message would remove passes
-- over a row mem_message_add booked (mem__adding_booked(NEW.id)): that plain insert replaces
-- none, and the look cost three index probes per message. Postgres has nothing to change.
@triggers
