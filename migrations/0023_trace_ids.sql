-- Tracing (docs/integration.md, "Tracing"): each event an agent publishes carries a W3C
-- `traceparent` header; the aggregator keeps its trace id (32 hex digits) on the event's row, so
-- a trace id from a log line or a consumer's header finds the sighting, no-read or parcel it
-- began with. NULL: the event came without a valid traceparent (an older agent).
ALTER TABLE sightings ADD COLUMN trace_id text;
ALTER TABLE noreads ADD COLUMN trace_id text;
ALTER TABLE parcels ADD COLUMN trace_id text;
CREATE INDEX sightings_trace_id_idx ON sightings (trace_id) WHERE trace_id IS NOT NULL;
