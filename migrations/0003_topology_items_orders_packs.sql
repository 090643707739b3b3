-- Site topology, reconciled item passes, orders and pack records.

-- Topology: loaded from a file by `scanadmin topology load` or `scan-aggregator run --topology`.
CREATE TABLE sites (
    site         text        PRIMARY KEY,
    time_zone    text        NOT NULL DEFAULT 'UTC',
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE lanes (
    site         text        NOT NULL REFERENCES sites ON DELETE CASCADE,
    lane         text        NOT NULL,
    window_ms    integer     NOT NULL CHECK (window_ms > 0),
    grace_ms     integer     NOT NULL CHECK (grace_ms >= 0),
    PRIMARY KEY (site, lane)
);
-- A camera is on at most one lane of its site; `position` is its place along the belt (0 first).
CREATE TABLE lane_cameras (
    site         text        NOT NULL,
    lane         text        NOT NULL,
    camera       text        NOT NULL,
    position     integer     NOT NULL,
    offset_ms    bigint      NOT NULL CHECK (offset_ms >= 0),
    PRIMARY KEY (site, camera),
    UNIQUE (site, lane, position),
    FOREIGN KEY (site, lane) REFERENCES lanes ON DELETE CASCADE
);
CREATE TABLE stations (
    site         text        NOT NULL REFERENCES sites ON DELETE CASCADE,
    station      text        NOT NULL,
    cameras      text[]      NOT NULL DEFAULT '{}',
    PRIMARY KEY (site, station)
);

-- Sightings wait here for reconciliation (accepted ones on a lane become item passes).
ALTER TABLE sightings ADD COLUMN reconciled boolean NOT NULL DEFAULT false;
CREATE INDEX sightings_unreconciled_idx ON sightings (first_seen) WHERE NOT reconciled;

-- One physical item passing along a lane, seen by one or more of its cameras.
CREATE TABLE item_passes (
    item_id            text        PRIMARY KEY,
    site               text        NOT NULL,
    lane               text        NOT NULL,
    symbology          text        NOT NULL,
    value              text        NOT NULL,
    value_encoding     text        NOT NULL DEFAULT 'text',
    first_seen         timestamptz NOT NULL,
    last_seen          timestamptz NOT NULL,
    cameras_expected   integer     NOT NULL,
    cameras_seen       integer     NOT NULL,
    missing            text[]      NOT NULL DEFAULT '{}',
    -- 0 while open, 1 when closed, +1 for each late sighting after that.
    revision           integer     NOT NULL DEFAULT 0,
    published_revision integer     NOT NULL DEFAULT 0,
    closed_at          timestamptz,
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX item_passes_open_idx ON item_passes (site, lane) WHERE closed_at IS NULL;
CREATE INDEX item_passes_unpublished_idx ON item_passes (closed_at) WHERE published_revision < revision;
CREATE INDEX item_passes_first_seen_idx ON item_passes (first_seen);
CREATE INDEX item_passes_recent_idx ON item_passes (updated_at);

-- The latest sighting time reconciled per lane: passes close by event time, not wall time.
CREATE TABLE lane_watermarks (
    site         text        NOT NULL,
    lane         text        NOT NULL,
    watermark    timestamptz NOT NULL,
    PRIMARY KEY (site, lane)
);

CREATE TABLE item_sightings (
    event_id     text        PRIMARY KEY,
    item_id      text        NOT NULL REFERENCES item_passes ON DELETE CASCADE,
    camera       text        NOT NULL,
    track_id     text        NOT NULL,
    first_seen   timestamptz NOT NULL,
    last_seen    timestamptz NOT NULL,
    late         boolean     NOT NULL DEFAULT false
);
CREATE INDEX item_sightings_item_idx ON item_sightings (item_id);

-- Orders with their expected lines (`scanadmin orders import FILE.csv`).
CREATE TABLE orders (
    order_id     text        PRIMARY KEY,
    source       text        NOT NULL,
    imported_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE order_lines (
    order_id     text        NOT NULL REFERENCES orders ON DELETE CASCADE,
    line         integer     NOT NULL CHECK (line > 0),
    code         text        NOT NULL,
    quantity     integer     NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, line)
);

-- Completed pack-station sessions wait here to become pack records.
ALTER TABLE session_events ADD COLUMN packed boolean NOT NULL DEFAULT false;
CREATE INDEX session_events_unpacked_idx ON session_events (event_time)
    WHERE type = 'session.completed' AND NOT packed;

-- One pack-station session checked against its order.
CREATE TABLE pack_records (
    session_id   text        PRIMARY KEY,
    site         text        NOT NULL,
    station      text        NOT NULL,
    camera       text        NOT NULL,
    order_id     text,
    verdict      text        NOT NULL CHECK (verdict IN ('complete', 'short', 'over', 'unexpected', 'unknown-order')),
    started_at   timestamptz NOT NULL,
    completed_at timestamptz NOT NULL,
    items        integer     NOT NULL,
    published    boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pack_records_completed_idx ON pack_records (completed_at);
CREATE INDEX pack_records_order_idx ON pack_records (order_id);
CREATE INDEX pack_records_unpublished_idx ON pack_records (created_at) WHERE NOT published;

CREATE TABLE pack_lines (
    session_id   text        NOT NULL REFERENCES pack_records ON DELETE CASCADE,
    position     integer     NOT NULL,
    line         integer,
    code         text        NOT NULL,
    symbology    text,
    expected     integer     NOT NULL,
    counted      integer     NOT NULL,
    verdict      text        NOT NULL,
    PRIMARY KEY (session_id, position)
);
