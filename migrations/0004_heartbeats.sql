-- Agent heartbeats (status events on core NATS) as the aggregator hears them: camera health in
-- reports (gaps, drops) and `scanadmin cameras`. Unique on the event id, so replicas that all
-- hear a heartbeat store it once.
CREATE TABLE heartbeats (
    event_id        text        PRIMARY KEY,
    site            text        NOT NULL,
    camera          text        NOT NULL,
    run_id          text        NOT NULL,
    time            timestamptz NOT NULL,
    fps_in          double precision,
    fps_processed   double precision,
    frames_dropped  bigint,
    live_tracks     integer,
    spool_depth     bigint,
    nats            text,
    rules_revision  text,
    body            jsonb       NOT NULL
);
CREATE INDEX heartbeats_camera_time_idx ON heartbeats (camera, time);
CREATE INDEX heartbeats_time_idx ON heartbeats (time);
