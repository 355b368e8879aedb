-- agentmem 0.1.0 → 0.2.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The library defines the catalog functions and the migrations; the extension version pins
-- the schema version (agentmem_core::schema::RELEASES). Bootstrapping again re-creates every
-- catalog function from the new library and applies the migrations up to this version's
-- schema, inside this transaction.
SELECT mem__bootstrap();
