#!/usr/bin/env bash
# Drives bin/devtools-mcp with the MCP Inspector CLI, as a user's client would:
# over stdio (list + call, and the file resources: list, templates, read),
# then over streamable HTTP with a bearer token (list + call, resources/read),
# and checks that HTTP without the token is refused.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tools="$top/tools/conformance"
. "$top/scripts/lib-serve.sh"
npm_tools "$tools"
root=$(mktemp -d)
printf 'hello from the inspector\n' >"$root/hello.txt"
# The CLI reads its own package.json through a path relative to the working
# directory's parent (a known bug on Node 20), so run it from a subfolder.
mkdir -p "$tools/.run"
cli() { (cd "$tools/.run" && node ../node_modules/@modelcontextprotocol/inspector-cli/build/index.js "$@"); }
expect() { grep -q -- "$1" || { echo "FAIL: expected $1" >&2; exit 1; }; }

echo "== stdio: tools/list"
cli "$top/bin/devtools-mcp" --root "$root" --method tools/list | expect '"name": "file_read"'
echo "== stdio: tools/call file_read"
cli "$top/bin/devtools-mcp" --root "$root" --method tools/call --tool-name file_read --tool-arg path=hello.txt \
  | expect 'hello from the inspector'

echo "== stdio: resources/list"
cli "$top/bin/devtools-mcp" --root "$root" --method resources/list | expect "\"uri\": \"file://$root/hello.txt\""
echo "== stdio: resources/templates/list"
cli "$top/bin/devtools-mcp" --root "$root" --method resources/templates/list | expect '"uriTemplate": "file:///{path}"'
echo "== stdio: resources/read"
cli "$top/bin/devtools-mcp" --root "$root" --method resources/read --uri "file://$root/hello.txt" \
  | expect 'hello from the inspector'

token="inspector-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
MCP_AUTH_TOKEN=$token serve_http "$top/bin/devtools-mcp" --root "$root"
echo "== http ($SERVER_URL): tools/list with bearer token"
cli "$SERVER_URL" --transport http --header "Authorization: Bearer $token" --method tools/list | expect '"name": "file_list"'
echo "== http: tools/call file_list with bearer token"
cli "$SERVER_URL" --transport http --header "Authorization: Bearer $token" --method tools/call --tool-name file_list \
  | expect 'hello.txt'
echo "== http: resources/read with bearer token"
cli "$SERVER_URL" --transport http --header "Authorization: Bearer $token" --method resources/read --uri "file://$root/hello.txt" \
  | expect '"mimeType": "text/plain"'
echo "== http: without a token is refused"
if out=$(cli "$SERVER_URL" --transport http --method tools/list 2>&1); then
  echo "FAIL: tools/list without a token succeeded" >&2; exit 1
fi
echo "$out" | expect 'unauthorized'
if grep -q "$token" "$SERVER_LOG"; then echo "FAIL: token in server log" >&2; exit 1; fi
rm -rf "$root"
echo "inspector: all checks passed"
