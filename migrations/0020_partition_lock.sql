-- A day partition made while rows of that day are being written: between moving the default
-- partition's rows of the day into the new table and attaching it, an insert could route another
-- row of the day into the default partition, and the attach then failed ("updated partition
-- constraint for default partition would be violated"), again on every retry while ingest went on.
-- Writes to the parent are now held back (SHARE ROW EXCLUSIVE conflicts with an insert's ROW
-- EXCLUSIVE, taken before its rows are routed) from the move until the attach commits; the lock
-- is taken before anything else, so an insert waiting for it routes to the new partition.
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
    EXECUTE format('LOCK TABLE public.%I IN SHARE ROW EXCLUSIVE MODE', parent);
    -- Another replica made it while this one waited for the lock.
    IF to_regclass('public.' || quote_ident(name)) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE public.%I (LIKE public.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
    IF to_regclass('public.' || quote_ident(parent || '_default')) IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM public.%I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO public.%I SELECT * FROM moved',
                       parent || '_default', col, col, name) USING lower, upper;
    END IF;
    EXECUTE format('ALTER TABLE public.%I ATTACH PARTITION public.%I FOR VALUES FROM (%L) TO (%L)', parent, name, lower, upper);
    RETURN true;
END $$;
