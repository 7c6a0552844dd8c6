package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

// benchRows is the table the stdio benchmarks read: 100 rows of the shape
// an agent's error log has, all of agent_type "bench".
func benchRows() string {
	var rows []string
	for i := range 100 {
		rows = append(rows, fmt.Sprintf(`[{"column":"agent_type","value":"bench"},{"column":"error_type","value":"timeout"},`+
			`{"column":"task_id","value":"task-%03d"},{"column":"error_message","value":"API request timed out after 30s"},`+
			`{"column":"retry_count","value":%d},{"column":"stack_trace","value":"Error: timeout\n    at search (avinode.ts:42)"}]`, i, i%4))
	}
	return `{"name":"supabase_insert","arguments":{"table":"agent_errors","select":"id","data":[` + strings.Join(rows, ",") + `]}}`
}

const (
	// query100 reads the 100 rows, ordered.
	query100 = `{"name":"supabase_query","arguments":{"table":"agent_errors","filters":[{"column":"agent_type","op":"eq","value":"bench"}],` +
		`"orderBy":[{"column":"task_id"}],"limit":100}}`
	// pointLookup reads one row by a unique value.
	pointLookup = `{"name":"supabase_query","arguments":{"table":"agent_errors","filters":[{"column":"task_id","op":"eq","value":"task-042"}]}}`
)

// benchProc starts the built server on a backend with the 100 rows in it.
func benchProc(b *testing.B, backend string) *mcptest.Proc {
	env := []string{"MCP_DATA_DIR=" + b.TempDir()}
	if backend == "postgres" {
		_, app := testenv.PostgresURLs(b)
		env = append(env, "DATABASE_URL="+app)
	}
	p := mcptest.StartProc(b, mcptest.Build(b, pkg), env)
	b.Cleanup(p.Stop)
	p.Initialize(b)
	p.Call(b, benchRows())
	var res struct {
		Result struct {
			StructuredContent struct {
				RowCount int `json:"row_count"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(p.Call(b, query100), &res); err != nil || res.Result.StructuredContent.RowCount != 100 {
		b.Fatalf("the 100 rows: %d, %v", res.Result.StructuredContent.RowCount, err)
	}
	return p
}

// BenchmarkStdioQuery is supabase_query through the built binary over
// stdio, as a client sees it (pipes, JSON-RPC, the kit, the backend, the
// fenced answer): 100 rows, and a point lookup, on the embedded database
// and on PostgreSQL (a least-privilege role on a throwaway cluster). The
// floor (testdata/floor) gives the same answer, recorded, for the same call,
// measured alternately call by call; reports both p50s and the ratio
// (ref-p50-µs and ×ref-p50 are the floor's). The embedded 100-row target is
// p50 ≤ 0.5 ms; the floor says how much of a run's p50 is the machine's.
func BenchmarkStdioQuery(b *testing.B) {
	floorBin := mcptest.Build(b, "./testdata/floor")
	for _, backend := range []string{"embedded", "postgres"} {
		for _, q := range []struct{ name, call string }{{"100rows", query100}, {"point", pointLookup}} {
			b.Run(backend+"/"+q.name, func(b *testing.B) {
				p := benchProc(b, backend)
				floor := floorProc(b, floorBin, q.call, p.Call(b, q.call))
				mcptest.VersusReference(b, func() []byte { return p.RoundTrip(b, "tools/call", q.call) },
					func() []byte { return floor.RoundTrip(b, "tools/call", q.call) })
			})
		}
	}
}

// floorProc starts the floor answering call with the result of line, a
// response of the server.
func floorProc(b *testing.B, bin, call string, line []byte) *mcptest.Proc {
	var res struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(line, &res); err != nil || len(res.Result) == 0 {
		b.Fatalf("no result to record for the floor: %v: %.300s", err, line)
	}
	answers, err := json.Marshal(map[string]json.RawMessage{call: res.Result})
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "answers.json")
	if err := os.WriteFile(file, answers, 0o600); err != nil {
		b.Fatal(err)
	}
	p := mcptest.StartProc(b, bin, nil, "-answers", file)
	b.Cleanup(p.Stop)
	p.Initialize(b)
	return p
}

// BenchmarkQueryVsServerPostgres: supabase_query through the built binary
// over stdio against the official Node server's query tool
// (mcptest.StartPGReference) on the same throwaway PostgreSQL, as the same
// role that may only read the table, measured alternately call by call: the
// 100 rows of pgtest.BenchTable, and a point lookup by its key. Reports both
// p50s and the ratio (target: supabase ≤ 0.5× the reference).
func BenchmarkQueryVsServerPostgres(b *testing.B) {
	reader := pgtest.ReaderDB(b)
	ref := mcptest.StartPGReference(b, reader)
	ours := mcptest.StartProc(b, mcptest.Build(b, pkg), []string{"MCP_DATA_DIR=" + b.TempDir(), "DATABASE_URL=" + reader})
	b.Cleanup(ours.Stop)
	ours.Initialize(b)
	for _, q := range []struct {
		name, ours, sql, want string
	}{
		{"100rows", `{"name":"supabase_query","arguments":{"table":"` + pgtest.BenchTable + `","orderBy":[{"column":"id"}],"limit":100}}`,
			pgtest.BenchQuery, `\"row_count\":100`},
		{"point", `{"name":"supabase_query","arguments":{"table":"` + pgtest.BenchTable + `","filters":[{"column":"id","op":"eq","value":42}]}}`,
			"SELECT id, name, amount, created FROM " + pgtest.BenchTable + " WHERE id = 42", `\"row_count\":1`},
	} {
		b.Run(q.name, func(b *testing.B) {
			refCall := mcptest.PGReferenceCall(q.sql)
			// Both must find the same rows, so that they do the same work.
			if line := ours.Call(b, q.ours); !strings.Contains(string(line), q.want) {
				b.Fatalf("supabase did not return the rows (no %s): %.600s", q.want, line)
			}
			if line := ref.Call(b, refCall); !strings.Contains(string(line), `\"id\": 42`) {
				b.Fatalf("the reference did not return row 42: %.600s", line)
			}
			mcptest.VersusReference(b,
				func() []byte { return ours.RoundTrip(b, "tools/call", q.ours) },
				func() []byte { return ref.RoundTrip(b, "tools/call", refCall) })
		})
	}
}
