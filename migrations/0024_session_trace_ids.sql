-- Tracing (docs/integration.md, "Tracing"): a session's events keep their trace id as sightings,
-- no-reads and parcels do (0023), so the pack record made of a session continues the trace of
-- its session.started. NULL: the event came without a valid traceparent (an older agent).
ALTER TABLE session_events ADD COLUMN trace_id text;
