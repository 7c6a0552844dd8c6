-- The local marketplace store: what the tools read. Written by the Avinode
-- client (after every call that brings data back), by the simulated
-- marketplace, and by whatever else learns of quotes and messages. The SQL is
-- the subset SQLite and PostgreSQL share: TEXT timestamps in fixed-width UTC
-- ISO 8601 (so they sort as text), amounts in integer cents, JSON in TEXT.

CREATE TABLE trips (
  id                 TEXT PRIMARY KEY,
  display_id         TEXT NOT NULL DEFAULT '',
  external_reference TEXT NOT NULL DEFAULT '',
  status             TEXT NOT NULL,
  aircraft_category  TEXT NOT NULL DEFAULT '',
  notes              TEXT NOT NULL DEFAULT '',
  segments           TEXT NOT NULL,
  links              TEXT NOT NULL,
  cancel_reason      TEXT NOT NULL DEFAULT '',
  cancel_message     TEXT NOT NULL DEFAULT '',
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
CREATE INDEX trips_created ON trips (created_at);

CREATE TABLE rfqs (
  id              TEXT PRIMARY KEY,
  trip_id         TEXT NOT NULL REFERENCES trips (id),
  seller_id       TEXT NOT NULL DEFAULT '',
  seller_name     TEXT NOT NULL DEFAULT '',
  seller_country  TEXT NOT NULL DEFAULT '',
  status          TEXT NOT NULL,
  decline_reason  TEXT NOT NULL DEFAULT '',
  decline_message TEXT NOT NULL DEFAULT '',
  lifts           TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  responded_at    TEXT,
  updated_at      TEXT NOT NULL
);
CREATE INDEX rfqs_trip ON rfqs (trip_id, created_at);

CREATE TABLE quotes (
  id                TEXT PRIMARY KEY,
  rfq_id            TEXT NOT NULL REFERENCES rfqs (id),
  trip_id           TEXT NOT NULL REFERENCES trips (id),
  lift_id           TEXT NOT NULL DEFAULT '',
  operator_id       TEXT NOT NULL DEFAULT '',
  operator_name     TEXT NOT NULL DEFAULT '',
  aircraft_type     TEXT NOT NULL DEFAULT '',
  aircraft_category TEXT NOT NULL DEFAULT '',
  aircraft_tail     TEXT NOT NULL DEFAULT '',
  aircraft_capacity INTEGER NOT NULL DEFAULT 0,
  year_of_make      INTEGER NOT NULL DEFAULT 0,
  currency          TEXT NOT NULL,
  base_cents        BIGINT NOT NULL,
  taxes_fees_cents  BIGINT NOT NULL,
  total_cents       BIGINT NOT NULL,
  breakdown         TEXT NOT NULL,
  valid_until       TEXT,
  status            TEXT NOT NULL,
  seller_message    TEXT NOT NULL DEFAULT '',
  received_at       TEXT NOT NULL,
  updated_at        TEXT NOT NULL
);
CREATE INDEX quotes_trip ON quotes (trip_id, received_at);
CREATE INDEX quotes_rfq ON quotes (rfq_id, received_at);

CREATE TABLE messages (
  id        TEXT PRIMARY KEY,
  rfq_id    TEXT NOT NULL REFERENCES rfqs (id),
  trip_id   TEXT NOT NULL REFERENCES trips (id),
  direction TEXT NOT NULL,
  sender    TEXT NOT NULL DEFAULT '',
  body      TEXT NOT NULL,
  sent_at   TEXT NOT NULL
);
CREATE INDEX messages_rfq ON messages (rfq_id, sent_at);

CREATE TABLE watches (
  id                TEXT PRIMARY KEY,
  name              TEXT NOT NULL,
  departure_airport TEXT NOT NULL DEFAULT '',
  arrival_airport   TEXT NOT NULL DEFAULT '',
  aircraft_category TEXT NOT NULL DEFAULT '',
  days_out          INTEGER NOT NULL DEFAULT 0,
  active            INTEGER NOT NULL DEFAULT 1,
  created_at        TEXT NOT NULL
);

-- Counters for the identifiers the simulated marketplace hands out.
CREATE TABLE sequences (
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL
);

-- The simulated marketplace's scheduled seller events (a quote, a decline,
-- a chat reply), delivered once when due by whichever process claims them.
CREATE TABLE mock_events (
  id      TEXT PRIMARY KEY,
  trip_id TEXT NOT NULL REFERENCES trips (id),
  rfq_id  TEXT NOT NULL REFERENCES rfqs (id),
  kind    TEXT NOT NULL,
  due_at  TEXT NOT NULL,
  payload TEXT NOT NULL,
  done_at TEXT
);
CREATE INDEX mock_events_due ON mock_events (due_at);
