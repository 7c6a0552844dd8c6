package tools_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestMockTripLifecycle drives a trip through the simulated marketplace:
// create → the first quote arrives → the others answer → message → reply →
// cancel, with subscribers told of each change.
func TestMockTripLifecycle(t *testing.T) {
	for _, era := range []struct {
		name string
		opts []client.ClientOption
	}{
		{"2026-07-28", nil},
		//lint:ignore SA1019 clients of the 2025-11-25 era are served too
		{"2025-11-25", []client.ClientOption{client.WithLegacyProtocolOnly()}},
	} {
		t.Run(era.name, func(t *testing.T) { mockLifecycle(t, newMockEnv(t, era.opts...)) })
	}
}

func mockLifecycle(t *testing.T, e *env) {
	c := e.c
	notes := mcptest.ListenUpdates(c)

	var trip tripResult
	mcptest.OK(t, c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 6,
		"departure_date": futureDate(e.clock, 72*time.Hour), "notes": "two dogs", "external_reference": "CRM-1042"}), &trip)
	if !strings.HasPrefix(trip.TripID, "atrip-") || trip.Status != "created" || trip.NextAction != "OPEN_AVINODE" ||
		trip.DeepLink == "" || trip.DeepLinks["search_in_avinode"] != trip.DeepLink || trip.DeepLinks["view_in_avinode"] == "" ||
		trip.DeepLinks["cancel"] == "" || trip.Marketplace != "mock" || trip.OperatorsAsked != mock.DefaultOperators ||
		len(trip.DisplayID) != 6 || !strings.Contains(trip.Message, "get_quotes") {
		t.Fatalf("create_trip = %+v", trip)
	}
	if len(trip.Segments) != 1 || trip.Segments[0].DistanceNM < 2000 || trip.Segments[0].DistanceNM > 2200 ||
		trip.Segments[0].FromName != "Teterboro Airport" || trip.Resources.Quotes != "avinode://trips/"+trip.TripID+"/quotes" {
		t.Errorf("segments %+v resources %+v", trip.Segments, trip.Resources)
	}
	subscribe(t, c, e.n, trip.Resources.Quotes, trip.Resources.Trip)

	// Nothing has answered yet.
	var q quotesResult
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	if q.Total != 0 || q.Status.OperatorsAsked != 5 || q.Status.Pending != 5 || q.Status.First != nil {
		t.Fatalf("before any answer: %+v", q)
	}

	// The first operator quotes after three seconds; the marketplace
	// publishes it with a webhook pointer, the processor fetches it, and
	// subscribers hear of it without asking.
	e.clock.Advance(3 * time.Second)
	if n, err := e.m.Deliver(context.Background(), ""); err != nil || n != 1 {
		t.Fatalf("Deliver = %d, %v", n, err)
	}
	if n := e.process(t); n != 1 {
		t.Fatalf("processed %d webhook events, want 1", n)
	}
	evs, err := e.st.WebhookEvents(context.Background(), store.EventFilter{})
	if err != nil || len(evs) != 1 || evs[0].Status != store.EventCompleted || evs[0].EventType != "quote_received" ||
		evs[0].TripID != trip.TripID || evs[0].QuoteID == "" || evs[0].Source != store.SourceMock || evs[0].TripRef != trip.DisplayID {
		t.Fatalf("webhook events after the first quote: %+v, %v", evs, err)
	}
	notes.Seen(t, trip.Resources.Quotes)
	notes.Seen(t, trip.Resources.Trip)
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	if q.Total != 1 || q.Status.Quoted != 1 || q.Status.Pending != 4 || q.Status.First == nil || *q.Status.First != 0.1 {
		t.Fatalf("after the first quote: %+v", q.Status)
	}
	first := q.Quotes[0]
	if first.OperatorName == "" || first.AircraftType == "" || first.AircraftTail == "" || first.Currency == "" ||
		first.Total <= 0 || first.Base+first.TaxesFees != first.Total || first.Status != "active" || first.ValidUntil == nil ||
		len(first.Breakdown) < 2 || first.SellerMessage == "" {
		t.Errorf("first quote = %+v", first)
	}
	sum := 0.0
	for _, l := range first.Breakdown {
		sum += l.Amount
	}
	if int(sum*100+0.5) != int(first.Total*100+0.5) {
		t.Errorf("breakdown adds to %.2f, total %.2f", sum, first.Total)
	}

	// The rest of the window: every operator has answered or never will,
	// and the answers are read lazily, without the worker.
	e.clock.Advance(2 * time.Minute)
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	s := q.Status
	if s.Responded != s.Quoted+s.Declined || s.Quoted+s.Declined+s.Pending != 5 || s.Quoted < 1 || q.Total != s.Quoted ||
		s.Average == nil || *s.Average < *s.First || len(q.Cheapest) == 0 {
		t.Fatalf("after the window: %+v", q)
	}
	for _, d := range s.Declines {
		if !isDeclineReason(d.Reason) {
			t.Errorf("decline reason %q is not Avinode's", d.Reason)
		}
	}

	var trips tripView
	mcptest.Structured(t, c.Call("get_trip", map[string]any{"trip_id": trip.TripID}), &trips)
	if trips.Status != "open" || trips.Notes != "two dogs" || len(trips.RFQs) != 5 || trips.QuoteStatus.Quoted != s.Quoted {
		t.Fatalf("get_trip = %+v", trips)
	}
	var quotedRFQ string
	for _, r := range trips.RFQs {
		if r.Status == "quoted" && quotedRFQ == "" {
			quotedRFQ = r.RFQID
		}
		if r.Status == "declined" && !isDeclineReason(r.DeclineReason) {
			t.Errorf("rfq %+v", r)
		}
	}

	var rfq rfqView
	res := c.Call("get_rfq", map[string]any{"rfq_id": quotedRFQ})
	mcptest.Structured(t, res, &rfq)
	if rfq.Status != "quoted" || rfq.LatestQuote == nil || len(rfq.LatestQuote.Breakdown) == 0 || len(rfq.Quotes) != 1 || len(rfq.Lifts) != 1 {
		t.Fatalf("get_rfq = %+v", rfq)
	}
	if !strings.Contains(mcptest.Text(res), "untrusted-data-") {
		t.Errorf("seller text is not fenced: %.200s", mcptest.Text(res))
	}

	// A message; the operator replies after the first-response delay.
	notes.Reset()
	var sent struct {
		ID   string `json:"message_id"`
		From string `json:"from"`
		Note string `json:"note"`
	}
	mcptest.OK(t, c.Call("send_message", map[string]any{"rfq_id": quotedRFQ, "message": "Can we bring two dogs?"}), &sent)
	if !strings.HasPrefix(sent.ID, "abuyermsg-") || sent.From != "buyer" || sent.Note == "" {
		t.Fatalf("send_message = %+v", sent)
	}
	notes.Seen(t, trip.Resources.Trip)
	var thread messagesResult
	mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": quotedRFQ}), &thread)
	if len(thread.Messages) != 1 {
		t.Fatalf("before the reply: %+v", thread)
	}
	e.clock.Advance(3 * time.Second)
	mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": quotedRFQ}), &thread)
	if len(thread.Messages) != 2 || thread.Messages[1].From != "seller" || !strings.HasPrefix(thread.Messages[1].ID, "asellermsg-") ||
		!strings.Contains(thread.Messages[1].Text, "Pets") || thread.Messages[1].Sender != rfq.SellerName || thread.TripID != trip.TripID {
		t.Fatalf("after the reply: %+v", thread)
	}

	// Cancel: the trip, its RFQs and quotes; the sellers get the message.
	notes.Reset()
	var cancelled tripView
	mcptest.Structured(t, c.Call("cancel_trip", map[string]any{"trip_id": trip.TripID, "reason": "BY_CLIENT",
		"message_to_sellers": "The client found another option."}), &cancelled)
	if cancelled.Status != "cancelled" || cancelled.CancelReason != "BY_CLIENT" || cancelled.AlreadyCancelled ||
		cancelled.QuoteStatus.Pending != 0 {
		t.Fatalf("cancel_trip = %+v", cancelled)
	}
	notes.Seen(t, trip.Resources.Quotes)
	for _, r := range cancelled.RFQs {
		if r.Status != "cancelled" && r.Status != "declined" {
			t.Errorf("rfq after cancel: %+v", r)
		}
	}
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	for _, qr := range q.Quotes {
		if qr.Status != "cancelled" {
			t.Errorf("quote after cancel: %+v", qr)
		}
	}
	mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": quotedRFQ}), &thread)
	told := false
	for _, m := range thread.Messages {
		told = told || (m.Text == "The client found another option." && m.From == "buyer")
	}
	if !told {
		t.Errorf("the sellers were not told: %+v", thread.Messages)
	}
	mcptest.Structured(t, c.Call("cancel_trip", map[string]any{"trip_id": trip.TripID, "reason": "OTHER"}), &cancelled)
	if !cancelled.AlreadyCancelled || cancelled.CancelReason != "BY_CLIENT" {
		t.Errorf("second cancel = %+v", cancelled)
	}
	mcptest.FailCode(t, c.Call("send_message", map[string]any{"rfq_id": quotedRFQ, "message": "still there?"}), mcperr.Conflict)
	// Answers still scheduled were dropped.
	e.clock.Advance(time.Hour)
	if n, err := e.m.Deliver(context.Background(), ""); err != nil || n != 0 {
		t.Errorf("deliveries after cancel: %d, %v", n, err)
	}
	// Every answer published was announced by a pointer, and processed
	// (found unchanged when a read had fetched it first).
	e.process(t)
	evs, err = e.st.WebhookEvents(context.Background(), store.EventFilter{Limit: 100})
	if err != nil || len(evs) < 2 {
		t.Fatalf("webhook events: %d, %v", len(evs), err)
	}
	for _, ev := range evs {
		if ev.Status != store.EventCompleted {
			t.Errorf("event %+v not completed", ev)
		}
	}

	// The trip as resources.
	var rv tripView
	readResource(t, c, trip.Resources.Trip, &rv)
	if rv.TripID != trip.TripID || rv.Status != "cancelled" {
		t.Errorf("trip resource = %+v", rv)
	}
	var qv quotesResult
	readResource(t, c, trip.Resources.Quotes, &qv)
	if qv.TripID != trip.TripID || qv.Total != q.Total {
		t.Errorf("quotes resource = %+v", qv)
	}
	list, err := c.Raw().ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != trip.Resources.Trip {
		t.Errorf("resources/list = %+v, %v", list, err)
	}
	for _, uri := range []string{"avinode://trips/nope", "avinode://trips/atrip-9", "avinode://trips/atrip-9/quotes"} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		if _, err := c.Raw().ReadResource(context.Background(), req); err == nil {
			t.Errorf("read %s succeeded", uri)
		}
	}
}

func TestMultiLegAndRoundTrips(t *testing.T) {
	e := newMockEnv(t)
	var trip tripResult
	mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "EGGW", "arrival_airport": "LFMN", "passengers": 4,
		"departure_date": futureDate(e.clock, 48*time.Hour),
		"segments":       []map[string]any{{"departure_airport": "LFMN", "arrival_airport": "LSGG", "departure_date": futureDate(e.clock, 96*time.Hour), "passengers": 3}},
		"return_date":    futureDate(e.clock, 120*time.Hour), "aircraft_category": "light"}), &trip)
	if len(trip.Segments) != 3 {
		t.Fatalf("segments = %+v", trip.Segments)
	}
	want := [][2]string{{"EGGW", "LFMN"}, {"LFMN", "LSGG"}, {"LSGG", "EGGW"}}
	for i, s := range trip.Segments {
		if s.From != want[i][0] || s.To != want[i][1] {
			t.Errorf("leg %d = %s→%s, want %v", i, s.From, s.To, want[i])
		}
	}
	if trip.Segments[1].Passengers != 3 || trip.Segments[2].Passengers != 4 {
		t.Errorf("passengers per leg: %+v", trip.Segments)
	}
	e.clock.Advance(3 * time.Minute)
	var q quotesResult
	mcptest.Structured(t, e.c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	if q.Total == 0 {
		t.Fatal("no quote for a European light-jet trip")
	}
	for _, qr := range q.Quotes {
		if qr.Currency == "USD" {
			t.Errorf("a European operator quoted in USD: %+v", qr)
		}
	}

	// No simulated operator flies 12 passengers in a light jet.
	mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KPBI", "passengers": 12,
		"departure_date": futureDate(e.clock, 48*time.Hour), "aircraft_category": "light"}), &trip)
	if trip.OperatorsAsked != 0 || !strings.Contains(trip.Message, "No simulated operator") {
		t.Errorf("an impossible trip: %+v", trip)
	}
}

func TestBadInputs(t *testing.T) {
	e := newMockEnv(t)
	c := e.c
	dep := futureDate(e.clock, 72*time.Hour)
	base := func(over map[string]any) map[string]any {
		a := map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 6, "departure_date": dep}
		for k, v := range over {
			if v == nil {
				delete(a, k)
			} else {
				a[k] = v
			}
		}
		return a
	}
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		code  mcperr.Code
		field string
	}{
		{"lower-case ICAO", "create_trip", base(map[string]any{"departure_airport": "kteb"}), mcperr.Validation, "departure_airport"},
		{"three letters", "create_trip", base(map[string]any{"arrival_airport": "VNY"}), mcperr.Validation, "arrival_airport"},
		{"unknown airport", "create_trip", base(map[string]any{"arrival_airport": "ZZZZ"}), mcperr.Validation, "arrival_airport"},
		{"0 passengers", "create_trip", base(map[string]any{"passengers": 0}), mcperr.Validation, "passengers"},
		{"20 passengers", "create_trip", base(map[string]any{"passengers": 20}), mcperr.Validation, "passengers"},
		{"missing passengers", "create_trip", base(map[string]any{"passengers": nil}), mcperr.Validation, "passengers"},
		{"past date", "create_trip", base(map[string]any{"departure_date": futureDate(e.clock, -time.Hour)}), mcperr.Validation, "departure_date"},
		{"not a date-time", "create_trip", base(map[string]any{"departure_date": "next tuesday"}), mcperr.Validation, "departure_date"},
		{"date without zone", "create_trip", base(map[string]any{"departure_date": "2031-03-12"}), mcperr.Validation, "departure_date"},
		{"three years ahead", "create_trip", base(map[string]any{"departure_date": futureDate(e.clock, 3*365*24*time.Hour)}), mcperr.Validation, "departure_date"},
		{"return before departure", "create_trip", base(map[string]any{"return_date": futureDate(e.clock, 24*time.Hour)}), mcperr.Validation, "return_date"},
		{"same airports", "create_trip", base(map[string]any{"arrival_airport": "KTEB"}), mcperr.Validation, "arrival_airport"},
		{"unknown category", "create_trip", base(map[string]any{"aircraft_category": "jumbo"}), mcperr.Validation, "aircraft_category"},
		{"segment goes nowhere", "create_trip", base(map[string]any{"segments": []map[string]any{{"departure_airport": "KLAS",
			"arrival_airport": "KLAS", "departure_date": futureDate(e.clock, 96*time.Hour)}}}), mcperr.Validation, "segments[0].arrival_airport"},
		{"return goes nowhere", "create_trip", base(map[string]any{"segments": []map[string]any{{"departure_airport": "KVNY",
			"arrival_airport": "KTEB", "departure_date": futureDate(e.clock, 96*time.Hour)}}, "return_date": futureDate(e.clock, 120*time.Hour)}),
			mcperr.Validation, "return_date"},
		{"unknown argument", "create_trip", base(map[string]any{"budget": 1}), mcperr.Validation, "budget"},
		{"segment before first leg", "create_trip", base(map[string]any{"segments": []map[string]any{{"departure_airport": "KVNY",
			"arrival_airport": "KLAS", "departure_date": futureDate(e.clock, time.Hour)}}}), mcperr.Validation, "segments[0].departure_date"},
		{"segment unknown airport", "create_trip", base(map[string]any{"segments": []map[string]any{{"departure_airport": "KVNY",
			"arrival_airport": "QQQQ", "departure_date": futureDate(e.clock, 96*time.Hour)}}}), mcperr.Validation, "segments[0].arrival_airport"},
		{"unknown trip", "get_trip", map[string]any{"trip_id": "atrip-999"}, mcperr.NotFound, "trip_id"},
		{"malformed trip id", "get_trip", map[string]any{"trip_id": "trip-1"}, mcperr.Validation, "trip_id"},
		{"cancel unknown trip", "cancel_trip", map[string]any{"trip_id": "atrip-999", "reason": "OTHER"}, mcperr.NotFound, "trip_id"},
		{"cancel bad reason", "cancel_trip", map[string]any{"trip_id": "atrip-999", "reason": "BORED"}, mcperr.Validation, "reason"},
		{"unknown rfq", "get_rfq", map[string]any{"rfq_id": "arfq-1"}, mcperr.NotFound, "rfq_id"},
		{"quotes of unknown trip", "get_quotes", map[string]any{"trip_id": "atrip-1"}, mcperr.NotFound, "trip_id"},
		{"unknown quote", "get_quotes", map[string]any{"quote_id": "aquote-1"}, mcperr.NotFound, "quote_id"},
		{"no quote selector", "get_quotes", map[string]any{}, mcperr.Validation, "trip_id"},
		{"two quote selectors", "get_quotes", map[string]any{"trip_id": "atrip-1", "rfq_id": "arfq-1"}, mcperr.Validation, "trip_id"},
		{"message to unknown rfq", "send_message", map[string]any{"rfq_id": "arfq-1", "message": "hi"}, mcperr.NotFound, "rfq_id"},
		{"blank message", "send_message", map[string]any{"rfq_id": "arfq-1", "message": "   "}, mcperr.Validation, "message"},
		{"empty message", "send_message", map[string]any{"rfq_id": "arfq-1", "message": ""}, mcperr.Validation, "message"},
		{"thread of unknown rfq", "get_messages", map[string]any{"rfq_id": "arfq-1"}, mcperr.NotFound, "rfq_id"},
		{"airport query blank", "search_airports", map[string]any{"query": "  "}, mcperr.Validation, "query"},
		{"empty legs without airports", "search_empty_legs", map[string]any{"date": "2031-03-12"}, mcperr.Validation, "departure_airport"},
		{"empty legs in the past", "search_empty_legs", map[string]any{"departure_airport": "KTEB", "date": "2031-03-01"}, mcperr.Validation, "date"},
		{"empty legs unknown airport", "search_empty_legs", map[string]any{"arrival_airport": "ZZZZ", "date": "2031-03-12"}, mcperr.Validation, "arrival_airport"},
		{"watch without airports", "create_watch", map[string]any{"aircraft_category": "light"}, mcperr.Validation, "departure_airport"},
		{"quotes at a negative offset", "get_quotes", map[string]any{"trip_id": "atrip-1", "offset": -1}, mcperr.Validation, "offset"},
		{"messages over the limit", "get_messages", map[string]any{"rfq_id": "arfq-1", "limit": 201}, mcperr.Validation, "limit"},
		{"watch unknown airport", "create_watch", map[string]any{"departure_airport": "ZZZZ"}, mcperr.Validation, "departure_airport"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			failField(t, c.Call(tc.tool, tc.args), tc.code, tc.field)
		})
	}
	// Nothing was half-written.
	if trips, err := e.st.RecentTrips(context.Background(), 10); err != nil || len(trips) != 0 {
		t.Errorf("refused calls stored trips: %v, %v", trips, err)
	}
}

func TestAirportsAndEmptyLegs(t *testing.T) {
	e := newMockEnv(t)
	c := e.c
	var found struct {
		Airports []struct {
			ICAO, IATA, Name, City, Country, Type string
		} `json:"airports"`
		Total int `json:"total"`
	}
	for _, q := range []struct{ query, icao string }{{"KTEB", "KTEB"}, {"LGW", "EGKK"}, {"teterboro", "KTEB"}, {"le bourget", "LFPB"}} {
		mcptest.OK(t, c.Call("search_airports", map[string]any{"query": q.query, "limit": 3}), &found)
		if found.Total == 0 || found.Airports[0].ICAO != q.icao || found.Airports[0].Name == "" || found.Airports[0].Type == "" {
			t.Errorf("search %q = %+v", q.query, found)
		}
	}
	mcptest.OK(t, c.Call("search_airports", map[string]any{"query": "QQQQ"}), &found)
	if found.Total != 0 {
		t.Errorf("an unknown code found %+v", found)
	}

	var legs struct {
		EmptyLegs []struct {
			ID, From, To string
			From2        string    `json:"departure_airport"`
			Earliest     time.Time `json:"earliest_departure"`
			Capacity     int       `json:"capacity"`
			Category     string    `json:"aircraft_category"`
			Price        float64   `json:"price"`
		} `json:"empty_legs"`
		Total int    `json:"total"`
		Note  string `json:"note"`
	}
	args := map[string]any{"departure_airport": "KTEB", "date": e.clock.Now().Add(48 * time.Hour).Format("2006-01-02"), "flexibility_days": 7, "limit": 50}
	mcptest.OK(t, c.Call("search_empty_legs", args), &legs)
	if legs.Total == 0 || legs.Note == "" {
		t.Fatalf("no empty legs near Teterboro in two weeks: %+v", legs)
	}
	var again struct{ Total int }
	mcptest.OK(t, c.Call("search_empty_legs", args), &again)
	if again.Total != legs.Total {
		t.Errorf("the simulation is not deterministic: %d then %d legs", legs.Total, again.Total)
	}
	for i, l := range legs.EmptyLegs {
		if l.Price <= 0 || l.Capacity == 0 || (i > 0 && l.Earliest.Before(legs.EmptyLegs[i-1].Earliest)) {
			t.Errorf("leg %d = %+v", i, l)
		}
	}
	args["passengers"], args["aircraft_category"] = 12, "heavy"
	mcptest.OK(t, c.Call("search_empty_legs", args), &legs)
	for _, l := range legs.EmptyLegs {
		if l.Capacity < 12 || l.Category != "heavy" {
			t.Errorf("filtered leg %+v", l)
		}
	}

	// Watches: create, list, delete.
	w := createWatch(t, c, map[string]any{"departure_airport": "EGGW", "aircraft_category": "midsize"})
	if !strings.HasPrefix(w.ID, "awatch-") || !w.Active || w.DaysOut != 7 || !strings.Contains(w.Name, "EGGW") {
		t.Fatalf("create_watch = %+v", w)
	}
	if list := listWatches(t, c); list.Total != 1 || list.Watches[0].ID != w.ID {
		t.Errorf("list_watches = %+v", list)
	}
	if del := deleteWatch(t, c, w.ID); !del.Deleted || del.Watch.Active {
		t.Errorf("deleted watch still active: %+v", del)
	}
	if list := listWatches(t, c); list.Total != 0 {
		t.Errorf("after delete: %+v", list)
	}
}

// TestStatePersistsAcrossProcesses: two servers on one store file — as two
// processes would be — see the same trips, and each due answer is delivered
// once although both deliver.
func TestStatePersistsAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "avinode.db")
	clk := newClock()
	var servers []*mcptest.Client
	var markets []*mock.Market
	for range 2 {
		n := kit.NewNotifier()
		st := openStore(t, path, n)
		m := mock.New(st, mock.Config{FirstResponse: time.Second, ResponseWindow: time.Minute, Now: clk.Now})
		markets = append(markets, m)
		servers = append(servers, serve(t, tools.Deps{Store: st, Market: m, Now: clk.Now}, n, "", kit.Options{}))
	}
	var trip tripResult
	mcptest.OK(t, servers[0].Call("create_trip", map[string]any{"departure_airport": "KDAL", "arrival_airport": "KASE", "passengers": 8,
		"departure_date": futureDate(clk, 72*time.Hour)}), &trip)
	var view tripView
	mcptest.Structured(t, servers[1].Call("get_trip", map[string]any{"trip_id": trip.TripID}), &view)
	if view.TripID != trip.TripID || len(view.RFQs) != trip.OperatorsAsked {
		t.Fatalf("the other process sees %+v", view)
	}
	clk.Advance(2 * time.Minute)
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, m := range markets {
		wg.Go(func() {
			n, err := m.Deliver(context.Background(), "")
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	var a, b quotesResult
	mcptest.Structured(t, servers[0].Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &a)
	mcptest.Structured(t, servers[1].Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &b)
	if a.Total != b.Total || a.Total == 0 || counts[0]+counts[1] != a.Status.Responded {
		t.Errorf("deliveries %v, quotes %d and %d, responded %d", counts, a.Total, b.Total, a.Status.Responded)
	}
}

// TestMockDeterminism: the same trips on two fresh stores get the same
// operators, answers and prices.
func TestMockDeterminism(t *testing.T) {
	run := func() quotesResult {
		e := newMockEnv(t)
		var trip tripResult
		mcptest.OK(t, e.c.Call("create_trip", map[string]any{"departure_airport": "LFPB", "arrival_airport": "LIML", "passengers": 5,
			"departure_date": futureDate(e.clock, 50*time.Hour)}), &trip)
		e.clock.Advance(5 * time.Minute)
		var q quotesResult
		mcptest.Structured(t, e.c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
		return q
	}
	a, b := run(), run()
	if a.Total != b.Total || a.Status.Declined != b.Status.Declined {
		t.Fatalf("two runs differ: %+v vs %+v", a.Status, b.Status)
	}
	for i := range a.Quotes {
		if a.Quotes[i].Total != b.Quotes[i].Total || a.Quotes[i].OperatorName != b.Quotes[i].OperatorName ||
			a.Quotes[i].QuoteID != b.Quotes[i].QuoteID {
			t.Errorf("quote %d differs: %+v vs %+v", i, a.Quotes[i], b.Quotes[i])
		}
	}
}

// TestWorkerDelivers runs the simulation's worker, which publishes the
// answers, and the webhook processor, which fetches them, until the first
// quote is stored.
func TestWorkerDelivers(t *testing.T) {
	n := kit.NewNotifier()
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), n)
	m := mock.New(st, mock.Config{}) // answers at once
	d := tools.Deps{Store: st, Market: m}
	c := serve(t, d, n, "", kit.Options{})
	notes := mcptest.ListenUpdates(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	errs := 0
	var trip tripResult
	mcptest.OK(t, c.Call("create_trip", map[string]any{"departure_airport": "OMDW", "arrival_airport": "LSGG", "passengers": 10,
		"departure_date": time.Now().Add(72 * time.Hour).Format(time.RFC3339)}), &trip)
	subscribe(t, c, n, trip.Resources.Quotes)
	p := processor(t, st, m, nil)
	go func() { done <- m.Run(ctx, 5*time.Millisecond, nil, func(error) { errs++ }) }()
	go func() { done <- p.Run(ctx) }()
	notes.Seen(t, trip.Resources.Quotes)
	// The first answer heard may be a decline: the workers store the quote
	// soon after, without anyone reading.
	var qs []store.Quote
	deadline := time.Now().Add(10 * time.Second)
	for len(qs) == 0 && time.Now().Before(deadline) {
		var err error
		if qs, err = st.Quotes(context.Background(), store.QuoteFilter{TripID: trip.TripID}, time.Now()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	for range 2 {
		if err := <-done; err != context.Canceled {
			t.Errorf("Run = %v", err)
		}
	}
	if len(qs) == 0 || errs != 0 {
		t.Errorf("quotes %d, worker errors %d", len(qs), errs)
	}
}
