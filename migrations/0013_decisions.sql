-- Divert decisions (`decision` events on scantrack.v1.decision.<site>.<lane>), one row each: what
-- the diverter was told for each parcel, and whether it was told in time. The body is the event.
-- Partitioned by UTC day on closed_at (migration 0007), 90 days kept by default.
CREATE TABLE decisions (
    event_id    text        NOT NULL,
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
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, closed_at)
) PARTITION BY RANGE (closed_at);
CREATE TABLE decisions_default PARTITION OF decisions DEFAULT;
CREATE INDEX decisions_lane_idx ON decisions (site, lane, closed_at);
INSERT INTO retention_settings (table_name, time_column, days) VALUES ('decisions', 'closed_at', 90);
SELECT count(scantrack_create_day_partition('decisions', d::date))
FROM generate_series((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 3, interval '1 day') d;
