-- One camera's parcels (`parcel` events, with `grouping.enabled` in the agent's config): the
-- codes that travelled together on one parcel, stored once each. The body is the event.
-- Partitioned by UTC day on last_seen like the other time-series tables (migration 0007): a
-- tunnel sends tens of parcels a second, so retention drops whole days (90 by default).
CREATE TABLE parcels (
    event_id   text        NOT NULL,
    parcel_id  text        NOT NULL,
    site       text        NOT NULL,
    camera     text        NOT NULL,
    lane       text,
    station    text,
    first_seen timestamptz NOT NULL,
    last_seen  timestamptz NOT NULL,
    codes      integer     NOT NULL CHECK (codes >= 0),
    complete   boolean     NOT NULL,
    no_read    boolean     NOT NULL,
    body       jsonb       NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, last_seen)
) PARTITION BY RANGE (last_seen);
CREATE TABLE parcels_default PARTITION OF parcels DEFAULT;
CREATE INDEX parcels_camera_idx ON parcels (site, camera, last_seen);
CREATE INDEX parcels_last_seen_idx ON parcels (last_seen);
INSERT INTO retention_settings (table_name, time_column, days) VALUES ('parcels', 'last_seen', 90);
SELECT count(scantrack_create_day_partition('parcels', d::date))
FROM generate_series((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 3, interval '1 day') d;
