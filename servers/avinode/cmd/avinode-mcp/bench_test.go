package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
)

// stdioProc is the built binary on real pipes, driven line by line without
// an SDK client so the figures are the server's, not a client library's.
type stdioProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startProc(tb testing.TB, env []string) *stdioProc {
	tb.Helper()
	// Default log level: the audit line of every call is part of the cost;
	// stderr goes to /dev/null, as it would to a client's log file.
	cmd := exec.Command(binary(tb))
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + tb.TempDir(), "MCP_DATA_DIR=" + tb.TempDir()}, env...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = devnull.Close() })
	cmd.Stderr = devnull
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &stdioProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	tb.Cleanup(p.stop)
	p.roundTrip(tb, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	fmt.Fprintln(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *stdioProc) roundTrip(tb testing.TB, method, params string) []byte {
	p.id++
	fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", p.id, method, params)
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	return line
}

func (p *stdioProc) call(tb testing.TB, params string) []byte {
	line := p.roundTrip(tb, "tools/call", params)
	if bytes.Contains(line, []byte(`"isError":true`)) {
		tb.Fatalf("call failed: %s", line)
	}
	return line
}

func (p *stdioProc) stop() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

// measure runs call b.N times and reports p50/p95/p99 besides the mean.
func measure(b *testing.B, call func()) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		call()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.95).Microseconds()), "p95-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
}

// BenchmarkStdioCreateTripMock is create_trip on the simulated marketplace
// over real pipes to the built binary: JSON-RPC in, the kit's pipeline,
// airport and date checks, choosing and pricing the operators, one SQLite
// transaction (trip, RFQs, scheduled answers), JSON-RPC out. The marketplace
// worker runs meanwhile, as in production.
func BenchmarkStdioCreateTripMock(b *testing.B) {
	p := startProc(b, nil)
	args := fmt.Sprintf(`{"name":"create_trip","arguments":{"departure_airport":"KTEB","arrival_airport":"KVNY","passengers":6,"departure_date":%q}}`,
		time.Now().UTC().Add(72*time.Hour).Format(time.RFC3339))
	for range 20 { // warm up
		p.call(b, args)
	}
	measure(b, func() { p.call(b, args) })
}

// BenchmarkStdioGetQuotesAvinode is get_quotes for a trip with five quoted
// RFQs, on the Avinode client against the in-process fake: two API reads
// (the trip; its RFQs with latest quotes and breakdowns), the store brought
// up to date, the answer read back from it.
func BenchmarkStdioGetQuotesAvinode(b *testing.B) {
	fake := fakeavinode.New(b, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	p := startProc(b, []string{"AVINODE_API_TOKEN=" + apiToken, "AVINODE_AUTH_TOKEN=" + authToken, "AVINODE_API_URL=" + fake.BaseURL()})
	var created struct {
		Result struct {
			StructuredContent struct {
				TripID string `json:"trip_id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	line := p.call(b, fmt.Sprintf(`{"name":"create_trip","arguments":{"departure_airport":"KTEB","arrival_airport":"KVNY","passengers":6,"departure_date":%q}}`,
		time.Now().UTC().Add(72*time.Hour).Format(time.RFC3339)))
	if err := json.Unmarshal(line, &created); err != nil || created.Result.StructuredContent.TripID == "" {
		b.Fatalf("create_trip: %s", line)
	}
	trip := created.Result.StructuredContent.TripID
	for i := range 5 {
		rfq, lift := fake.AddRFQ(trip, fakeavinode.Seller{ID: fmt.Sprint("s", i), Name: fmt.Sprint("Operator ", i), Country: "US"},
			fakeavinode.Aircraft{Type: "Challenger 350", Category: "Super midsize jet", Tail: fmt.Sprint("N35", i), MaxPax: 9, Year: 2018})
		fake.Quote(rfq, lift, 70000+float64(i)*1000, "USD", 48*time.Hour, "Confirmed.",
			fakeavinode.Line{Description: "Flight", Type: "FLIGHT", Amount: 66000 + float64(i)*1000},
			fakeavinode.Line{Description: "Fees and taxes", Type: "TAX", Amount: 4000})
	}
	args := fmt.Sprintf(`{"name":"get_quotes","arguments":{"trip_id":%q}}`, trip)
	for range 20 {
		if !bytes.Contains(p.call(b, args), []byte(`"total":5`)) {
			b.Fatal("five quotes expected")
		}
	}
	measure(b, func() { p.call(b, args) })
}
