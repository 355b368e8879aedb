-- agentmem 0.5.0 → 0.6.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The migrations up to 0.6.0's schema: the observer's log (migration 0021), the code graph's
-- references and chunks (0022). The bootstrap creates the new catalog functions
-- (mem_session_checkpoint, graph_outline, graph_index_file, graph_remove_file) and the new
-- signature of mem_synthesis_answer. mem__delegate hands a call to the node holding its
-- resource on a distributed database (mem_distribute).
CREATE FUNCTION mem__delegate("resource" TEXT, "name" TEXT, "args" TEXT) RETURNS SETOF TEXT
  STRICT LANGUAGE c AS 'MODULE_PATHNAME', 'mem__delegate_wrapper';
SELECT mem__bootstrap();
