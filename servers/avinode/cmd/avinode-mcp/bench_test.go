package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// startProc starts the built binary on real pipes, initialized. Default
// log level: the audit line of every call is part of the cost.
func startProc(tb testing.TB, env []string) *mcptest.Proc {
	tb.Helper()
	p := mcptest.StartProc(tb, binary(tb), append([]string{"HOME=" + tb.TempDir(), "MCP_DATA_DIR=" + tb.TempDir()}, env...))
	p.Initialize(tb)
	return p
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
		p.Call(b, args)
	}
	mcptest.Measure(b, func() { p.Call(b, args) })
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
	line := p.Call(b, fmt.Sprintf(`{"name":"create_trip","arguments":{"departure_airport":"KTEB","arrival_airport":"KVNY","passengers":6,"departure_date":%q}}`,
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
		if !bytes.Contains(p.Call(b, args), []byte(`"total":5`)) {
			b.Fatal("five quotes expected")
		}
	}
	mcptest.Measure(b, func() { p.Call(b, args) })
}
