-- agentmem 0.2.0 → 0.3.0 (ALTER EXTENSION agentmem UPDATE).
--
-- The trigger functions of the new message triggers (a fresh install gets them from the
-- install script), then the migrations up to 0.3.0's schema.
CREATE FUNCTION "mem__message_held"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', 'mem__message_held_wrapper';
CREATE FUNCTION "mem__messages_booked"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', 'mem__messages_booked_wrapper';
SELECT mem__bootstrap();
