package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// BenchmarkEngineVsMCPGo serves the same tools/call of the same no-op tool
// (same input schema, arguments bound, a two-field result) in process, from
// the message's bytes to the response's bytes: through the kit without its
// audit line, and through mcp-go's server with input validation on, which
// has neither ACL, rate limit, slots nor metrics. It is the figure quoted in
// docs/architecture.md for what the kit's engine costs against the library.
func BenchmarkEngineVsMCPGo(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"noop","arguments":` + string(benchArgs) + `}}`)
	b.Run("kit", func(b *testing.B) {
		benchCalls(b, false, msg)
	})
	b.Run("mcp-go", func(b *testing.B) {
		srv := server.NewMCPServer("bench", "1", server.WithToolCapabilities(false), server.WithInputSchemaValidation())
		srv.AddTool(mcp.NewToolWithRawSchema("noop", "Do nothing.", benchSchema),
			func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var a struct {
					Path string `json:"path"`
				}
				if err := r.BindArguments(&a); err != nil {
					return nil, err
				}
				v := map[string]any{"path": a.Path, "ok": true}
				text, _ := json.Marshal(v)
				return mcp.NewToolResultStructured(v, string(text)), nil
			})
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			out, err := json.Marshal(srv.HandleMessage(ctx, msg))
			if err != nil || !bytes.Contains(out, []byte(`"ok":true`)) || bytes.Contains(out, []byte(`"isError":true`)) {
				b.Fatalf("bad answer %s: %v", out, err)
			}
		}
	})
}
