-- Workflow state of the charter agents, SQLite dialect of
-- ../postgres/0001_workflow_state.sql for the embedded database: the same
-- tables, columns, keys and defaults (a test compares them). Types keep
-- PostgreSQL's names; timestamps are ISO 8601 text in UTC, JSON is text
-- checked by json_valid, booleans are 0 and 1. calculate_quote_scores is a
-- function the server registers with the database connection.

CREATE TABLE IF NOT EXISTS iso_requests (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  client_name TEXT,
  client_email TEXT,
  departure_airport TEXT,
  arrival_airport TEXT,
  departure_date DATE,
  passengers INTEGER,
  status TEXT NOT NULL DEFAULT 'new',
  details JSONB NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
  created_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);

CREATE TABLE IF NOT EXISTS iso_workflows (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  request_id TEXT NOT NULL REFERENCES iso_requests (id),
  state TEXT NOT NULL DEFAULT 'CREATED',
  priority TEXT NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  metadata JSONB NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
  email_sent_at TIMESTAMPTZ,
  email_message_id TEXT,
  failed_at TIMESTAMPTZ,
  failure_reason TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);
CREATE INDEX IF NOT EXISTS iso_workflows_request_id ON iso_workflows (request_id);

CREATE TABLE IF NOT EXISTS flight_options (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  request_id TEXT NOT NULL REFERENCES iso_requests (id),
  rfp_id TEXT,
  flights JSONB NOT NULL DEFAULT '[]' CHECK (json_valid(flights)),
  empty_legs JSONB NOT NULL DEFAULT '[]' CHECK (json_valid(empty_legs)),
  created_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);
CREATE INDEX IF NOT EXISTS flight_options_request_id ON flight_options (request_id);

CREATE TABLE IF NOT EXISTS quotes (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  rfp_id TEXT NOT NULL,
  request_id TEXT REFERENCES iso_requests (id),
  operator_id TEXT,
  operator_name TEXT,
  aircraft_type TEXT,
  aircraft_id TEXT,
  base_price_usd NUMERIC,
  taxes_fees_usd NUMERIC,
  total_price_usd NUMERIC,
  safety_rating NUMERIC,
  comfort_rating NUMERIC,
  flight_time_minutes INTEGER,
  response_time_minutes INTEGER,
  valid_until TIMESTAMPTZ,
  status TEXT NOT NULL DEFAULT 'received',
  notes TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);
CREATE INDEX IF NOT EXISTS quotes_rfp_id ON quotes (rfp_id);

CREATE TABLE IF NOT EXISTS quote_scores (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  rfp_id TEXT NOT NULL,
  quote_id TEXT NOT NULL UNIQUE REFERENCES quotes (id),
  price_score NUMERIC,
  safety_score NUMERIC,
  speed_score NUMERIC,
  comfort_score NUMERIC,
  total_score NUMERIC,
  rank INTEGER,
  created_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);
CREATE INDEX IF NOT EXISTS quote_scores_rfp_id ON quote_scores (rfp_id);

CREATE VIEW IF NOT EXISTS ranked_proposals AS
SELECT s.quote_id, q.request_id, s.rfp_id, s.rank, s.total_score, s.price_score, s.safety_score,
       s.speed_score, s.comfort_score, q.operator_name, q.aircraft_type, q.total_price_usd, q.valid_until
FROM quote_scores s JOIN quotes q ON q.id = s.quote_id;

CREATE TABLE IF NOT EXISTS client_cache (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  client_id TEXT,
  email TEXT NOT NULL UNIQUE,
  name TEXT,
  company TEXT,
  phone TEXT,
  vip_status TEXT,
  preferences JSONB NOT NULL DEFAULT '{}' CHECK (json_valid(preferences)),
  profile JSONB NOT NULL DEFAULT '{}' CHECK (json_valid(profile)),
  cached_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);

CREATE TABLE IF NOT EXISTS agent_errors (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  workflow_id TEXT,
  agent_type TEXT NOT NULL,
  task_id TEXT,
  error_type TEXT NOT NULL,
  error_message TEXT,
  retry_count INTEGER NOT NULL DEFAULT 0,
  stack_trace TEXT,
  occurred_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
  resolved_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS agent_errors_task_id ON agent_errors (task_id);

-- Written by the Avinode webhook receiver; agents read it.
CREATE TABLE IF NOT EXISTS avinode_webhook_events (
  id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  event_type TEXT NOT NULL,
  avinode_event_id TEXT NOT NULL UNIQUE,
  avinode_timestamp TIMESTAMPTZ,
  avinode_rfp_id TEXT,
  avinode_quote_id TEXT,
  avinode_trip_id TEXT,
  raw_payload JSONB NOT NULL CHECK (json_valid(raw_payload)),
  processing_status TEXT NOT NULL DEFAULT 'pending',
  processed_at TIMESTAMPTZ,
  error_message TEXT,
  retry_count INTEGER NOT NULL DEFAULT 0,
  next_retry_at TIMESTAMPTZ,
  max_retries INTEGER NOT NULL DEFAULT 5,
  received_at TIMESTAMPTZ NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))
);
