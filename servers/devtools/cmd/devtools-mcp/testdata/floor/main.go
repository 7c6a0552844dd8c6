// Command floor is the benchmarks' floor: the least an MCP server can do,
// built from the standard library alone. It answers initialize and
// tools/call (with a fixed 1 KiB text result, the size of the file the
// devtools benchmark reads) over stdio, or over HTTP with -http ADDR (one
// POST /mcp per message, JSON answers, no sessions). It validates nothing,
// checks no identity, logs nothing: whatever a real server costs above it
// is the price of doing the job.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
)

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

var text = strings.Repeat("0123456789abcde\n", 64)

func answer(m message) []byte {
	var result any
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "floor", "version": "1"}}
	case "tools/call":
		payload := map[string]any{"path": "one-kib.txt", "size": len(text), "content": text}
		b, _ := json.Marshal(payload)
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}, "structuredContent": payload}
	default:
		result = map[string]any{}
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	return append(out, '\n')
}

func main() {
	addr := flag.String("http", "", "serve HTTP on this address instead of stdio")
	flag.String("root", "", "ignored: accepted so the benchmarks start both servers alike")
	flag.Parse()
	if *addr != "" {
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "listening on", ln.Addr())
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var m message
			if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answer(m))
		}))
		return
	}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		_, _ = out.Write(answer(m))
		_ = out.Flush()
	}
}
