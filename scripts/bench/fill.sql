-- A site filled with :days days of :cameras lane cameras (two a lane) and :stations pack stations,
-- ending now: :per_camera sightings a camera a day (2 % rejected), one item pass a lane for each
-- pair of sightings, a heartbeat a camera every 5 s, 1 % no-reads (without pictures), :packs pack
-- records a station a day. Run by scripts/bench.sh with psql -v days=… -v cameras=… after
-- `scanadmin migrate`; the topology comes from `scanadmin topology load`. Triggers keep the rollups.
\set ON_ERROR_STOP on
SET synchronous_commit = off;
SET maintenance_work_mem = '512MB';

-- The day partitions of the filled days (the aggregator makes only today's and the next ones).
SELECT count(scantrack_create_day_partition(t, d::date)) AS partitions
FROM unnest(ARRAY['sightings', 'noreads', 'heartbeats']) t,
     generate_series((now() AT TIME ZONE 'UTC')::date - :days - 1, (now() AT TIME ZONE 'UTC')::date, interval '1 day') d \gset

CREATE TEMP TABLE fill_cameras AS
SELECT c, 'cam-' || lpad(c::text, 2, '0') AS camera, 'L' || lpad(((c + 1) / 2)::text, 2, '0') AS lane
FROM generate_series(1, :cameras) c;

INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, rule_id, lane, first_seen, last_seen,
                       first_frame, last_frame, frames, decodes, event_time, body, reconciled)
SELECT 'fill-' || f.camera || '-' || i, 'dc1', f.camera, f.camera || '-t' || i, 'EAN-13', (4006381000000 + i % 5000)::text,
       CASE WHEN i % 50 = 0 THEN 'rejected' ELSE 'accepted' END, CASE WHEN i % 50 = 0 THEN 'unwanted-prefix' END, f.lane,
       t, t + interval '900 ms', i * 40, i * 40 + 27, 28, 21, t + interval '1 s',
       '{"type": "sighting", "symbology": "EAN-13", "box": {"first": [[120, 40], [310, 130]], "last": [[980, 44], [1170, 134]]}, "frames": 28, "decodes": 21, "decoder": "zbar"}',
       true
FROM fill_cameras f, generate_series(0, :per_camera * :days - 1) i,
     LATERAL (SELECT now() - :days * interval '1 day' + i * (interval '1 day' / :per_camera) AS t) x;

INSERT INTO item_passes (item_id, site, lane, symbology, value, first_seen, last_seen, cameras_expected, cameras_seen,
                         revision, published_revision, closed_at, updated_at)
SELECT 'fill-' || f.lane || '-' || i, 'dc1', f.lane, 'EAN-13', (4006381000000 + i % 5000)::text, t, t + interval '1.6 s',
       2, CASE WHEN i % 100 = 0 THEN 1 ELSE 2 END, 1, 1, t + interval '4 s', t + interval '4 s'
FROM (SELECT DISTINCT lane FROM fill_cameras) f, generate_series(0, :per_camera * :days - 1) i,
     LATERAL (SELECT now() - :days * interval '1 day' + i * (interval '1 day' / :per_camera) AS t) x;

INSERT INTO noreads (event_id, site, camera, lane, track_id, family, first_seen, last_seen, frames, sharpness, settled, body)
SELECT 'fill-' || f.camera || '-n' || i, 'dc1', f.camera, f.lane, f.camera || '-n' || i, 'linear', t, t + interval '900 ms',
       24, 31.5, true, '{"type": "noread", "family": "linear"}'
FROM fill_cameras f, generate_series(0, :per_camera / 100 * :days - 1) i,
     LATERAL (SELECT now() - :days * interval '1 day' + i * (interval '1 day' / (:per_camera / 100)) + interval '7 s' AS t) x;

INSERT INTO heartbeats (event_id, site, camera, run_id, time, fps_in, fps_processed, frames_dropped, live_tracks, spool_depth,
                        nats, rules_revision, body)
SELECT 'fill-' || f.camera || '.status.' || i, 'dc1', f.camera, 'r' || (i / 17280), t, 30, 29.9, i / 1000, 3, 0, 'connected', '7',
       jsonb_build_object('type', 'status', 'lane', f.lane, 'paused', false, 'source', jsonb_build_object('type', 'v4l2', 'state', 'streaming'),
                          'fpsIn', 30, 'fpsProcessed', 29.9, 'framesDropped', i / 1000, 'liveTracks', 3,
                          'spool', jsonb_build_object('depth', 0, 'bytes', 0), 'nats', 'connected',
                          'rules', jsonb_build_object('revision', '7', 'source', 'bucket'))
FROM fill_cameras f, generate_series(0, 17280 * :days - 1) i,
     LATERAL (SELECT now() - :days * interval '1 day' + i * interval '5 s' AS t) x;

INSERT INTO cameras (camera, site, lane, station, last_status, last_seen)
SELECT DISTINCT ON (camera) camera, site, body->>'lane', '', body, time FROM heartbeats ORDER BY camera, time DESC
ON CONFLICT (camera) DO UPDATE SET last_status = EXCLUDED.last_status, last_seen = EXCLUDED.last_seen;

INSERT INTO pack_records (session_id, site, station, camera, order_id, verdict, started_at, completed_at, items, published)
SELECT 'fill-s' || s || '-' || i, 'dc1', 'pack-' || lpad(s::text, 2, '0'), 'pcam-' || lpad(s::text, 2, '0'), 'ORD-' || i,
       (ARRAY['complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'short', 'over', 'unexpected', 'unknown-order'])[i % 10 + 1],
       t - interval '40 s', t, 3, true
FROM generate_series(1, :stations) s, generate_series(0, :packs * :days - 1) i,
     LATERAL (SELECT now() - :days * interval '1 day' + i * (interval '1 day' / :packs) AS t) x;

ANALYZE;
