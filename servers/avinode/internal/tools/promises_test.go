package tools_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

type foundTrips struct {
	Trips []struct {
		TripID    string `json:"trip_id"`
		Reference string `json:"external_reference"`
		Status    string `json:"status"`
	} `json:"trips"`
	Unconfirmed []struct {
		Reference string `json:"external_reference"`
		State     string `json:"state"`
		TripID    string `json:"trip_id"`
	} `json:"unconfirmed"`
	Total int `json:"total"`
}

// TestLiveCreateTripOutcomeUnknown: a POST /trips that fails after
// reaching Avinode is not retryable, says how to check, and find_trips
// shows the attempt; the same reference cannot create a second trip.
func TestLiveCreateTripOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakeavinode.Fault
		code  mcperr.Code
	}{
		{"500 after creating", fakeavinode.Fault{Method: "POST", Path: "/trips", Status: http.StatusInternalServerError, After: true}, mcperr.Upstream},
		{"502", fakeavinode.Fault{Method: "POST", Path: "/trips", Status: http.StatusBadGateway}, mcperr.Upstream},
		{"connection lost", fakeavinode.Fault{Method: "POST", Path: "/trips", Drop: true, After: true}, mcperr.Transport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLiveEnv(t, func(c *avinode.Config) { c.Timeout = time.Second })
			e.fake.Inject(tc.fault)
			args := map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 4,
				"departure_date": in(3), "external_reference": "CRM-500"}
			b := mcptest.FailCode(t, e.c.Call("create_trip", args), tc.code)
			if b.Data.Retryable || !strings.Contains(b.Message, "find_trips") || !strings.Contains(b.Message, "CRM-500") {
				t.Errorf("error %+v: want not retryable, naming find_trips and the reference", b)
			}
			var found foundTrips
			mcptest.OK(t, e.c.Call("find_trips", map[string]any{"external_reference": "CRM-500"}), &found)
			if len(found.Trips) != 0 || len(found.Unconfirmed) != 1 || found.Unconfirmed[0].State != "outcome_unknown" {
				t.Errorf("find_trips = %+v", found)
			}
			// A host retrying blindly is refused before anything is sent.
			mcptest.FailCode(t, e.c.Call("create_trip", args), mcperr.Conflict)
			if n := e.fake.Count(http.MethodPost, "/trips"); n != 1 {
				t.Errorf("POST /trips sent %d times", n)
			}
		})
	}

	// Success: the trip is found by its reference and since a time; the
	// reference is not used twice.
	e := newLiveEnv(t, nil)
	start := time.Now().UTC().Add(-time.Second).Format(time.RFC3339)
	var trip tripResult
	mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 4,
		"departure_date": in(3), "external_reference": "CRM-501"}), &trip)
	var found foundTrips
	mcptest.OK(t, e.c.Call("find_trips", map[string]any{"external_reference": "CRM-501"}), &found)
	if len(found.Trips) != 1 || found.Trips[0].TripID != trip.TripID || len(found.Unconfirmed) != 0 {
		t.Errorf("find_trips by reference = %+v", found)
	}
	b := mcptest.FailCode(t, e.c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY",
		"passengers": 4, "departure_date": in(3), "external_reference": "CRM-501"}), mcperr.Conflict)
	if !strings.Contains(b.Message, trip.TripID) {
		t.Errorf("conflict %q does not name the trip", b.Message)
	}
	mcptest.OK(t, e.c.Call("find_trips", map[string]any{"since": start}), &found)
	if found.Total != 1 {
		t.Errorf("find_trips since = %+v", found)
	}
	if n := e.fake.Count(http.MethodPost, "/trips"); n != 1 {
		t.Errorf("POST /trips sent %d times", n)
	}
}

// TestMockFindTrips: the simulation keeps the same record; a trip without a
// reference gets one.
func TestMockFindTrips(t *testing.T) {
	e := newMockEnv(t)
	var trip tripResult
	mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 4,
		"departure_date": futureDate(e.clock, 72*time.Hour)}), &trip)
	var created struct {
		Reference string `json:"external_reference"`
	}
	mcptest.Structured(t, e.c.Call("get_trip", map[string]any{"trip_id": trip.TripID}), &created)
	if !strings.HasPrefix(created.Reference, "mcp-") {
		t.Fatalf("generated reference %q", created.Reference)
	}
	var found foundTrips
	mcptest.OK(t, e.c.Call("find_trips", map[string]any{"external_reference": created.Reference}), &found)
	if len(found.Trips) != 1 || found.Trips[0].TripID != trip.TripID {
		t.Errorf("find_trips = %+v", found)
	}
	mcptest.FailCode(t, e.c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 4,
		"departure_date": futureDate(e.clock, 72*time.Hour), "external_reference": created.Reference}), mcperr.Conflict)
	mcptest.OK(t, e.c.Call("find_trips", map[string]any{"external_reference": "NOPE-1"}), &found)
	if found.Total != 0 || len(found.Unconfirmed) != 0 {
		t.Errorf("find_trips of an unknown reference = %+v", found)
	}
}

// TestLegTiming: legs must leave time to fly and turn around; the first
// departure must leave operators time to quote.
func TestLegTiming(t *testing.T) {
	e := newMockEnv(t)
	now := e.clock.Now()
	dep := now.Add(72 * time.Hour)
	at := func(t time.Time) string { return t.Format(time.RFC3339) }
	base := func(extra map[string]any) map[string]any {
		a := map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 4, "departure_date": at(dep)}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	for _, tc := range []struct {
		name, field string
		args        map[string]any
	}{
		{"return the same minute", "return_date", base(map[string]any{"return_date": at(dep)})},
		{"return an hour later", "return_date", base(map[string]any{"return_date": at(dep.Add(time.Hour))})},
		{"departure one minute from now", "departure_date", base(map[string]any{"departure_date": at(now.Add(time.Minute))})},
		{"segment too soon", "segments[0].departure_date", base(map[string]any{"segments": []map[string]any{{"departure_airport": "KVNY",
			"arrival_airport": "KLAS", "departure_date": at(dep.Add(2 * time.Hour))}}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failField(t, e.c.Call("create_trip", tc.args), mcperr.Validation, tc.field)
		})
	}
	// The error names the earliest acceptable time, and that time is
	// accepted. KTEB–KVNY is about 2 130 nm: 4h15m at 500 knots, plus 1h.
	earliest := func(args map[string]any, field string) time.Time {
		t.Helper()
		b := failField(t, e.c.Call("create_trip", args), mcperr.Validation, field)
		v, ok := strings.CutPrefix(b.Data.Expected, "a date-time at or after ")
		at, err := time.Parse(time.RFC3339, strings.Fields(v + " ")[0])
		if !ok || err != nil {
			t.Fatalf("expected %q names no date-time", b.Data.Expected)
		}
		return at
	}
	ret := earliest(base(map[string]any{"return_date": at(dep)}), "return_date")
	if d := ret.Sub(dep); d < 5*time.Hour+10*time.Minute || d > 5*time.Hour+20*time.Minute {
		t.Errorf("earliest return %s after the departure", d)
	}
	var trip tripResult
	mcptest.OK(t, e.c.Call("create_trip", base(map[string]any{"return_date": at(ret)})), &trip)
	first := earliest(base(map[string]any{"departure_date": at(now.Add(time.Minute))}), "departure_date")
	if !first.Equal(now.Add(2 * time.Hour)) {
		t.Errorf("earliest departure %s, now %s", first, now)
	}
	mcptest.OK(t, e.c.Call("create_trip", base(map[string]any{"departure_date": at(first)})), &trip)
}

// TestLiveAirportSearch: with credentials, search_airports asks Avinode's
// airport search (with its headers) and create_trip accepts what Avinode
// knows.
func TestLiveAirportSearch(t *testing.T) {
	e := newLiveEnv(t, nil)
	e.fake.AddAirport("KHTO", "HTO", "East Hampton Airport", "East Hampton", "US", 40.95995, -72.25105)
	e.fake.AddAirport("XHTA", "", "Hampton Private Strip", "Wainscott", "US", 40.94, -72.24)
	var found struct {
		Airports []struct{ ICAO, Name string } `json:"airports"`
		Source   string                        `json:"source"`
	}
	mcptest.OK(t, e.c.Call("search_airports", map[string]any{"query": "hampton", "limit": 5}), &found)
	if found.Source != "avinode" || len(found.Airports) < 2 || found.Airports[0].ICAO != "KHTO" || found.Airports[1].ICAO != "XHTA" {
		t.Fatalf("search_airports = %+v", found)
	}
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1]
	if last.Path != "/airports/search" || last.Query.Get("filter") != "hampton" || last.Header.Get("X-Avinode-ApiToken") != apiToken || last.Status != http.StatusOK {
		t.Errorf("request %+v", last)
	}
	var trip tripResult
	mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "XHTA", "arrival_airport": "KTEB", "passengers": 2,
		"departure_date": in(2)}), &trip)
	// When Avinode's search fails, the table still answers, and says so.
	e.fake.Inject(fakeavinode.Fault{Method: "GET", Path: "/airports", Status: http.StatusUnauthorized})
	mcptest.OK(t, e.c.Call("search_airports", map[string]any{"query": "courchevel"}), &found)
	if found.Source != "table" || len(found.Airports) == 0 || found.Airports[0].ICAO != "LFLJ" {
		t.Errorf("fallback = %+v", found)
	}
}

// TestWatchesIdempotent: an identical create_watch returns the watch it
// made; a name taken by other criteria is a conflict; a second delete
// succeeds as already absent. In both modes.
func TestWatchesIdempotent(t *testing.T) {
	for _, mode := range []string{"mock", "live"} {
		t.Run(mode, func(t *testing.T) {
			var c *mcptest.Client
			if mode == "mock" {
				c = newMockEnv(t).c
			} else {
				c = newLiveEnv(t, nil).c
			}
			args := map[string]any{"departure_airport": "EGGW", "arrival_airport": "LFMN", "aircraft_category": "light", "name": "Luton to Nice"}
			w1, w2 := createWatch(t, c, args), createWatch(t, c, args)
			if w1.ID == "" || w2.ID != w1.ID || w1.Existed || !w2.Existed {
				t.Errorf("identical creates: %+v then %+v", w1, w2)
			}
			if list := listWatches(t, c); list.Total != 1 {
				t.Errorf("%d watches after two identical creates", list.Total)
			}
			failField(t, c.Call("create_watch", map[string]any{"departure_airport": "EGGW", "arrival_airport": "LFMN",
				"aircraft_category": "midsize", "name": "Luton to Nice"}), mcperr.Conflict, "name")
			// Default names carry the category: these are two watches.
			d1 := createWatch(t, c, map[string]any{"departure_airport": "KTEB", "aircraft_category": "light"})
			d2 := createWatch(t, c, map[string]any{"departure_airport": "KTEB", "aircraft_category": "heavy"})
			if d1.ID == d2.ID {
				t.Errorf("watches of two categories got one id %s", d1.ID)
			}

			if del := deleteWatch(t, c, w1.ID); !del.Deleted || del.AlreadyAbsent {
				t.Errorf("first delete %+v", del)
			}
			if del := deleteWatch(t, c, w1.ID); del.Deleted || !del.AlreadyAbsent {
				t.Errorf("second delete %+v", del)
			}
		})
	}
}
