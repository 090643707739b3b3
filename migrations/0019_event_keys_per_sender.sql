-- Rows are unique per sender, not per event id alone: a camera (or a gateway) that sends an event
-- with the id another camera's event will carry can no longer make the aggregator drop that event
-- as a repeat (JetStream's message ids already name the subject). Parcels and reading events are a
-- camera's, decisions a lane's, measurements a lane's device's.
ALTER TABLE reading_events DROP CONSTRAINT reading_events_pkey, ADD PRIMARY KEY (site, camera, event_id);
ALTER TABLE parcels DROP CONSTRAINT parcels_pkey, ADD PRIMARY KEY (site, camera, event_id, last_seen);
ALTER TABLE decisions DROP CONSTRAINT decisions_pkey, ADD PRIMARY KEY (site, lane, event_id, closed_at);
ALTER TABLE measurements DROP CONSTRAINT measurements_pkey, ADD PRIMARY KEY (site, lane, event_id, measured_at);
