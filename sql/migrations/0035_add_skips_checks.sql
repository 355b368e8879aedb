-- SQLite: the type check of a new message passes over a row mem_message_add booked
-- (mem__adding_booked(NEW.id)): that row was built from values the core checked itself, and
-- the check's call (every column, with SQLite's JSON verdict on the metadata) was the largest
-- part of the triggers' cost per message. A plain INSERT is checked as before. Postgres has
-- nothing to change.
@sqlite @types mem_messages unless:mem__adding_booked(NEW.id) id:text thread_id:text resource_id:text?~ role:text raw_content:text search_text:text?~ injection_text:text?~ summary:text? compaction_level:int task_id:text?~ message_index:int?~ token_count:int?~ created_at:int metadata:object
