package mock

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
)

var departure = time.Date(2031, 5, 1, 14, 0, 0, 0, time.UTC)

func legsOf(t *testing.T, pax int, route ...string) []leg {
	t.Helper()
	var segs []store.Segment
	for i := 0; i+1 < len(route); i++ {
		segs = append(segs, store.Segment{From: route[i], To: route[i+1], Departure: departure.Add(time.Duration(i) * 24 * time.Hour), Passengers: pax})
	}
	legs, err := resolveLegs(segs)
	if err != nil {
		t.Fatal(err)
	}
	return legs
}

func operatorNamed(t *testing.T, name string) operator {
	t.Helper()
	for _, op := range operators {
		if op.Name == name {
			return op
		}
	}
	t.Fatalf("no operator %s", name)
	return operator{}
}

func TestPricesFollowDistanceAndCategory(t *testing.T) {
	ejm := operatorNamed(t, "Executive Jet Management")
	short, ok1 := quoteFor(ejm, ejm.Fleet[0], legsOf(t, 4, "KTEB", "KBOS"), "")
	long, ok2 := quoteFor(ejm, ejm.Fleet[0], legsOf(t, 4, "KTEB", "KLAX"), "")
	if !ok1 || !ok2 || short.price.total() >= long.price.total() {
		t.Errorf("Boston %v, Los Angeles %v", short.price.total(), long.price.total())
	}
	light, _ := quoteFor(ejm, ejm.Fleet[2], legsOf(t, 4, "KTEB", "KBOS"), "")
	heavy, _ := quoteFor(ejm, ejm.Fleet[1], legsOf(t, 4, "KTEB", "KBOS"), "")
	if light.price.total() >= short.price.total() || short.price.total() >= heavy.price.total() {
		t.Errorf("light %v, midsize %v, heavy %v", light.price.total(), short.price.total(), heavy.price.total())
	}
	// A round trip away two nights pays the crew; US domestic legs carry
	// the excise tax.
	round, _ := quoteFor(ejm, ejm.Fleet[0], legsOf(t, 4, "KTEB", "KBOS", "KBOS", "KTEB"), "")
	kinds := map[string]bool{}
	for _, l := range round.price.lines {
		kinds[l.Label[:5]] = true
	}
	if !kinds["Crew "] || !kinds["US fe"] {
		t.Errorf("lines %+v", round.price.lines)
	}
	// Not enough seats, the wrong category, or too far even with stops.
	if _, ok := quoteFor(ejm, ejm.Fleet[2], legsOf(t, 8, "KTEB", "KBOS"), ""); ok {
		t.Error("a Phenom 300 took eight passengers")
	}
	if _, ok := quoteFor(ejm, ejm.Fleet[0], legsOf(t, 2, "KTEB", "KBOS"), market.Heavy); ok {
		t.Error("a Citation X passed as heavy")
	}
	if _, ok := quoteFor(ejm, ejm.Fleet[2], legsOf(t, 2, "KTEB", "YSSY"), ""); ok {
		t.Error("a Phenom 300 flew to Sydney")
	}
	gulf := operatorNamed(t, "Thames Executive Air")
	eu, _ := quoteFor(gulf, gulf.Fleet[0], legsOf(t, 2, "EGGW", "LFMN"), "")
	if eu.price.currency != "GBP" {
		t.Errorf("currency %s", eu.price.currency)
	}
}

func TestCabotage(t *testing.T) {
	tests := []struct {
		op    string
		route []string
		want  bool
	}{
		{"Maple Leaf Jets", []string{"KTEB", "KMIA"}, true},
		{"Maple Leaf Jets", []string{"CYYZ", "KMIA"}, false},
		{"Riviera Jet Services", []string{"LFMN", "LIML"}, false},
		{"Alpine Private Aviation", []string{"EDDM", "EDDH"}, false},
		{"Riviera Jet Services", []string{"EGGW", "EGPH"}, true},
		{"Executive Jet Management", []string{"KTEB", "TJSJ"}, false},
	}
	for _, tc := range tests {
		if got := cabotage(operatorNamed(t, tc.op), legsOf(t, 2, tc.route...)); got != tc.want {
			t.Errorf("%s %v: %v, want %v", tc.op, tc.route, got, tc.want)
		}
	}
}

func TestReplies(t *testing.T) {
	open := &store.RFQ{Status: store.RFQQuoted}
	for text, want := range map[string]string{
		"Can we bring our dogs?":      "Pets",
		"Is catering included?":       "Catering",
		"Any discount possible?":      "best price",
		"We would like to proceed.":   "confirm the booking",
		"What is the tail number?":    "noted",
		"Do you accept cats on board": "Pets",
	} {
		if got := reply(open, text); !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("%q → %q", text, got)
		}
	}
	if got := reply(&store.RFQ{Status: store.RFQDeclined}, "please?"); !regexp.MustCompile("cannot").MatchString(got) {
		t.Errorf("declined: %q", got)
	}
}

func TestDisplayID(t *testing.T) {
	re := regexp.MustCompile(`^[A-Z]{2}\d{3}[A-Z]$`)
	seen := map[string]bool{}
	for n := int64(64956001); n < 64956101; n++ {
		id := displayID(n)
		if !re.MatchString(id) {
			t.Fatalf("display id %q", id)
		}
		seen[id] = true
	}
	if len(seen) < 95 {
		t.Errorf("only %d distinct display ids in 100", len(seen))
	}
}

func TestLatency(t *testing.T) {
	st := storetest.SQLite(t, store.Options{})
	m := New(st, Config{Latency: time.Millisecond, Operators: 99})
	if m.cfg.Operators != MaxOperators {
		t.Errorf("operators %d", m.cfg.Operators)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, call := range map[string]func() error{
		"create": func() error {
			_, err := m.CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS", Departure: departure, Passengers: 1}}})
			return err
		},
		"sync":    func() error { return m.SyncTrip(ctx, "atrip-1") },
		"message": func() error { _, err := m.SendMessage(ctx, "arfq-1", "x"); return err },
		"search":  func() error { _, err := m.SearchEmptyLegs(ctx, market.EmptyLegQuery{From: "KTEB"}); return err },
		"watch":   func() error { _, err := m.CreateWatch(ctx, market.WatchRequest{From: "KTEB"}); return err },
		"cancel":  func() error { return m.CancelTrip(ctx, "atrip-1", "OTHER", "") },
		"quote":   func() error { return m.SyncQuote(ctx, "aquote-1") },
		"delete":  func() error { _, _, err := m.DeleteWatch(ctx, "awatch-1"); return err },
		"watches": func() error { return m.SyncWatches(ctx) },
	} {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	// With time to wait, the latency only delays.
	if _, err := m.CreateTrip(context.Background(), market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS",
		Departure: departure, Passengers: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateTrip(context.Background(), market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "XXXX",
		Departure: departure, Passengers: 1}}}); err == nil {
		t.Error("an airport outside the table was accepted")
	}
}

func TestWatchNames(t *testing.T) {
	if got := market.WatchName(market.WatchRequest{From: "EGGW", Category: market.Light}); got != "Empty legs EGGW to anywhere (light)" {
		t.Errorf("%q", got)
	}
	if got := market.WatchName(market.WatchRequest{To: "LFMN"}); got != "Empty legs anywhere to LFMN" {
		t.Errorf("%q", got)
	}
}
