-- Divert decisions the aggregator makes for the parcel passes of a lane whose topology has a
-- `decision` object (docs/topology.md): the lane keeps that object, and the aggregator's own
-- decisions wait in `decisions` until JetStream has them (`published`; what agents send is
-- stored as received, published already).
ALTER TABLE lanes ADD COLUMN decision jsonb;
ALTER TABLE decisions ADD COLUMN published boolean NOT NULL DEFAULT true;
CREATE INDEX decisions_unpublished_idx ON decisions (closed_at) WHERE NOT published;
