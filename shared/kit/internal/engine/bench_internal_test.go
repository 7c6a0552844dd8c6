package engine

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

// benchArgs are typical small arguments: a path and two options.
var benchArgs = []byte(`{"path":"src/main.go","encoding":"utf-8","head":20}`)

// benchSchema is the input schema of the benchmarks' no-op tool.
var benchSchema = json.RawMessage(`{"type":"object","properties":{
	"path":{"type":"string","minLength":1},
	"encoding":{"type":"string","enum":["utf-8","base64","hex"]},
	"head":{"type":"integer","minimum":1}},
	"required":["path"],"additionalProperties":false}`)

// benchOutput is its output schema: every tool has one, and its results
// are checked against it.
var benchOutput = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"ok":{"type":"boolean"}},
	"required":["path","ok"],"additionalProperties":false}`)

func benchServer(b *testing.B, withLog bool) (*Server, *session) {
	policy, err := acl.Parse([]byte("version: 1\nagents:\n  dev:\n    tools: [noop]\n"))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Policy: policy}
	if withLog {
		red := logging.NewRedactor("a-secret-token-value")
		log := logging.New(io.Discard, "info", red, "bench")
		opts.Logger, opts.Redactor = &log, red
	}
	tool := Tool{Name: "noop", Description: "Do nothing.", Effect: "read-only",
		InputSchema: benchSchema, OutputSchema: benchOutput,
		Handler: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Path string `json:"path"`
			}
			if err := json.Unmarshal(c.Args, &a); err != nil {
				return nil, err
			}
			return map[string]any{"path": a.Path, "ok": true}, nil
		}}
	s, err := New(Info{Name: "bench"}, []Tool{tool}, opts)
	if err != nil {
		b.Fatal(err)
	}
	se := s.newSession("bench", "dev", overStdio)
	se.initialized.Store(true)
	return s, se
}

// BenchmarkKitOverhead is the engine's cost of one tools/call around a
// handler that only decodes its arguments: envelope parse, params, ACL, rate
// limit, bounded decode, JSON Schema validation, slots, time limit, result
// encoding once, the response envelope, and (in "full") the audit line and
// metrics. Target: under 20 µs.
// benchCalls serves msg b.N times through the kit's pipeline in process,
// as a transport would, and checks each answer is a result.
func benchCalls(b *testing.B, auditLog bool, msg []byte) {
	s, se := benchServer(b, auditLog)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m, err := wire.Parse(msg)
		if err != nil {
			b.Fatal(err)
		}
		p, _ := parseParams(m.Params)
		rep := s.serve(ctx, &request{sess: se, id: m.ID, method: m.Method, p: p, size: len(msg)})
		if rep.after != nil {
			rep.after()
		}
		if len(rep.body) == 0 || rep.body[len(rep.body)-2] == 'e' {
			b.Fatalf("bad answer %s", rep.body)
		}
	}
}

func BenchmarkKitOverhead(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"noop","arguments":` + string(benchArgs) + `}}`)
	for _, tc := range []struct {
		name string
		log  bool
	}{{"full", true}, {"no-audit-log", false}} {
		b.Run(tc.name, func(b *testing.B) {
			benchCalls(b, tc.log, msg)
		})
	}
}
