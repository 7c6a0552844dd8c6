package mcptest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The PostgreSQL reference: the official Node MCP server for PostgreSQL,
// pinned in tools/bench-ref/package.json, whose one tool, query, runs a
// read-only SQL statement (BEGIN TRANSACTION READ ONLY, the statement, a
// ROLLBACK it does not wait for) and returns the rows as JSON text. A
// server's benchmark starts it on the database it queries itself, say
// pgtest.ReaderDB's, drives both alternately with [VersusReference], and
// reports the ratio:
//
//	reader := pgtest.ReaderDB(b)
//	ref := mcptest.StartPGReference(b, reader)
//	ours := mcptest.StartProc(b, bin, []string{"DATABASE_URL=" + reader})
//	ours.Initialize(b)
//	mcptest.VersusReference(b,
//		func() []byte { return ours.Call(b, `{"name":"database_query","arguments":{"query":"…"}}`) },
//		func() []byte { return ref.Call(b, mcptest.PGReferenceCall(pgtest.BenchQuery)) })
const (
	// PGReferencePackage is the npm package of the reference server.
	PGReferencePackage = "@modelcontextprotocol/server-postgres"
	// benchRefDir is where `make bench` installs the reference servers,
	// relative to the checkout's root (the directory holding go.work).
	benchRefDir = "tools/bench-ref"
)

// PGReferenceBin returns the reference server's entry point (a Node script)
// as `npm ci` installs it in tools/bench-ref. It fails the benchmark, saying
// how to install it, when it is not there: a comparison without its
// reference measures nothing.
func PGReferenceBin(tb testing.TB) string {
	tb.Helper()
	root, err := checkoutRoot()
	if err != nil {
		tb.Fatalf("find the checkout's root for %s: %v", benchRefDir, err)
	}
	script := filepath.Join(root, benchRefDir, "node_modules", filepath.FromSlash(PGReferencePackage), "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		tb.Fatalf("the reference server %s is not installed (%v): run `npm ci --prefix %s` from the checkout's root, or `make bench`",
			PGReferencePackage, err, benchRefDir)
	}
	return script
}

// StartPGReference starts the reference server over stdio on the PostgreSQL
// database at dbURL (which it queries as the URL's role), sends initialize,
// and returns it for [Proc.Call]; the test stops it at the end. It fails
// the benchmark when node or the package is missing.
func StartPGReference(tb testing.TB, dbURL string) *Proc {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("the reference server %s needs Node.js (node on PATH): %v", PGReferencePackage, err)
	}
	p := StartProc(tb, node, nil, PGReferenceBin(tb), dbURL)
	p.Initialize(tb)
	return p
}

// PGReferenceCall is the tools/call params that run sql through the
// reference's query tool.
func PGReferenceCall(sql string) string {
	args, _ := json.Marshal(map[string]any{"name": "query", "arguments": map[string]string{"sql": sql}})
	return string(args)
}

// VersusReference measures ours and ref alternately, b.N times each after
// a warm-up of 50 calls each, so that load from elsewhere on the machine
// falls on both; each returns its response line, which must not be a
// JSON-RPC error. It reports each one's p50 and p95 and the ratio of the
// p50s (×ref-p50: below 1 means ours is faster).
func VersusReference(b *testing.B, ours, ref func() []byte) {
	b.Helper()
	check := func(who string, line []byte) {
		if bytes.Contains(line, []byte(`"error":{`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("%s: the call failed: %s", who, line)
		}
	}
	for range 50 {
		check("ours", ours())
		check("reference", ref())
	}
	ol := make([]time.Duration, 0, b.N)
	rl := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		line := ours()
		ol = append(ol, time.Since(t0))
		check("ours", line)
		t0 = time.Now()
		line = ref()
		rl = append(rl, time.Since(t0))
		check("reference", line)
	}
	b.StopTimer()
	slices.Sort(ol)
	slices.Sort(rl)
	o50, r50 := Percentile(ol, 0.5), Percentile(rl, 0.5)
	b.ReportMetric(float64(o50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(Percentile(ol, 0.95).Microseconds()), "p95-µs")
	b.ReportMetric(float64(r50.Microseconds()), "ref-p50-µs")
	b.ReportMetric(float64(Percentile(rl, 0.95).Microseconds()), "ref-p95-µs")
	b.ReportMetric(float64(o50)/float64(r50), "×ref-p50")
}
