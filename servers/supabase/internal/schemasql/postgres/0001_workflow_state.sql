-- Workflow state of the charter agents: requests, workflows, flight options,
-- quotes and their scores, the client cache, agent errors, and the read side
-- of the Avinode webhook events. PostgreSQL (and Supabase) dialect; the
-- embedded database uses ../sqlite/0001_workflow_state.sql, which must
-- describe the same tables, columns, keys and defaults (a test compares
-- them). Safe to run more than once.

CREATE TABLE IF NOT EXISTS iso_requests (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  client_name text,
  client_email text,
  departure_airport text,
  arrival_airport text,
  departure_date date,
  passengers integer,
  status text NOT NULL DEFAULT 'new',
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS iso_workflows (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  request_id text NOT NULL REFERENCES iso_requests (id),
  state text NOT NULL DEFAULT 'CREATED',
  priority text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  email_sent_at timestamptz,
  email_message_id text,
  failed_at timestamptz,
  failure_reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS iso_workflows_request_id ON iso_workflows (request_id);

CREATE TABLE IF NOT EXISTS flight_options (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  request_id text NOT NULL REFERENCES iso_requests (id),
  rfp_id text,
  flights jsonb NOT NULL DEFAULT '[]'::jsonb,
  empty_legs jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS flight_options_request_id ON flight_options (request_id);

CREATE TABLE IF NOT EXISTS quotes (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  rfp_id text NOT NULL,
  request_id text REFERENCES iso_requests (id),
  operator_id text,
  operator_name text,
  aircraft_type text,
  aircraft_id text,
  base_price_usd numeric,
  taxes_fees_usd numeric,
  total_price_usd numeric,
  safety_rating numeric,
  comfort_rating numeric,
  flight_time_minutes integer,
  response_time_minutes integer,
  valid_until timestamptz,
  status text NOT NULL DEFAULT 'received',
  notes text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS quotes_rfp_id ON quotes (rfp_id);

CREATE TABLE IF NOT EXISTS quote_scores (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  rfp_id text NOT NULL,
  quote_id text NOT NULL UNIQUE REFERENCES quotes (id),
  price_score numeric,
  safety_score numeric,
  speed_score numeric,
  comfort_score numeric,
  total_score numeric,
  rank integer,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS quote_scores_rfp_id ON quote_scores (rfp_id);

CREATE OR REPLACE VIEW ranked_proposals AS
SELECT s.quote_id, q.request_id, s.rfp_id, s.rank, s.total_score, s.price_score, s.safety_score,
       s.speed_score, s.comfort_score, q.operator_name, q.aircraft_type, q.total_price_usd, q.valid_until
FROM quote_scores s JOIN quotes q ON q.id = s.quote_id;

CREATE TABLE IF NOT EXISTS client_cache (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  client_id text,
  email text NOT NULL UNIQUE,
  name text,
  company text,
  phone text,
  vip_status text,
  preferences jsonb NOT NULL DEFAULT '{}'::jsonb,
  profile jsonb NOT NULL DEFAULT '{}'::jsonb,
  cached_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS agent_errors (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  workflow_id text,
  agent_type text NOT NULL,
  task_id text,
  error_type text NOT NULL,
  error_message text,
  retry_count integer NOT NULL DEFAULT 0,
  stack_trace text,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz
);
CREATE INDEX IF NOT EXISTS agent_errors_task_id ON agent_errors (task_id);

-- Written by the Avinode webhook receiver; agents read it.
CREATE TABLE IF NOT EXISTS avinode_webhook_events (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  event_type text NOT NULL,
  avinode_event_id text NOT NULL UNIQUE,
  avinode_timestamp timestamptz,
  avinode_rfp_id text,
  avinode_quote_id text,
  avinode_trip_id text,
  raw_payload jsonb NOT NULL,
  processing_status text NOT NULL DEFAULT 'pending',
  processed_at timestamptz,
  error_message text,
  retry_count integer NOT NULL DEFAULT 0,
  next_retry_at timestamptz,
  max_retries integer NOT NULL DEFAULT 5,
  received_at timestamptz NOT NULL DEFAULT now()
);

-- Scores charter quotes 0-100 on price, safety, speed and comfort and ranks
-- them. Exact arithmetic only (numeric and bigint), so the embedded
-- database's implementation gives the same results:
--   price:   cheapest = 100, else round(100 * cheapest / price), in cents;
--            over client_preferences.max_budget or without a price: 0
--   safety, comfort: round(rating * 20) of a 0-5 rating, clamped to 0-100
--   speed:   shortest flight_time_minutes = 100, else round(100 * shortest / minutes)
--   total:   round(sum(weight * score) / sum(weight)), weights in 1/10000
--   rank:    total desc, then cheaper, then quote id (byte order)
CREATE OR REPLACE FUNCTION calculate_quote_scores(
  quotes jsonb,
  client_preferences jsonb DEFAULT '{}'::jsonb,
  weights jsonb DEFAULT '{"price": 0.30, "safety": 0.35, "speed": 0.15, "comfort": 0.20}'::jsonb
) RETURNS TABLE (quote_id text, price_score bigint, safety_score bigint, speed_score bigint,
                 comfort_score bigint, total_score bigint, rank bigint)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  w jsonb := coalesce(weights, '{"price": 0.30, "safety": 0.35, "speed": 0.15, "comfort": 0.20}'::jsonb);
  prefs jsonb := coalesce(client_preferences, '{}'::jsonb);
  bad_key text;
  wn numeric[];
  bp bigint[];
  bp_sum bigint;
  budget numeric;
BEGIN
  IF quotes IS NULL OR jsonb_typeof(quotes) <> 'array' THEN
    RAISE EXCEPTION 'quotes must be a JSON array of quote objects' USING ERRCODE = '22023';
  END IF;
  IF jsonb_typeof(prefs) <> 'object' THEN
    RAISE EXCEPTION 'client_preferences must be a JSON object' USING ERRCODE = '22023';
  END IF;
  IF jsonb_typeof(w) <> 'object' THEN
    RAISE EXCEPTION 'weights must be a JSON object with price, safety, speed and comfort' USING ERRCODE = '22023';
  END IF;
  SELECT k INTO bad_key FROM jsonb_object_keys(w) AS k
   WHERE k NOT IN ('price', 'safety', 'speed', 'comfort') ORDER BY k LIMIT 1;
  IF bad_key IS NOT NULL THEN
    RAISE EXCEPTION 'weights: unknown key "%" (expected price, safety, speed, comfort)', bad_key USING ERRCODE = '22023';
  END IF;
  wn := ARRAY[(w->>'price')::numeric, (w->>'safety')::numeric, (w->>'speed')::numeric, (w->>'comfort')::numeric];
  IF EXISTS (SELECT 1 FROM unnest(wn) AS x WHERE x < 0) THEN
    RAISE EXCEPTION 'weights must not be negative' USING ERRCODE = '22023';
  END IF;
  bp := ARRAY(SELECT coalesce(round(x * 10000), 0)::bigint FROM unnest(wn) WITH ORDINALITY AS u(x, i) ORDER BY i);
  IF EXISTS (SELECT 1 FROM unnest(bp) AS x WHERE x > 1000000000000) THEN
    RAISE EXCEPTION 'a number is too large' USING ERRCODE = '22023';
  END IF;
  bp_sum := bp[1] + bp[2] + bp[3] + bp[4];
  IF bp_sum <= 0 THEN
    RAISE EXCEPTION 'weights must not all be zero' USING ERRCODE = '22023';
  END IF;
  budget := (prefs->>'max_budget')::numeric;
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(quotes) AS e WHERE jsonb_typeof(e) <> 'object') THEN
    RAISE EXCEPTION 'every quote must be a JSON object' USING ERRCODE = '22023';
  END IF;
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(quotes) AS e WHERE coalesce(e->>'quote_id', e->>'id') IS NULL) THEN
    RAISE EXCEPTION 'every quote needs an id or quote_id' USING ERRCODE = '22023';
  END IF;
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(quotes) AS e
             WHERE abs(coalesce(e->>'total_price_usd', e->>'price_usd', e->>'price')::numeric) > 10000000000000
                OR abs((e->>'flight_time_minutes')::numeric) > 1000000000000000) THEN
    RAISE EXCEPTION 'a number is too large' USING ERRCODE = '22023';
  END IF;
  RETURN QUERY
  WITH q AS (
    SELECT t.ord,
           coalesce(t.e->>'quote_id', t.e->>'id') AS qid,
           coalesce(t.e->>'total_price_usd', t.e->>'price_usd', t.e->>'price')::numeric AS price,
           round((t.e->>'flight_time_minutes')::numeric)::bigint AS minutes,
           (t.e->>'safety_rating')::numeric AS safety,
           (t.e->>'comfort_rating')::numeric AS comfort
    FROM jsonb_array_elements(quotes) WITH ORDINALITY AS t(e, ord)
  ), c AS (
    SELECT q.qid,
           nullif(CASE WHEN q.price > 0 AND (budget IS NULL OR q.price <= budget) THEN round(q.price * 100)::bigint END, 0) AS cents,
           CASE WHEN q.minutes > 0 THEN q.minutes END AS mins,
           CASE WHEN q.safety IS NULL THEN 0 ELSE greatest(0, least(100, round(q.safety * 20)))::bigint END AS sf,
           CASE WHEN q.comfort IS NULL THEN 0 ELSE greatest(0, least(100, round(q.comfort * 20)))::bigint END AS cf
    FROM q
  ), b AS (
    SELECT min(c.cents) AS min_cents, min(c.mins) AS min_mins FROM c
  ), s AS (
    SELECT c.qid, c.cents, c.sf, c.cf,
           CASE WHEN c.cents IS NULL THEN 0 ELSE (200 * b.min_cents + c.cents) / (2 * c.cents) END AS p,
           CASE WHEN c.mins IS NULL THEN 0 ELSE (200 * b.min_mins + c.mins) / (2 * c.mins) END AS sp
    FROM c CROSS JOIN b
  ), tot AS (
    SELECT s.*, (2 * (bp[1] * s.p + bp[2] * s.sf + bp[3] * s.sp + bp[4] * s.cf) + bp_sum) / (2 * bp_sum) AS total
    FROM s
  )
  SELECT tot.qid, tot.p, tot.sf, tot.sp, tot.cf, tot.total,
         row_number() OVER (ORDER BY tot.total DESC, tot.cents ASC NULLS LAST, tot.qid COLLATE "C" ASC)
  FROM tot
  ORDER BY 7;
END;
$fn$;
