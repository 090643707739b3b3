-- Labels the agents saw but could not decode (`noread` events): one row per event id, the
-- region's picture (PNG) kept as bytes so that `scanadmin noreads show` works wherever the
-- agent runs. Reports count them against the sightings of the same camera and lane (read rate).
-- The reconciler attaches a lane camera's no-read to the item pass another camera of the lane
-- read (`item_id`), once the lane has moved past it (`settled`); NULL item_id when settled: no
-- camera read that item.
CREATE TABLE noreads (
    event_id    text        PRIMARY KEY,
    site        text        NOT NULL,
    camera      text        NOT NULL,
    lane        text,
    station     text,
    track_id    text        NOT NULL,
    family      text,
    first_seen  timestamptz NOT NULL,
    last_seen   timestamptz NOT NULL,
    frames      integer     NOT NULL,
    session_id  text,
    sharpness   double precision,
    image_name  text,
    image       bytea,
    item_id     text,
    settled     boolean     NOT NULL DEFAULT false,
    received_at timestamptz NOT NULL DEFAULT now(),
    body        jsonb       NOT NULL
);
CREATE INDEX noreads_first_seen_idx ON noreads (first_seen);
CREATE INDEX noreads_camera_first_seen_idx ON noreads (camera, first_seen);
CREATE INDEX noreads_unsettled_idx ON noreads (first_seen) WHERE NOT settled;
