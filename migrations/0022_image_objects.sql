-- Pictures in the images bucket (JetStream Object Store SCANTRACK_IMAGES): a parcel's and a
-- no-read's row names its object (`<site>/<camera>/<kind>/<id>.jpg`), when the agent kept one
-- (`images.keep`), and so do the sightings of a parcel's codes (set when the parcel is stored:
-- a sighting is sent before its parcel's picture is chosen). The picture itself stays in the
-- bucket; `scanadmin images get NAME` reads it.
ALTER TABLE parcels ADD COLUMN image_object text;
ALTER TABLE noreads ADD COLUMN image_object text;
ALTER TABLE sightings ADD COLUMN image_object text;
CREATE INDEX parcels_image_object_idx ON parcels (image_object) WHERE image_object IS NOT NULL;
CREATE INDEX noreads_image_object_idx ON noreads (image_object) WHERE image_object IS NOT NULL;
