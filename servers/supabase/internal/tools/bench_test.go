package tools_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// BenchmarkQuery100 reads 100 rows with supabase_query through the MCP
// layer (an in-process client: JSON-RPC, validation, fencing) on each
// backend: the embedded database, PostgreSQL, and the PostgREST client
// against the local fake (HTTP on loopback, the fake on an embedded
// database).
func BenchmarkQuery100(b *testing.B) {
	for _, o := range testenv.Openers {
		b.Run(o.Name, func(b *testing.B) {
			e := o.Open(b)
			c := serve(b, deps(b, e), nil, "")
			var data []any
			for i := range 100 {
				data = append(data, cells("agent_type", "bench", "error_type", "timeout", "task_id", fmt.Sprintf("task-%03d", i),
					"error_message", "API request timed out after 30s", "retry_count", i%4, "stack_trace", "Error: timeout\n    at search (avinode.ts:42)"))
			}
			call(b, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": data, "select": "id"})
			args := map[string]any{"table": "agent_errors", "filters": where(eq("agent_type", "bench")), "limit": 100,
				"orderBy": asc("task_id")}
			b.ReportAllocs()
			for b.Loop() {
				res := c.Call("supabase_query", args)
				if res.IsError {
					b.Fatal("query failed")
				}
			}
			if r := call(b, c, "supabase_query", args); r["row_count"] != 100.0 {
				b.Fatalf("rows %v", r["row_count"])
			}
		})
	}
}

// BenchmarkQuery100Server is the same read measured at the server alone: a
// tools/call JSON-RPC message handled by the kit (decode, ACL, schema,
// handler, backend, fenced encoding) without a client library decoding the
// answer.
func BenchmarkQuery100Server(b *testing.B) {
	for _, o := range testenv.Openers {
		b.Run(o.Name, func(b *testing.B) {
			e := o.Open(b)
			d := deps(b, e)
			c := serve(b, d, nil, "")
			var data []any
			for i := range 100 {
				data = append(data, cells("agent_type", "bench", "error_type", "timeout", "task_id", fmt.Sprintf("task-%03d", i),
					"error_message", "API request timed out after 30s", "retry_count", i%4, "stack_trace", "Error: timeout\n    at search (avinode.ts:42)"))
			}
			call(b, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": data, "select": "id"})
			s, err := kit.New(kit.Info{Name: "supabase"}, tools.All(d), kit.Options{})
			if err != nil {
				b.Fatal(err)
			}
			msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"supabase_query","arguments":{"table":"agent_errors",` +
				`"filters":[{"column":"agent_type","op":"eq","value":"bench"}],"limit":100,"orderBy":[{"column":"task_id"}]},"_meta":{"protocolVersion":"2026-07-28"}}}`)
			out := s.Handle(context.Background(), "", msg)
			if !bytes.Contains(out, []byte(`"row_count":100`)) {
				b.Fatalf("answer %.400s", out)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Handle(context.Background(), "", msg)
			}
		})
	}
}
