-- agentmem 0.3.0 → 0.4.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The migrations up to 0.4.0's schema. The bootstrap creates (or binds again) every trigger
-- function of the trigger catalog over the one entry point `mem__trigger`.
SELECT mem__bootstrap();
