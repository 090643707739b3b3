-- ScanTrack's PostgreSQL roles: each program works with its own, none owns a table or can drop one.
--   scantrack_writer    scan-aggregator: stores events, passes, packs and rollups; makes and drops
--                       day partitions through the maintenance functions (migration 0008)
--   scantrack_operator  scanadmin: rules, orders, topology, retention settings and runs
--   scantrack_reporter  reports, the dashboard, BI tools: reads only
-- Applied by `scanadmin migrate --roles` (and by `--login`, which also makes each program's login
-- from a password file), run by the owner of the schema after the migrations; or by hand:
--   psql "$SCANTRACK_PG" -v ON_ERROR_STOP=1 -f migrations/roles/roles.sql
-- Then give each program a login of its own, with a password kept out of its DSN
-- (SCANTRACK_PG_PASSWORD_FILE, ~/.pgpass): `scanadmin migrate --login writer=aggregator:FILE …`, or
--   CREATE ROLE aggregator LOGIN PASSWORD '…' IN ROLE scantrack_writer;
-- and require password authentication over TLS in pg_hba.conf (`hostssl … scram-sha-256`), the
-- programs connecting with `sslmode=verify-full sslrootcert=…` in SCANTRACK_PG.

DO $$
DECLARE
    role text;
BEGIN
    FOREACH role IN ARRAY ARRAY['scantrack_writer', 'scantrack_operator', 'scantrack_reporter'] LOOP
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = role) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', role);
        END IF;
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), role);
        -- No temporary tables: one could stand in for a table of ours in a function that does not
        -- name its schema (the maintenance functions also put pg_temp last in their search_path).
        EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM %I', current_database(), role);
    END LOOP;
    -- Every role has TEMPORARY through PUBLIC unless it is taken from PUBLIC too.
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;

GRANT USAGE ON SCHEMA public TO scantrack_writer, scantrack_operator, scantrack_reporter;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO scantrack_writer, scantrack_operator, scantrack_reporter;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO scantrack_writer, scantrack_operator, scantrack_reporter;

GRANT INSERT, UPDATE, DELETE ON
    sightings, noreads, session_events, heartbeats, dead_letters, cameras, item_passes, item_sightings,
    lane_watermarks, pack_records, pack_lines, read_rollups, pass_rollups, heartbeat_rollups,
    sites, lanes, lane_cameras, stations, reading_events, parcels, decisions, parcel_passes, measurements
    TO scantrack_writer;
GRANT USAGE ON SEQUENCE dead_letters_id_seq TO scantrack_writer;

GRANT INSERT, UPDATE, DELETE ON ruleset_revisions, orders, order_lines, sites, lanes, lane_cameras, stations
    TO scantrack_operator;
-- A no-read's coding is written once by the operator and only marked given to its parcel pass
-- and published by the aggregator; who stored it (db_role), when (keyed_at) and whether it went
-- out are the database's to say.
GRANT INSERT (site, camera, noread_id, lane, noread_first_seen, outcome, code, symbology, gs1, item_id,
              parcel_pass_id, keyed_by) ON noread_codings TO scantrack_operator;
GRANT UPDATE (published, applied) ON noread_codings TO scantrack_writer;
GRANT USAGE ON SEQUENCE ruleset_revisions_revision_seq TO scantrack_operator;

GRANT EXECUTE ON FUNCTION scantrack_create_day_partition(text, date), scantrack_drop_day_partition(text, date),
    scantrack_expire_default(text, timestamptz, boolean), scantrack_default_days(text),
    scantrack_expire_rollups(timestamptz, boolean)
    TO scantrack_writer, scantrack_operator;
GRANT EXECUTE ON FUNCTION scantrack_set_retention(text, integer) TO scantrack_operator;
-- Orders (from the WMS over NATS, or `scanadmin orders import`) only through the function that
-- checks their revision: the aggregator may not delete or rewrite orders otherwise.
GRANT EXECUTE ON FUNCTION
    scantrack_apply_order(text, text, integer, boolean, integer[], text[], integer[], text)
    TO scantrack_writer, scantrack_operator;
