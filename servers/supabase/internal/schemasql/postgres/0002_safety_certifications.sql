-- safety_rating may name the operator's safety certification instead of a
-- 0-5 number; calculate_quote_scores is replaced whole, with the same
-- signature (grants on it stay). The mapping, the same as the Go
-- implementation's (servers/supabase/internal/scoring):
--   ARGUS Platinum, Wyvern Wingman, IS-BAO Stage 3   5.0
--   ARGUS Gold+, IS-BAO Stage 2                      4.5
--   ARGUS Gold, IS-BAO Stage 1, IS-BAO               4.0
--   ARGUS Silver                                     3.5
-- A name matches ignoring ASCII case, spaces and punctuation, "+" read as
-- "plus" ("argus gold plus", "ISBAO"). A string that reads as a number is
-- the number, as before; any other unknown name is an error (22023) naming
-- the quote's field and listing the accepted names.

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
  -- Each certification by its matched form (lowercase, letters and digits): its rating.
  certs constant jsonb := '{"argusplatinum": 5.0, "wyvernwingman": 5.0, "isbaostage3": 5.0,
                            "argusgoldplus": 4.5, "isbaostage2": 4.5,
                            "argusgold": 4.0, "isbaostage1": 4.0, "isbao": 4.0,
                            "argussilver": 3.5}';
  accepted constant text := 'ARGUS Platinum, Wyvern Wingman, IS-BAO Stage 3, ARGUS Gold+, IS-BAO Stage 2, '
                            'ARGUS Gold, IS-BAO Stage 1, IS-BAO, ARGUS Silver';
  numeric_text constant text := '^[ \t\n\r]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r]*$';
  bad_ord bigint;
  bad_kind text;
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
  -- The first quote whose safety_rating is neither a number nor a known
  -- certification, as the Go implementation reports it.
  SELECT t.ord - 1,
         CASE WHEN jsonb_typeof(t.e->'safety_rating') NOT IN ('number', 'string', 'null') THEN 'type' ELSE 'name' END
    INTO bad_ord, bad_kind
    FROM jsonb_array_elements(quotes) WITH ORDINALITY AS t(e, ord)
   WHERE jsonb_typeof(t.e->'safety_rating') NOT IN ('number', 'string', 'null')
      OR (jsonb_typeof(t.e->'safety_rating') = 'string'
          AND (t.e->>'safety_rating') !~ numeric_text
          AND NOT certs ? regexp_replace(replace(lower((t.e->>'safety_rating') COLLATE "C"), '+', 'plus'),
                                         '[^a-z0-9]', '', 'g'))
   ORDER BY t.ord LIMIT 1;
  IF bad_kind = 'type' THEN
    RAISE EXCEPTION 'quotes[%].safety_rating must be a number or a safety certification', bad_ord USING ERRCODE = '22023';
  ELSIF bad_kind = 'name' THEN
    RAISE EXCEPTION 'quotes[%].safety_rating: unknown safety certification (expected a 0-5 number or one of %)',
      bad_ord, accepted USING ERRCODE = '22023';
  END IF;
  RETURN QUERY
  WITH q AS (
    SELECT t.ord,
           coalesce(t.e->>'quote_id', t.e->>'id') AS qid,
           coalesce(t.e->>'total_price_usd', t.e->>'price_usd', t.e->>'price')::numeric AS price,
           round((t.e->>'flight_time_minutes')::numeric)::bigint AS minutes,
           CASE WHEN jsonb_typeof(t.e->'safety_rating') = 'string' AND (t.e->>'safety_rating') !~ numeric_text
                THEN (certs->>regexp_replace(replace(lower((t.e->>'safety_rating') COLLATE "C"), '+', 'plus'),
                                             '[^a-z0-9]', '', 'g'))::numeric
                ELSE (t.e->>'safety_rating')::numeric END AS safety,
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
