-- ScanTrack schema, first migration: raw agent events as the aggregator stores them.
--
-- `sightings` is a contract (BI tools and ad-hoc SQL rely on it): one row per track that ended,
-- unique on the agent's event id so redelivery never duplicates a row.

CREATE TABLE sightings (
    event_id     text        PRIMARY KEY,
    site         text        NOT NULL,
    camera       text        NOT NULL,
    track_id     text        NOT NULL,
    symbology    text        NOT NULL,
    value        text        NOT NULL,
    value_encoding text      NOT NULL DEFAULT 'text' CHECK (value_encoding IN ('text', 'base64')),
    status       text        NOT NULL CHECK (status IN ('accepted', 'rejected')),
    rule_id      text,
    role         text,
    lane         text,
    station      text,
    session_id   text,
    gs1          boolean     NOT NULL DEFAULT false,
    add_on       text,
    first_seen   timestamptz NOT NULL,
    last_seen    timestamptz NOT NULL,
    first_frame  bigint      NOT NULL,
    last_frame   bigint      NOT NULL,
    frames       integer     NOT NULL,
    decodes      integer     NOT NULL,
    event_time   timestamptz NOT NULL,
    body         jsonb       NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sightings_first_seen_idx ON sightings (first_seen);
CREATE INDEX sightings_camera_first_seen_idx ON sightings (camera, first_seen);
CREATE INDEX sightings_value_idx ON sightings (value);

-- Messages that could not be used, with the reason, so nothing accepted is ever lost silently.
CREATE TABLE dead_letters (
    id           bigserial   PRIMARY KEY,
    subject      text        NOT NULL,
    reason       text        NOT NULL,
    detail       text        NOT NULL,
    payload      bytea       NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now()
);

-- Every camera that ever reported, with its last heartbeat.
CREATE TABLE cameras (
    camera       text        PRIMARY KEY,
    site         text        NOT NULL,
    lane         text,
    station      text,
    last_status  jsonb,
    last_seen    timestamptz
);
