-- No-reads resolved by a person from their picture ("video coding", `scanadmin noreads resolve`):
-- one row per no-read (its sender's site and camera and its event id), written once. `outcome` is
-- what they said: the code they keyed (`keyed`, with the code as a camera would have sent it, and
-- whether it is GS1 data), or that there was no label (`no-label`) or no parcel (`not-a-parcel`).
-- `keyed_by` is the name they gave, `db_role` the database login that stored it (the audit). The
-- aggregator publishes each row once as a `coded` result (`published`), and gives one that names a
-- parcel pass to that pass once (`applied`): the pass's `codings`, a new revision. The row copies what the
-- result names of its no-read (lane, first seen, the item and parcel passes it belongs to) so that
-- it stands when the no-read's day partition is dropped: codings are kept as the audit trail.
CREATE TABLE noread_codings (
    site              text        NOT NULL,
    camera            text        NOT NULL,
    noread_id         text        NOT NULL,
    lane              text        NOT NULL,
    noread_first_seen timestamptz NOT NULL,
    outcome           text        NOT NULL CHECK (outcome IN ('keyed', 'no-label', 'not-a-parcel')),
    code              text,
    symbology         text,
    gs1               boolean     NOT NULL DEFAULT false,
    item_id           text,
    parcel_pass_id    text,
    keyed_by          text        NOT NULL,
    db_role           text        NOT NULL DEFAULT current_user,
    keyed_at          timestamptz NOT NULL DEFAULT now(),
    published         boolean     NOT NULL DEFAULT false,
    applied           boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (site, camera, noread_id),
    CHECK ((outcome = 'keyed') = (code IS NOT NULL))
);
CREATE INDEX noread_codings_unpublished_idx ON noread_codings (keyed_at) WHERE NOT published;
CREATE INDEX noread_codings_keyed_at_idx ON noread_codings (keyed_at);
CREATE INDEX noread_codings_unapplied_idx ON noread_codings (keyed_at) WHERE NOT applied AND parcel_pass_id IS NOT NULL;

-- What people said of a parcel pass's no-reads, as its revisions carry it (a JSON list).
ALTER TABLE parcel_passes ADD COLUMN codings jsonb NOT NULL DEFAULT '[]'::jsonb;
