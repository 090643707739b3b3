-- Security hardening (docs/security.md, "Threat model").
--
-- 1. Events are unique per camera: a camera that publishes an event id another camera will use
--    can no longer make that camera's event a "duplicate". Keys become (site, camera, event id,
--    time column); the time column stays in them because it is the partition key.
ALTER TABLE sightings DROP CONSTRAINT sightings_pkey, ADD PRIMARY KEY (site, camera, event_id, first_seen);
ALTER TABLE noreads DROP CONSTRAINT noreads_pkey, ADD PRIMARY KEY (site, camera, event_id, first_seen);
ALTER TABLE session_events DROP CONSTRAINT session_events_pkey, ADD PRIMARY KEY (site, camera, event_id, event_time);
ALTER TABLE heartbeats DROP CONSTRAINT heartbeats_pkey, ADD PRIMARY KEY (site, camera, event_id, time);

-- 2. The maintenance functions run with their owner's rights, so they no longer trust the caller's
--    day or cutoff: each derives the oldest day it may touch from `retention_settings` itself,
--    and never touches the current UTC day, the day before or a later one. A caller may ask for
--    less (an older cutoff), never for more. Their search_path ends in pg_temp, so a temporary
--    table of the caller's cannot stand in for one of ours.

-- The first UTC day a table keeps: retention_settings' days before today, and never later than
-- yesterday; NULL when the table keeps every day (days = 0). `parent` 'rollups' for the rollups.
CREATE FUNCTION scantrack_keep_from(parent text) RETURNS date
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    keep integer;
    today date := (now() AT TIME ZONE 'UTC')::date;
BEGIN
    SELECT days INTO keep FROM public.retention_settings WHERE table_name = parent;
    IF keep IS NULL THEN
        RAISE EXCEPTION 'ScanTrack: % has no retention setting', parent USING ERRCODE = '42501';
    END IF;
    IF keep = 0 THEN
        RETURN NULL;
    END IF;
    RETURN least(today - keep, today - 1);
END $$;

CREATE OR REPLACE FUNCTION scantrack_time_series(parent text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    col text;
BEGIN
    SELECT time_column INTO col FROM public.retention_settings WHERE table_name = parent AND table_name <> 'rollups';
    IF col IS NULL THEN
        RAISE EXCEPTION 'ScanTrack: % is not a time-series table', parent USING ERRCODE = '42501';
    END IF;
    RETURN col;
END $$;

CREATE OR REPLACE FUNCTION scantrack_drop_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    name text := parent || '_' || to_char(day, 'YYYYMMDD');
    keep_from date;
BEGIN
    PERFORM public.scantrack_time_series(parent);
    keep_from := public.scantrack_keep_from(parent);
    IF keep_from IS NULL OR day IS NULL OR day >= keep_from THEN
        RAISE EXCEPTION 'ScanTrack: % of % is kept (retention keeps % days; today and yesterday are never dropped)',
            day, parent, (SELECT days FROM public.retention_settings WHERE table_name = parent)
            USING ERRCODE = '42501';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhparent = ('public.' || quote_ident(parent))::regclass
                   AND inhrelid = to_regclass('public.' || quote_ident(name))) THEN
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE public.%I', name);
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION scantrack_expire_default(parent text, cutoff timestamptz, remove boolean) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    col text := public.scantrack_time_series(parent);
    keep_from date := public.scantrack_keep_from(parent);
    bound timestamptz;
    n bigint;
BEGIN
    IF keep_from IS NULL OR cutoff IS NULL THEN
        RETURN 0;
    END IF;
    bound := least(cutoff, keep_from::timestamp AT TIME ZONE 'UTC');
    IF remove THEN
        EXECUTE format('DELETE FROM public.%I WHERE %I < $1', parent || '_default', col) USING bound;
        GET DIAGNOSTICS n = ROW_COUNT;
    ELSE
        EXECUTE format('SELECT count(*) FROM public.%I WHERE %I < $1', parent || '_default', col) INTO n USING bound;
    END IF;
    RETURN n;
END $$;

CREATE OR REPLACE FUNCTION scantrack_expire_rollups(cutoff timestamptz, remove boolean) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    total bigint := 0;
    n bigint;
    rollup text;
    keep_from date := public.scantrack_keep_from('rollups');
    bound timestamptz;
BEGIN
    IF keep_from IS NULL OR cutoff IS NULL THEN
        RETURN 0;
    END IF;
    bound := least(cutoff, keep_from::timestamp AT TIME ZONE 'UTC');
    FOREACH rollup IN ARRAY ARRAY['read_rollups', 'pass_rollups', 'heartbeat_rollups'] LOOP
        IF remove THEN
            EXECUTE format('DELETE FROM public.%I WHERE bucket < $1', rollup) USING bound;
            GET DIAGNOSTICS n = ROW_COUNT;
        ELSE
            EXECUTE format('SELECT count(*) FROM public.%I WHERE bucket < $1', rollup) INTO n USING bound;
        END IF;
        total := total + n;
    END LOOP;
    RETURN total;
END $$;

-- The partition maker, with every name it creates or reads qualified (its search_path starts with
-- pg_catalog, where nothing may be created).
CREATE OR REPLACE FUNCTION scantrack_create_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    name   text := parent || '_' || to_char(day, 'YYYYMMDD');
    col    text;
    lower  timestamptz := day::timestamp AT TIME ZONE 'UTC';
    upper  timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF to_regclass('public.' || quote_ident(name)) IS NOT NULL THEN
        RETURN false;
    END IF;
    SELECT time_column INTO STRICT col FROM public.retention_settings WHERE table_name = parent;
    EXECUTE format('CREATE TABLE public.%I (LIKE public.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
    IF to_regclass('public.' || quote_ident(parent || '_default')) IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM public.%I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO public.%I SELECT * FROM moved',
                       parent || '_default', col, col, name) USING lower, upper;
    END IF;
    EXECUTE format('ALTER TABLE public.%I ATTACH PARTITION public.%I FOR VALUES FROM (%L) TO (%L)', parent, name, lower, upper);
    RETURN true;
END $$;
CREATE OR REPLACE FUNCTION scantrack_default_days(parent text) RETURNS SETOF date
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT DISTINCT (%I AT TIME ZONE ''UTC'')::date FROM public.%I',
                                public.scantrack_time_series(parent), parent || '_default');
END $$;
CREATE OR REPLACE FUNCTION scantrack_set_retention(name text, keep integer) RETURNS boolean
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    UPDATE public.retention_settings SET days = keep, updated_at = now() WHERE table_name = name RETURNING true
$$;
REVOKE ALL ON FUNCTION scantrack_keep_from(text) FROM PUBLIC;
