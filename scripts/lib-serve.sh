# Shared by conformance.sh and inspector.sh: start a built server over
# streamable HTTP on a free loopback port and export its URL. Sourced, not run.
#   serve_http BIN [extra args...]   sets SERVER_PID, SERVER_URL, SERVER_LOG
serve_http() {
  local bin=$1; shift
  SERVER_LOG=$(mktemp)
  "$bin" --transport http --host 127.0.0.1 --port 0 "$@" 2>"$SERVER_LOG" &
  SERVER_PID=$!
  trap 'kill $SERVER_PID 2>/dev/null || true; wait $SERVER_PID 2>/dev/null || true' EXIT
  local addr=""
  for _ in $(seq 1 100); do
    addr=$(sed -n 's/.*"addr":"\([^"]*\)".*/\1/p' "$SERVER_LOG" | head -n1)
    [ -n "$addr" ] && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$SERVER_LOG" >&2; echo "server exited" >&2; return 1; fi
    sleep 0.05
  done
  [ -n "$addr" ] || { cat "$SERVER_LOG" >&2; echo "server did not start" >&2; return 1; }
  SERVER_URL="http://$addr/mcp"
}

# npm_tools installs the pinned client tools (conformance suite, Inspector CLI).
npm_tools() {
  local dir=$1
  if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -d "$dir/node_modules/@modelcontextprotocol/inspector-cli" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
