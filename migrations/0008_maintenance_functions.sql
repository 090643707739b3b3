-- Partition maintenance through functions that run with their owner's rights (the owner of the
-- schema, who migrates it), so the aggregator's role may make and drop day partitions without
-- owning, or being able to drop, any table (migrations/roles/roles.sql grants EXECUTE on them).

ALTER FUNCTION scantrack_create_day_partition(text, date) SECURITY DEFINER SET search_path = public;

-- The time-series table a name is, or an error: the only tables these functions touch.
CREATE FUNCTION scantrack_time_series(parent text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = public AS $$
DECLARE
    col text;
BEGIN
    SELECT time_column INTO col FROM retention_settings WHERE table_name = parent AND table_name <> 'rollups';
    IF col IS NULL THEN
        RAISE EXCEPTION 'ScanTrack: % is not a time-series table', parent USING ERRCODE = '42501';
    END IF;
    RETURN col;
END $$;

-- Drops one day partition (TABLE_YYYYMMDD of a time-series table); false when it does not exist.
CREATE FUNCTION scantrack_drop_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
    name text := parent || '_' || to_char(day, 'YYYYMMDD');
BEGIN
    PERFORM scantrack_time_series(parent);
    IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhparent = parent::regclass
                   AND inhrelid = to_regclass(quote_ident(name))) THEN
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE %I', name);
    RETURN true;
END $$;

-- The rows of a default partition older than `cutoff`: counted, or deleted (`remove`).
CREATE FUNCTION scantrack_expire_default(parent text, cutoff timestamptz, remove boolean) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
    col text := scantrack_time_series(parent);
    n bigint;
BEGIN
    IF remove THEN
        EXECUTE format('DELETE FROM %I WHERE %I < $1', parent || '_default', col) USING cutoff;
        GET DIAGNOSTICS n = ROW_COUNT;
    ELSE
        EXECUTE format('SELECT count(*) FROM %I WHERE %I < $1', parent || '_default', col) INTO n USING cutoff;
    END IF;
    RETURN n;
END $$;

-- The UTC days of the rows waiting in a default partition.
CREATE FUNCTION scantrack_default_days(parent text) RETURNS SETOF date
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT DISTINCT (%I AT TIME ZONE ''UTC'')::date FROM %I',
                                scantrack_time_series(parent), parent || '_default');
END $$;

-- Rollup rows older than `cutoff`: counted, or deleted (`remove`).
CREATE FUNCTION scantrack_expire_rollups(cutoff timestamptz, remove boolean) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
    total bigint := 0;
    n bigint;
    rollup text;
BEGIN
    FOREACH rollup IN ARRAY ARRAY['read_rollups', 'pass_rollups', 'heartbeat_rollups'] LOOP
        IF remove THEN
            EXECUTE format('DELETE FROM %I WHERE bucket < $1', rollup) USING cutoff;
            GET DIAGNOSTICS n = ROW_COUNT;
        ELSE
            EXECUTE format('SELECT count(*) FROM %I WHERE bucket < $1', rollup) INTO n USING cutoff;
        END IF;
        total := total + n;
    END LOOP;
    RETURN total;
END $$;

-- Setting a table's retention days (a check of the name and the days, then the update).
CREATE FUNCTION scantrack_set_retention(name text, keep integer) RETURNS boolean
LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
    UPDATE retention_settings SET days = keep, updated_at = now() WHERE table_name = name RETURNING true
$$;

REVOKE ALL ON FUNCTION scantrack_create_day_partition(text, date), scantrack_drop_day_partition(text, date),
    scantrack_expire_default(text, timestamptz, boolean), scantrack_default_days(text),
    scantrack_expire_rollups(timestamptz, boolean), scantrack_set_retention(text, integer) FROM PUBLIC;
