-- When a camera stopped being read and when it was read again (`reading.paused`,
-- `reading.resumed`: the pause/resume commands, a camera lost and back), one row each. Few rows
-- (a handful a camera a day), so one table without day partitions.
CREATE TABLE reading_events (
    event_id    text        PRIMARY KEY,
    site        text        NOT NULL,
    camera      text        NOT NULL,
    lane        text,
    station     text,
    type        text        NOT NULL CHECK (type IN ('reading.paused', 'reading.resumed')),
    reason      text        NOT NULL CHECK (reason IN ('command', 'camera')),
    detail      text,
    event_time  timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reading_events_camera_idx ON reading_events (site, camera, event_time);
