package tools_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

type pageOut struct {
	Truncated  bool `json:"truncated"`
	NextOffset int  `json:"next_offset"`
	Total      int  `json:"total"`
}

// TestPagingUnderBudget: a list over the result budget comes back cut to
// what fits, says so, and the next pages hold the rest, each once.
func TestPagingUnderBudget(t *testing.T) {
	n := kit.NewNotifier()
	clk := newClock()
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), n)
	d := tools.Deps{Store: st, Market: mock.New(st, mock.Config{Now: clk.Now}), Now: clk.Now}
	// The smallest budget the kit allows.
	c := serve(t, d, n, "", kit.Options{Limits: kit.Limits{MaxResultBytes: 1}})

	var all []string
	offset, pages := 0, 0
	for {
		var out struct {
			pageOut
			Airports []struct{ ICAO string } `json:"airports"`
		}
		mcptest.Structured(t, c.Call("search_airports", map[string]any{"query": "international", "limit": 50, "offset": offset}), &out)
		pages++
		if len(out.Airports) == 0 || out.Total != len(out.Airports) {
			t.Fatalf("page %d: %+v", pages, out)
		}
		for _, a := range out.Airports {
			if slices.Contains(all, a.ICAO) {
				t.Fatalf("page %d repeats %s", pages, a.ICAO)
			}
			all = append(all, a.ICAO)
		}
		if pages == 1 && (!out.Truncated || len(out.Airports) >= 50) {
			t.Fatalf("first page not cut by the budget: %d airports, truncated %v", len(out.Airports), out.Truncated)
		}
		if len(all) >= 50 {
			break
		}
		if out.NextOffset != offset+len(out.Airports) {
			t.Fatalf("next_offset %d after %d+%d", out.NextOffset, offset, len(out.Airports))
		}
		offset = out.NextOffset
	}
	// Without a budget cut, the same query gives the same airports in one page.
	big := serve(t, d, n, "", kit.Options{})
	var one struct {
		pageOut
		Airports []struct{ ICAO string } `json:"airports"`
	}
	mcptest.Structured(t, big.Call("search_airports", map[string]any{"query": "international", "limit": 50}), &one)
	var want []string
	for _, a := range one.Airports {
		want = append(want, a.ICAO)
	}
	if one.Truncated || one.NextOffset != 50 || !slices.Equal(want, all[:50]) {
		t.Errorf("one page: truncated %v next %d; pages differ: %v vs %v", one.Truncated, one.NextOffset, want, all[:50])
	}
}

// TestPagingByLimit: past the limit, next_offset asks for the rest and the
// last page has none.
func TestPagingByLimit(t *testing.T) {
	e := newMockEnv(t)
	for i := range 3 {
		mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 2,
			"departure_date": futureDate(e.clock, time.Duration(24+i)*time.Hour)}), nil)
	}
	var p1, p2 struct {
		pageOut
		Trips []struct {
			TripID string `json:"trip_id"`
		} `json:"trips"`
	}
	mcptest.Structured(t, e.c.Call("find_trips", map[string]any{"limit": 2}), &p1)
	if len(p1.Trips) != 2 || p1.Truncated || p1.NextOffset != 2 {
		t.Fatalf("first page: %+v", p1)
	}
	mcptest.Structured(t, e.c.Call("find_trips", map[string]any{"limit": 2, "offset": p1.NextOffset}), &p2)
	if len(p2.Trips) != 1 || p2.NextOffset != 0 || p2.Trips[0].TripID == p1.Trips[0].TripID || p2.Trips[0].TripID == p1.Trips[1].TripID {
		t.Fatalf("second page: %+v after %+v", p2, p1)
	}
}
