-- Async reflection buffering (seed 000 "State Flags"): a reflection made in the background
-- waits here until the reflection threshold is reached, with the observations it condensed
-- (lines observed after it are kept beside it when it is activated).
ALTER TABLE mem_om_records ADD COLUMN buffered_reflection TEXT;
ALTER TABLE mem_om_records ADD COLUMN buffered_reflection_base TEXT;
