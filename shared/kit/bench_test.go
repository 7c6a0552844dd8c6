package kit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

// benchArgs are typical small arguments: a path and two options.
var benchArgs = json.RawMessage(`{"path":"src/main.go","encoding":"utf-8","head":20}`)

var benchSchema = json.RawMessage(`{"type":"object","properties":{
	"path":{"type":"string","minLength":1},
	"encoding":{"type":"string","enum":["utf-8","base64","hex"]},
	"head":{"type":"integer","minimum":1}},
	"required":["path"],"additionalProperties":false}`)

func benchTool() kit.Tool {
	return kit.Tool{Name: "noop", Description: "Do nothing.", InputSchema: benchSchema, Effect: kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) { return "ok", nil }}
}

func callRequest() mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "noop"
	req.Params.RawArguments = benchArgs
	req.Params.Arguments = benchArgs
	return req
}

// BenchmarkKitOverhead measures the kit's pipeline around a handler that
// does nothing: ACL check, rate-limit check, JSON Schema validation, timeout
// context, audit log line (JSON to io.Discard, as on stderr), metrics, and
// result encoding. This is the per-call cost every tool pays.
func BenchmarkKitOverhead(b *testing.B) {
	policy, err := acl.Parse([]byte("version: 1\nagents:\n  dev:\n    tools: [noop]\n"))
	if err != nil {
		b.Fatal(err)
	}
	log := logging.New(io.Discard, "info", logging.NewRedactor("a-secret-token-value"), "bench")
	cases := []struct {
		name string
		opts kit.Options
	}{
		{"full", kit.Options{Policy: policy, Logger: &log, Redactor: logging.NewRedactor("a-secret-token-value")}},
		{"no-audit-log", kit.Options{Policy: policy}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s, err := kit.New(kit.Info{Name: "bench"}, []kit.Tool{benchTool()}, tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			h := s.MCP().GetTool("noop").Handler
			ctx := kit.WithAgent(context.Background(), "dev")
			req := callRequest()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := h(ctx, req)
				if err != nil || res.IsError {
					b.Fatalf("call failed: %v %v", err, res)
				}
			}
		})
	}
}

// BenchmarkHandleMessage compares a whole JSON-RPC tools/call through
// mcp-go, with the kit in front of the tool and without it, so the kit's
// share of a real request is visible next to the SDK's own cost.
func BenchmarkHandleMessage(b *testing.B) {
	msg := json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":%s}}`, benchArgs))
	log := logging.New(io.Discard, "info", nil, "bench")
	ks, err := kit.New(kit.Info{Name: "bench"}, []kit.Tool{benchTool()}, kit.Options{Logger: &log})
	if err != nil {
		b.Fatal(err)
	}
	bare := server.NewMCPServer("bare", "1")
	bare.AddTool(mcp.Tool{Name: "noop", RawInputSchema: benchSchema}, func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	for _, tc := range []struct {
		name string
		s    *server.MCPServer
	}{{"bare-mcp-go", bare}, {"kit", ks.MCP()}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if resp := tc.s.HandleMessage(ctx, msg); resp == nil {
					b.Fatal("no response")
				}
			}
		})
	}
}
