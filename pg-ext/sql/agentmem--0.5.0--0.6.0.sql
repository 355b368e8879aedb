-- agentmem 0.5.0 → 0.6.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The migrations up to 0.6.0's schema: the observer's log and checkpoint (migration 0021).
-- The bootstrap creates the new catalog function (mem_session_checkpoint).
SELECT mem__bootstrap();
