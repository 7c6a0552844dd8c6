-- Every create_trip this server makes, recorded before the request goes to
-- the marketplace and completed with the trip's id after: when a POST /trips
-- fails in a way that leaves its outcome unknown (a 5xx, a timeout, a lost
-- connection), the record says which reference and legs were attempted, so
-- that find_trips can tell a caller what to check before creating the trip
-- again. Avinode's API has no search of trips by external reference; this
-- record is the local substitute.
CREATE TABLE trip_attempts (
  reference   TEXT PRIMARY KEY,
  state       TEXT NOT NULL,
  trip_id     TEXT NOT NULL DEFAULT '',
  segments    TEXT NOT NULL,
  detail      TEXT NOT NULL DEFAULT '',
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX trip_attempts_created ON trip_attempts (created_at);
CREATE INDEX trips_external_reference ON trips (external_reference);
