#!/usr/bin/env bash
# The compose stack's roles and the avinode store's database, made on the
# postgres container's first start: the image runs the files mounted in
# /docker-entrypoint-initdb.d in name order, once, on an empty data
# directory, as the superuser ($POSTGRES_USER) in $POSTGRES_DB. Then come the
# workflow-state tables (10-…, 20-…: servers/supabase/internal/schemasql/) and their grants
# (30-grants.sql).
#
# No server logs in as a superuser:
#   authenticator  PostgREST's login. NOINHERIT, so it may do nothing itself:
#                  each request switches to the role its JWT's "role" claim
#                  names, which must be one granted to authenticator.
#   fleet_agent    the role of the agents' requests (supabase-mcp's JWT):
#                  read, insert and update the workflow tables; no delete.
#   avinode        owns the database avinode, where avinode-mcp keeps its
#                  store. avinode-mcp creates and migrates that schema
#                  itself when it starts (numbered migrations recorded in
#                  schema_migrations), so no avinode table is made here. It
#                  lives in a database of its own because its tables
#                  (quotes, avinode_webhook_events…) share names with the
#                  workflow tables but not their columns.
# Changing the passwords in .env later does not change them here: this runs
# on the first start only (ALTER ROLE … PASSWORD to rotate).
set -euo pipefail

: "${POSTGRES_USER:?}" "${POSTGRES_DB:?}"
: "${PGRST_AUTHENTICATOR_PASSWORD:?set PGRST_AUTHENTICATOR_PASSWORD (PostgREST's database password)}"
: "${AVINODE_DB_PASSWORD:?set AVINODE_DB_PASSWORD (the avinode store's database password)}"

psql -v ON_ERROR_STOP=1 --no-psqlrc --no-password --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v db="$POSTGRES_DB" \
  -v authenticator_password="$PGRST_AUTHENTICATOR_PASSWORD" \
  -v avinode_password="$AVINODE_DB_PASSWORD" <<'SQL'
CREATE ROLE authenticator LOGIN NOINHERIT NOCREATEDB NOCREATEROLE PASSWORD :'authenticator_password';
CREATE ROLE fleet_agent NOLOGIN;
GRANT fleet_agent TO authenticator;

-- Only the roles of the stack may connect to the workflow database.
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO authenticator, fleet_agent;

CREATE ROLE avinode LOGIN NOCREATEDB NOCREATEROLE PASSWORD :'avinode_password';
CREATE DATABASE avinode OWNER avinode;
REVOKE ALL ON DATABASE avinode FROM PUBLIC;
SQL
