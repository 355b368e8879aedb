-- agentmem 0.4.0 → 0.5.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The migrations up to 0.5.0's schema: the memory observer's tables (migration 0020). The
-- bootstrap creates the new catalog functions (mem_session_start, mem_observe,
-- mem_observe_hook, mem_session_finalize, mem_synthesis_answer, mem_session_summary).
SELECT mem__bootstrap();
