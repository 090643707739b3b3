-- Dimensioner and scale readings (`measure` events on scantrack.v1.measure.<site>.<lane>), one
-- row each, attached by reconciliation to the parcel pass that was at the device (`pass_id`;
-- `settled` once attached or given up on). Partitioned by UTC day on measured_at (migration 0007),
-- 90 days kept by default. A lane says where its device is (`measure_offset_ms` from its first
-- camera); a parcel pass carries its measurement as the event (`measurement`).
ALTER TABLE lanes ADD COLUMN measure_offset_ms integer NOT NULL DEFAULT 0;
ALTER TABLE parcel_passes ADD COLUMN measurement jsonb;
CREATE TABLE measurements (
    event_id    text             NOT NULL,
    site        text             NOT NULL,
    lane        text             NOT NULL,
    device      text             NOT NULL,
    measured_at timestamptz      NOT NULL,
    length_mm   double precision,
    width_mm    double precision,
    height_mm   double precision,
    weight_kg   double precision,
    body        jsonb            NOT NULL,
    received_at timestamptz      NOT NULL DEFAULT now(),
    settled     boolean          NOT NULL DEFAULT false,
    pass_id     text,
    PRIMARY KEY (event_id, measured_at)
) PARTITION BY RANGE (measured_at);
CREATE TABLE measurements_default PARTITION OF measurements DEFAULT;
CREATE INDEX measurements_lane_idx ON measurements (site, lane, measured_at);
CREATE INDEX measurements_unsettled_idx ON measurements (received_at) WHERE NOT settled;
INSERT INTO retention_settings (table_name, time_column, days) VALUES ('measurements', 'measured_at', 90);
SELECT count(scantrack_create_day_partition('measurements', d::date))
FROM generate_series((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 3, interval '1 day') d;
