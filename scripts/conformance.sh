#!/usr/bin/env bash
# Runs the official MCP conformance suite against devtools-mcp over
# streamable HTTP, in its two pinned lines (tools/conformance/package.json):
#   - 0.1.x, the active suite (protocol 2025-11-25 and earlier);
#   - 0.2.0-alpha (npm alias conformance-next), the scenarios protocol
#     2026-07-28 requires (--requirements 2026-07-28).
# Each run has a baseline of the checks that need the suite's own fixture
# tools, prompts and resources (tools/conformance/expected-failures-*.yaml,
# reasons in docs/conformance.md). The suite exits non-zero on any other
# failure and on a baselined check that passes, and so does this script.
# Needs bin/devtools-mcp (make build) and npm.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tools="$top/tools/conformance"
. "$top/scripts/lib-serve.sh"
npm_tools "$tools"
if [ ! -d "$tools/node_modules/conformance-next" ]; then
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
fi
root=$(mktemp -d)
out=$(mktemp -d)
# resources/list and the caching checks need at least one file resource.
echo "hello" >"$root/hello.txt"
# The suite's client sends no bearer token, so the server runs on loopback
# with --insecure-no-auth; the token path is covered by inspector.sh,
# sdk-check and the Go tests.
serve_http "$top/bin/devtools-mcp" --insecure-no-auth --root "$root"
echo "devtools-mcp at $SERVER_URL"
node_suite() { node --import "$tools/node20-shim.mjs" "$tools/node_modules/$1/dist/index.js" "${@:2}"; }
status=0
echo "== conformance 0.1.x: active suite"
if ! node_suite @modelcontextprotocol/conformance server --url "$SERVER_URL" \
    --expected-failures "$tools/expected-failures-0.1.yaml" -o "$out/0.1" >"$out/0.1.log" 2>&1; then
  status=1
fi
sed -n '/=== SUMMARY ===/,$p' "$out/0.1.log"
echo "== conformance 0.2.0-alpha: requirements of protocol 2026-07-28"
if ! node_suite conformance-next server --url "$SERVER_URL" --requirements 2026-07-28 \
    --expected-failures "$tools/expected-failures-2026-07-28.yaml" -o "$out/0.2" >"$out/0.2.log" 2>&1; then
  status=1
fi
sed -n '/=== SUMMARY ===/,$p' "$out/0.2.log"
if [ $status -ne 0 ]; then
  echo "conformance: FAILED (full logs in $out)" >&2
else
  rm -rf "$out"
  echo "conformance: both suites passed (every failure is a baselined fixture check)"
fi
rm -rf "$root"
exit $status
