-- Divert decisions (`decision` events on scantrack.v1.decision.<site>.<lane>), one row each: what
-- the diverter was told for each parcel, and whether it was told in time. The body is the event.
CREATE TABLE decisions (
    event_id    text        PRIMARY KEY,
    parcel_id   text        NOT NULL,
    site        text        NOT NULL,
    lane        text        NOT NULL,
    camera      text        NOT NULL,
    action      text        NOT NULL CHECK (action IN ('pass', 'divert')),
    reasons     text[]      NOT NULL,
    late        boolean     NOT NULL,
    decided_by  text        NOT NULL CHECK (decided_by IN ('agent', 'aggregator')),
    closed_at   timestamptz NOT NULL,
    deadline    timestamptz NOT NULL,
    body        jsonb       NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decisions_lane_idx ON decisions (site, lane, closed_at);
