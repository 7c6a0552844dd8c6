#!/usr/bin/env bash
# Runs the official MCP conformance suite against devtools-mcp over
# streamable HTTP (see docs/conformance.md for the scenarios and why some
# are out of scope). Needs bin/devtools-mcp (make build) and npm.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tools="$top/tools/conformance"
. "$top/scripts/lib-serve.sh"
npm_tools "$tools"
root=$(mktemp -d)
echo "hello" >"$root/hello.txt"
# The suite's client sends no bearer token, so the server runs on loopback
# with --insecure-no-auth; the token path is covered by inspector.sh and the
# Go tests.
serve_http "$top/bin/devtools-mcp" --insecure-no-auth --root "$root"
echo "devtools-mcp at $SERVER_URL"
conf=(node --import "$tools/node20-shim.mjs" "$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js")
status=0
for scenario in $(grep -v '^#' "$tools/scenarios.txt"); do
  echo "== $scenario"
  if ! "${conf[@]}" server --url "$SERVER_URL" --scenario "$scenario"; then
    status=1
  fi
done
rm -rf "$root"
exit $status
