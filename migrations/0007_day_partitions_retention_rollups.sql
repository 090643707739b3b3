-- Time-series tables partitioned by day, retention per table, and rollups that reports read.
--
-- sightings, heartbeats, session_events, dead_letters and noreads become range-partitioned by
-- UTC day on their time column (`retention_settings.time_column`): one partition a day named
-- TABLE_YYYYMMDD, plus TABLE_default for rows of a day that has no partition yet (an agent's
-- clock far off, a spool flushed after days offline). The aggregator creates partitions ahead,
-- moves rows waiting in a default partition into their day, and drops the partitions older than
-- the table's retention (`scanadmin retention` shows and applies the same). Every row of the
-- existing tables is copied into the new ones; nothing is deleted here.
--
-- A partitioned table's unique key must hold its partition key, so each event is unique on
-- (event_id, time column): a redelivered event carries the same time and is still stored once.

CREATE TABLE retention_settings (
    table_name   text        PRIMARY KEY,
    time_column  text        NOT NULL,
    -- Whole days kept before the current UTC day; 0 keeps every day.
    days         integer     NOT NULL CHECK (days >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
INSERT INTO retention_settings (table_name, time_column, days) VALUES
    ('sightings', 'first_seen', 90),
    ('noreads', 'first_seen', 90),
    ('session_events', 'event_time', 90),
    ('heartbeats', 'time', 30),
    ('dead_letters', 'received_at', 30),
    -- The rollups (read_rollups, pass_rollups, heartbeat_rollups) are small: kept by default.
    ('rollups', 'bucket', 0);

-- The partition of `parent` holding `day` (UTC): created unless it exists, with the rows of that
-- day moved out of the default partition first (a default partition may not hold rows of a new
-- partition's range). True when it was created.
CREATE FUNCTION scantrack_create_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    name   text := parent || '_' || to_char(day, 'YYYYMMDD');
    col    text;
    lower  timestamptz := day::timestamp AT TIME ZONE 'UTC';
    upper  timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF to_regclass(quote_ident(name)) IS NOT NULL THEN
        RETURN false;
    END IF;
    SELECT time_column INTO STRICT col FROM retention_settings WHERE table_name = parent;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
    IF to_regclass(quote_ident(parent || '_default')) IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved',
                       parent || '_default', col, col, name) USING lower, upper;
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name, lower, upper);
    RETURN true;
END $$;

-- Rollups, maintained as rows arrive (statement triggers below), in UTC quarter hours: every
-- time zone's hours and every shift start on a quarter hour are whole buckets.
--
-- Sightings by status and rule, and no-reads (status 'noread'), per camera and lane. `lane` is
-- the event's, else its camera's in the topology when the row arrived ('' for none).
CREATE TABLE read_rollups (
    bucket   timestamptz NOT NULL,
    site     text        NOT NULL,
    camera   text        NOT NULL,
    lane     text        NOT NULL,
    status   text        NOT NULL CHECK (status IN ('accepted', 'rejected', 'noread')),
    rule_id  text        NOT NULL,
    n        bigint      NOT NULL,
    PRIMARY KEY (bucket, site, camera, lane, status, rule_id)
);
-- Item passes per lane, by their first sight; `partial`: fewer cameras than the lane expects.
CREATE TABLE pass_rollups (
    bucket   timestamptz NOT NULL,
    site     text        NOT NULL,
    lane     text        NOT NULL,
    passes   bigint      NOT NULL,
    partial  bigint      NOT NULL,
    PRIMARY KEY (bucket, site, lane)
);
-- Heartbeats per camera and agent run: how many, the first and last, the longest silence between
-- two heartbeats of the camera inside the bucket, and the run's frames-dropped counter range.
CREATE TABLE heartbeat_rollups (
    bucket        timestamptz      NOT NULL,
    site          text             NOT NULL,
    camera        text             NOT NULL,
    run_id        text             NOT NULL,
    beats         bigint           NOT NULL,
    first_time    timestamptz      NOT NULL,
    last_time     timestamptz      NOT NULL,
    max_gap       double precision NOT NULL,
    min_dropped   bigint,
    max_dropped   bigint,
    PRIMARY KEY (bucket, site, camera, run_id)
);
CREATE INDEX heartbeat_rollups_camera_idx ON heartbeat_rollups (camera, bucket);

CREATE FUNCTION scantrack_bucket(at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT date_bin('15 minutes', at, TIMESTAMPTZ '2000-01-01 00:00:00+00') $$;

CREATE FUNCTION scantrack_lane(site text, camera text, lane text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(lane, (SELECT lc.lane FROM lane_cameras lc WHERE lc.site = $1 AND lc.camera = $2
                           ORDER BY lc.lane LIMIT 1), '')
$$;

CREATE FUNCTION scantrack_rollup_reads() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'sightings' THEN
        INSERT INTO read_rollups AS r (bucket, site, camera, lane, status, rule_id, n)
        SELECT bucket, site, camera, scantrack_lane(site, camera, lane), status, rule_id, sum(n)
        FROM (SELECT scantrack_bucket(first_seen) AS bucket, site, camera, lane, status,
                     coalesce(rule_id, '') AS rule_id, count(*) AS n
              FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6) g
        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT (bucket, site, camera, lane, status, rule_id) DO UPDATE SET n = r.n + EXCLUDED.n;
    ELSE
        INSERT INTO read_rollups AS r (bucket, site, camera, lane, status, rule_id, n)
        SELECT bucket, site, camera, scantrack_lane(site, camera, lane), 'noread', '', sum(n)
        FROM (SELECT scantrack_bucket(first_seen) AS bucket, site, camera, lane, count(*) AS n
              FROM new_rows GROUP BY 1, 2, 3, 4) g
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (bucket, site, camera, lane, status, rule_id) DO UPDATE SET n = r.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;

-- Passes change after they are first stored (late sightings move first_seen, add cameras):
-- updates take the old rows' share out and put the new rows' in.
CREATE FUNCTION scantrack_rollup_passes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO pass_rollups AS r (bucket, site, lane, passes, partial)
        SELECT scantrack_bucket(first_seen), site, lane, count(*), count(*) FILTER (WHERE cameras_seen < cameras_expected)
        FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (bucket, site, lane) DO UPDATE SET passes = r.passes + EXCLUDED.passes, partial = r.partial + EXCLUDED.partial;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO pass_rollups AS r (bucket, site, lane, passes, partial)
        SELECT bucket, site, lane, sum(passes), sum(partial)
        FROM (SELECT scantrack_bucket(first_seen) AS bucket, site, lane, 1 AS passes,
                     (cameras_seen < cameras_expected)::int AS partial FROM new_rows
              UNION ALL
              SELECT scantrack_bucket(first_seen), site, lane, -1, -(cameras_seen < cameras_expected)::int FROM old_rows) d
        GROUP BY 1, 2, 3 HAVING sum(passes) <> 0 OR sum(partial) <> 0 ORDER BY 1, 2, 3
        ON CONFLICT (bucket, site, lane) DO UPDATE SET passes = r.passes + EXCLUDED.passes, partial = r.partial + EXCLUDED.partial;
    ELSE
        INSERT INTO pass_rollups AS r (bucket, site, lane, passes, partial)
        SELECT scantrack_bucket(first_seen), site, lane, -count(*), -count(*) FILTER (WHERE cameras_seen < cameras_expected)
        FROM old_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (bucket, site, lane) DO UPDATE SET passes = r.passes + EXCLUDED.passes, partial = r.partial + EXCLUDED.partial;
    END IF;
    RETURN NULL;
END $$;

-- The buckets a batch of heartbeats touched are summed again from the stored heartbeats (gaps
-- depend on the neighbours, and heartbeats may arrive out of order). Replicas storing the same
-- heartbeats take turns (a transaction lock), so each sums what the other committed.
CREATE FUNCTION scantrack_rollup_heartbeats_in(touched_buckets timestamptz[], touched_cameras text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7242028);
    DELETE FROM heartbeat_rollups h
    USING unnest(touched_buckets, touched_cameras) AS t(bucket, camera)
    WHERE h.bucket = t.bucket AND h.camera = t.camera;
    INSERT INTO heartbeat_rollups (bucket, site, camera, run_id, beats, first_time, last_time, max_gap, min_dropped, max_dropped)
    SELECT t.bucket, b.site, t.camera, b.run_id, count(*), min(b.time), max(b.time),
           coalesce(max(extract(epoch FROM b.time - b.previous)), 0), min(b.frames_dropped), max(b.frames_dropped)
    FROM unnest(touched_buckets, touched_cameras) AS t(bucket, camera)
    CROSS JOIN LATERAL (
        SELECT h.site, h.run_id, h.time, h.frames_dropped, lag(h.time) OVER (ORDER BY h.time) AS previous
        FROM heartbeats h
        WHERE h.camera = t.camera AND h.time >= t.bucket AND h.time < t.bucket + interval '15 minutes') b
    GROUP BY t.bucket, b.site, t.camera, b.run_id;
END $$;

CREATE FUNCTION scantrack_rollup_heartbeats() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    buckets timestamptz[];
    cams    text[];
BEGIN
    SELECT array_agg(bucket ORDER BY camera, bucket), array_agg(camera ORDER BY camera, bucket) INTO buckets, cams
    FROM (SELECT DISTINCT scantrack_bucket(time) AS bucket, camera FROM new_rows) t;
    IF buckets IS NOT NULL THEN
        PERFORM scantrack_rollup_heartbeats_in(buckets, cams);
    END IF;
    RETURN NULL;
END $$;

-- Partitions one table: the old table's rows are copied into day partitions (one for every day
-- that has rows, and from yesterday to three days ahead), then the old table is dropped.
CREATE FUNCTION scantrack_partition_table(parent text, key_column text, unique_column text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    old text := parent || '_unpartitioned';
    idx record;
    con record;
BEGIN
    EXECUTE format('ALTER TABLE %I RENAME TO %I', parent, old);
    -- Free the names of the old table's indexes and keys for the new one.
    FOR con IN SELECT conname FROM pg_constraint WHERE conrelid = old::regclass AND contype IN ('p', 'u') LOOP
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', old, con.conname);
    END LOOP;
    FOR idx IN SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = old::regclass LOOP
        EXECUTE format('DROP INDEX %s', idx.name);
    END LOOP;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (%I)',
                   parent, old, key_column);
    EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (%I, %I)', parent, unique_column, key_column);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', parent || '_default', parent);
    EXECUTE format(
        'SELECT count(scantrack_create_day_partition(%L, d)) FROM (
             SELECT DISTINCT (%I AT TIME ZONE ''UTC'')::date AS d FROM %I
             UNION SELECT generate_series(utc.today - 1, utc.today + 3, interval ''1 day'')::date
             FROM (SELECT (now() AT TIME ZONE ''UTC'')::date AS today) utc) days',
        parent, key_column, old);
    EXECUTE format('INSERT INTO %I SELECT * FROM %I', parent, old);
    EXECUTE format('DROP TABLE %I', old);
END $$;

ALTER SEQUENCE dead_letters_id_seq OWNED BY NONE;
SELECT scantrack_partition_table('sightings', 'first_seen', 'event_id');
SELECT scantrack_partition_table('noreads', 'first_seen', 'event_id');
SELECT scantrack_partition_table('session_events', 'event_time', 'event_id');
SELECT scantrack_partition_table('heartbeats', 'time', 'event_id');
SELECT scantrack_partition_table('dead_letters', 'received_at', 'id');
ALTER SEQUENCE dead_letters_id_seq OWNED BY dead_letters.id;
DROP FUNCTION scantrack_partition_table(text, text, text);

CREATE INDEX sightings_first_seen_idx ON sightings (first_seen);
CREATE INDEX sightings_camera_first_seen_idx ON sightings (camera, first_seen);
CREATE INDEX sightings_value_idx ON sightings (value);
CREATE INDEX sightings_unreconciled_idx ON sightings (first_seen) WHERE NOT reconciled;
CREATE INDEX noreads_first_seen_idx ON noreads (first_seen);
CREATE INDEX noreads_camera_first_seen_idx ON noreads (camera, first_seen);
CREATE INDEX noreads_unsettled_idx ON noreads (first_seen) WHERE NOT settled;
CREATE INDEX session_events_session_idx ON session_events (session_id);
CREATE INDEX session_events_time_idx ON session_events (event_time);
CREATE INDEX session_events_unpacked_idx ON session_events (event_time) WHERE type = 'session.completed' AND NOT packed;
CREATE INDEX heartbeats_camera_time_idx ON heartbeats (camera, time);
CREATE INDEX heartbeats_time_idx ON heartbeats (time);
CREATE INDEX dead_letters_reason_idx ON dead_letters (reason, received_at);

-- The rollups of what is stored already, then triggers keep them as rows arrive.
INSERT INTO read_rollups (bucket, site, camera, lane, status, rule_id, n)
SELECT bucket, site, camera, scantrack_lane(site, camera, lane), status, rule_id, sum(n)
FROM (SELECT scantrack_bucket(first_seen) AS bucket, site, camera, lane, status, coalesce(rule_id, '') AS rule_id,
             count(*) AS n FROM sightings GROUP BY 1, 2, 3, 4, 5, 6
      UNION ALL
      SELECT scantrack_bucket(first_seen), site, camera, lane, 'noread', '', count(*) FROM noreads GROUP BY 1, 2, 3, 4) g
GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO pass_rollups (bucket, site, lane, passes, partial)
SELECT scantrack_bucket(first_seen), site, lane, count(*), count(*) FILTER (WHERE cameras_seen < cameras_expected)
FROM item_passes GROUP BY 1, 2, 3;
SELECT scantrack_rollup_heartbeats_in(array_agg(bucket), array_agg(camera))
FROM (SELECT DISTINCT scantrack_bucket(time) AS bucket, camera FROM heartbeats) t;

CREATE TRIGGER sightings_rollup AFTER INSERT ON sightings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scantrack_rollup_reads();
CREATE TRIGGER noreads_rollup AFTER INSERT ON noreads
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scantrack_rollup_reads();
CREATE TRIGGER item_passes_rollup_insert AFTER INSERT ON item_passes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scantrack_rollup_passes();
CREATE TRIGGER item_passes_rollup_update AFTER UPDATE ON item_passes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scantrack_rollup_passes();
CREATE TRIGGER item_passes_rollup_delete AFTER DELETE ON item_passes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION scantrack_rollup_passes();
CREATE TRIGGER heartbeats_rollup AFTER INSERT ON heartbeats
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION scantrack_rollup_heartbeats();

CREATE INDEX read_rollups_site_bucket_idx ON read_rollups (site, bucket);
CREATE INDEX pass_rollups_site_bucket_idx ON pass_rollups (site, bucket);
