#!/usr/bin/env bash
# Fills the secrets of the compose stack's .env (a copy of configs/.env.example)
# with fresh random values, in place:
#
#   cp configs/.env.example .env && bash scripts/compose-env.sh .env
#
# Each secret that is empty gets a value; one already set is kept, so running
# it again changes nothing. The agents' tokens (MCP_AGENT_TOKENS) are one per
# agent of configs/acl.yaml. SUPABASE_AGENT_JWT is minted from
# PGRST_JWT_SECRET. The file is left readable by its owner only.
#
#   bash scripts/compose-env.sh --jwt ROLE
#
# prints a JWT for a database role, signed with $PGRST_JWT_SECRET from the
# environment (after rotating the secret, for instance).
set -euo pipefail

command -v openssl >/dev/null || { echo "compose-env.sh: openssl is needed" >&2; exit 1; }

# The database role supabase-mcp's requests run as (configs/compose/initdb).
agent_role=fleet_agent

rand_hex() { openssl rand -hex "$1"; }
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# jwt SECRET ROLE: an HS256 JSON Web Token whose payload is {"role": ROLE},
# which PostgREST accepts when SECRET is its jwt-secret. It has no expiry:
# rotate it by changing the secret.
jwt() {
  local header payload signature
  header=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url)
  payload=$(printf '{"role":"%s"}' "$2" | b64url)
  signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -binary -sha256 -hmac "$1" | b64url)
  printf '%s.%s.%s\n' "$header" "$payload" "$signature"
}

if [[ "${1:-}" == "--jwt" ]]; then
  role=${2:?usage: compose-env.sh --jwt ROLE (with PGRST_JWT_SECRET in the environment)}
  secret=${PGRST_JWT_SECRET:?set PGRST_JWT_SECRET (the secret PostgREST checks tokens with)}
  jwt "$secret" "$role"
  exit 0
fi

env_file=${1:?usage: compose-env.sh PATH/TO/.env   (or: compose-env.sh --jwt ROLE)}
[[ -f "$env_file" ]] || { echo "compose-env.sh: $env_file: no such file (cp configs/.env.example $env_file first)" >&2; exit 1; }
acl=${ACL_FILE:-"$(dirname "$0")/../configs/acl.yaml"}

# current NAME: the value the file gives NAME (the last line NAME=…, inline
# comment dropped), empty when it has none.
current() {
  sed -n "s/^$1=\([^ #]*\).*/\1/p" "$env_file" | tail -n 1
}

# fill NAME VALUE: sets NAME when it is empty, keeping the line's comment.
fill() {
  [[ -z "$(current "$1")" ]] || return 0
  local tmp
  tmp=$(mktemp "$env_file.XXXXXX")
  awk -v name="$1" -v value="$2" '
    !done && index($0, name "=") == 1 {
      i = index($0, " #"); comment = i ? substr($0, i) : ""
      print name "=" value comment; done = 1; next
    }
    { print }
    END { if (!done) print name "=" value }' "$env_file" >"$tmp"
  cat "$tmp" >"$env_file"
  rm -f "$tmp"
  echo "compose-env.sh: set $1" >&2
}

# The agents of the policy: the keys under "agents:".
agents=$(awk '/^agents:/ { in_agents = 1; next }
              in_agents && /^[^ #]/ { in_agents = 0 }
              in_agents && /^  [a-z][a-z0-9_]*:/ { sub(/^  /, ""); sub(/:.*/, ""); print }' "$acl")
[[ -n "$agents" ]] || { echo "compose-env.sh: no agents found in $acl" >&2; exit 1; }
tokens=""
for a in $agents; do
  tokens+="${tokens:+,}$a=$(rand_hex 24)"
done

chmod 600 "$env_file"
fill POSTGRES_PASSWORD "$(rand_hex 24)"
fill PGRST_AUTHENTICATOR_PASSWORD "$(rand_hex 24)"
fill AVINODE_DB_PASSWORD "$(rand_hex 24)"
fill PGRST_JWT_SECRET "$(rand_hex 32)"
fill SUPABASE_AGENT_JWT "$(jwt "$(current PGRST_JWT_SECRET)" "$agent_role")"
fill MCP_AGENT_TOKENS "$tokens"
fill AVINODE_WEBHOOK_CLIENT_SECRET "$(rand_hex 24)"
