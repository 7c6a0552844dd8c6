package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// BenchmarkDatabaseQueryVsServerPostgres: database_query of 100 rows from
// the built binary over stdio against the official Node server's query
// tool (mcptest.StartPGReference), the same SQL on the same throwaway
// PostgreSQL as the same read-only role, measured alternately call by call;
// reports both p50s and the ratio (target: devtools ≤ 0.5× the reference).
func BenchmarkDatabaseQueryVsServerPostgres(b *testing.B) {
	reader := pgtest.ReaderDB(b)
	ref := mcptest.StartPGReference(b, reader)
	home := b.TempDir()
	dev := mcptest.StartProc(b, devtoolsBinary(b), []string{"HOME=" + home, "DATABASE_URL=" + reader}, "--root", home)
	dev.Initialize(b)
	devCall, _ := json.Marshal(map[string]any{"name": "database_query", "arguments": map[string]string{"query": pgtest.BenchQuery}})
	refCall := mcptest.PGReferenceCall(pgtest.BenchQuery)
	// Both must return every row, so that they do the same work.
	checkRows(b, "devtools", dev.Call(b, string(devCall)), `\"row_count\":100`)
	checkRows(b, "reference", ref.Call(b, refCall), `\"id\": 100,`)
	mcptest.VersusReference(b,
		func() []byte { return dev.RoundTrip(b, "tools/call", string(devCall)) },
		func() []byte { return ref.RoundTrip(b, "tools/call", refCall) })
}

func checkRows(b *testing.B, who string, line []byte, want string) {
	b.Helper()
	if !bytes.Contains(line, []byte(want)) {
		b.Fatalf("%s did not return the %d rows (no %s): %.600s", who, pgtest.BenchRows, want, line)
	}
}
