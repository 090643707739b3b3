-- One camera's parcels (`parcel` events, with `grouping.enabled` in the agent's config): the
-- codes that travelled together on one parcel, stored once each. The body is the event.
CREATE TABLE parcels (
    event_id   text        PRIMARY KEY,
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
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX parcels_camera_idx ON parcels (site, camera, last_seen);
