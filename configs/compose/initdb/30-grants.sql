-- What the agents' role may do in the workflow database, once its tables
-- exist (10-…, 20-…): read every table and view, insert and update the
-- tables, call the application functions. Nobody deletes: neither DELETE nor
-- TRUNCATE is granted, and supabase-mcp's ACL grants supabase_delete to no
-- agent either.
GRANT USAGE ON SCHEMA public TO fleet_agent;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO fleet_agent;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO fleet_agent;

-- INSERT and UPDATE on the tables only: a view granted them would be listed
-- by PostgREST as writable.
DO $$
DECLARE
  t text;
BEGIN
  FOR t IN SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = 'public' LOOP
    EXECUTE format('GRANT INSERT, UPDATE ON public.%I TO fleet_agent', t);
  END LOOP;
END
$$;

-- Functions are executable by everyone unless revoked; here only by the
-- agents.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO fleet_agent;

-- Tables, sequences and functions a later migration adds (run as this
-- role) get the same grants. Default privileges cannot tell views from
-- tables: a later migration adding a view revokes INSERT and UPDATE on it.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE ON TABLES TO fleet_agent;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO fleet_agent;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO fleet_agent;
