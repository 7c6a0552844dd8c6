-- Webhook notifications and the cross-process change feed. Same subset of
-- SQL as the first migration: TEXT timestamps in fixed-width UTC ISO 8601,
-- JSON in TEXT, so one schema serves SQLite and PostgreSQL.

-- Every notification Avinode (or the simulated marketplace) posts: stored
-- before it is acknowledged, then claimed by one worker at a time, fetched
-- and applied to the tables the tools read. A notification is a pointer
-- ({"id","href","type","tripId"}): avinode_event_id is its id, unique, so a
-- redelivery finds the row it already has.
CREATE TABLE avinode_webhook_events (
  id                     TEXT PRIMARY KEY,
  avinode_event_id       TEXT NOT NULL UNIQUE,
  -- What processing found (quote_received, quote_updated, rfq_declined,
  -- rfq_cancelled, rfq_updated, message_received, unchanged, unsupported);
  -- before that, what the pointer's type suggests.
  event_type             TEXT NOT NULL,
  -- The pointer's own type: rfqs, tripmsgs, …
  resource_type          TEXT NOT NULL,
  href                   TEXT NOT NULL,
  -- The pointer's tripId (Avinode's short trip reference).
  avinode_trip_ref       TEXT NOT NULL DEFAULT '',
  -- The entities processing stored or found.
  trip_id                TEXT NOT NULL DEFAULT '',
  rfq_id                 TEXT NOT NULL DEFAULT '',
  quote_id               TEXT NOT NULL DEFAULT '',
  message_id             TEXT NOT NULL DEFAULT '',
  -- avinode (the receiver) or mock (the simulated marketplace).
  source                 TEXT NOT NULL DEFAULT '',
  source_ip              TEXT NOT NULL DEFAULT '',
  signature_verified     INTEGER NOT NULL DEFAULT 0,
  raw_payload            TEXT NOT NULL,
  parsed_data            TEXT,
  status                 TEXT NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'dead_letter')),
  deliveries             INTEGER NOT NULL DEFAULT 1,
  received_at            TEXT NOT NULL,
  last_received_at       TEXT NOT NULL,
  -- When the latest attempt started, and when processing ended (completed
  -- or dead letter).
  claimed_at             TEXT,
  processed_at           TEXT,
  processing_duration_ms INTEGER,
  error_message          TEXT NOT NULL DEFAULT '',
  retry_count            INTEGER NOT NULL DEFAULT 0,
  max_retries            INTEGER NOT NULL DEFAULT 5,
  -- When a pending or failed event is next due.
  next_retry_at          TEXT,
  requeue_count          INTEGER NOT NULL DEFAULT 0,
  -- The attempt that holds the event while processing it, and until when.
  lease_owner            TEXT NOT NULL DEFAULT '',
  lease_expires_at       TEXT,
  updated_at             TEXT NOT NULL
);
-- What a worker looks for, oldest due first, without reading the rest.
CREATE INDEX avinode_webhook_events_due ON avinode_webhook_events (next_retry_at)
  WHERE status IN ('pending', 'failed');
CREATE INDEX avinode_webhook_events_lease ON avinode_webhook_events (lease_expires_at)
  WHERE status = 'processing';
CREATE INDEX avinode_webhook_events_status ON avinode_webhook_events (status, received_at);
CREATE INDEX avinode_webhook_events_trip ON avinode_webhook_events (trip_id, received_at);
CREATE INDEX avinode_webhook_events_received ON avinode_webhook_events (received_at);

-- Counters bumped in the transaction of every change to a trip (any change,
-- and changes to its RFQs and quotes), so a process learns what another one
-- changed by comparing two numbers.
ALTER TABLE trips ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE trips ADD COLUMN quotes_seq BIGINT NOT NULL DEFAULT 0;

-- The simulated marketplace publishes an answer when it falls due
-- (done_at) with a pointer notification, and applies it once (applied_at)
-- when the pointer is fetched or the trip read. ref is the quote or chat
-- message the answer carries.
ALTER TABLE mock_events ADD COLUMN ref TEXT NOT NULL DEFAULT '';
ALTER TABLE mock_events ADD COLUMN applied_at TEXT;
CREATE INDEX mock_events_rfq ON mock_events (rfq_id);
CREATE INDEX mock_events_ref ON mock_events (ref);
