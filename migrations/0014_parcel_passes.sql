-- Parcel passes: one parcel along a lane, the parcels its cameras saw of it merged (codes a top
-- and a side camera both read counted once). `members` holds the camera parcels as merged (each
-- with its codes and their item passes), from which the pass's codes and missing symbologies are
-- derived; published per revision like item passes (`published_revision`).
CREATE TABLE parcel_passes (
    pass_id            text        PRIMARY KEY,
    site               text        NOT NULL,
    lane               text        NOT NULL,
    first_seen         timestamptz NOT NULL,
    last_seen          timestamptz NOT NULL,
    cameras_expected   integer     NOT NULL,
    members            jsonb       NOT NULL,
    codes              integer     NOT NULL,
    complete           boolean     NOT NULL,
    no_read            boolean     NOT NULL,
    revision           integer     NOT NULL DEFAULT 0,
    published_revision integer     NOT NULL DEFAULT 0,
    closed_at          timestamptz,
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX parcel_passes_lane_idx ON parcel_passes (site, lane, first_seen);
CREATE INDEX parcel_passes_open_idx ON parcel_passes (first_seen) WHERE closed_at IS NULL;
CREATE INDEX parcel_passes_unpublished_idx ON parcel_passes (last_seen) WHERE revision > published_revision;

-- A camera's parcel is merged into a pass once (the reconciler's work queue).
ALTER TABLE parcels ADD COLUMN merged boolean NOT NULL DEFAULT false;
CREATE INDEX parcels_unmerged_idx ON parcels (received_at) WHERE NOT merged;
