-- agentmem 0.3.0 → 0.4.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The trigger function of the new secret check on mem_memories (a fresh install gets it from
-- the install script), then the migrations up to 0.4.0's schema.
CREATE FUNCTION "mem__memory_secrets"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', 'mem__memory_secrets_wrapper';
SELECT mem__bootstrap();
