package tools_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

const (
	apiToken  = "app-token-5f1c2d9e"
	authToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtY3AifQ.c2lnbmF0dXJl"
)

type liveEnv struct {
	c    *mcptest.Client
	n    *kit.Notifier
	fake *fakeavinode.Server
}

// fastRetry keeps the tests quick while still retrying.
var fastRetry = retry.Policy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxRetryAfter: 2 * time.Second}

func newLiveEnv(t *testing.T, tune func(*avinode.Config)) *liveEnv {
	t.Helper()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	cfg := avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken, Version: "test",
		Timeout: 2 * time.Second, Retry: fastRetry}
	if tune != nil {
		tune(&cfg)
	}
	c, err := avinode.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := kit.NewNotifier()
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), n)
	d := tools.Deps{Store: st, Market: avinode.NewBackend(c, st)}
	return &liveEnv{c: serve(t, d, n, "", kit.Options{}), n: n, fake: fake}
}

func in(days int) string {
	return time.Now().UTC().Add(time.Duration(days) * 24 * time.Hour).Format(time.RFC3339)
}

// TestLiveTools runs every tool on the Avinode client against the fake.
func TestLiveTools(t *testing.T) {
	e := newLiveEnv(t, nil)
	c, fake := e.c, e.fake
	notes := mcptest.ListenUpdates(c)

	var trip tripResult
	mcptest.OK(t, c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 6,
		"departure_date": in(3), "return_date": in(5), "aircraft_category": "midsize", "external_reference": "CRM-7"}), &trip)
	if !strings.HasPrefix(trip.TripID, "atrip-") || trip.Marketplace != "avinode" || trip.OperatorsAsked != 0 ||
		!strings.Contains(trip.DeepLink, "/search/load/"+trip.TripID) || trip.DeepLinks["view_in_avinode"] == "" ||
		trip.DisplayID == "" || len(trip.Segments) != 2 || !strings.Contains(trip.Message, "deep_link") {
		t.Fatalf("create_trip = %+v", trip)
	}
	if fake.Count(http.MethodPost, "/trips") != 1 {
		t.Errorf("POST /trips sent %d times", fake.Count(http.MethodPost, "/trips"))
	}
	subscribe(t, c, e.n, trip.Resources.Quotes)

	// The user sends RFQs in Avinode; operators answer.
	rfqA, liftA := fake.AddRFQ(trip.TripID, fakeavinode.Seller{ID: "acompany-1", Name: "Executive Jet Management", Country: "US"},
		fakeavinode.Aircraft{Type: "Citation X", Category: "Midsize jet", Tail: "N601EJ", MaxPax: 8, Year: 2016})
	rfqB, liftB := fake.AddRFQ(trip.TripID, fakeavinode.Seller{ID: "acompany-2", Name: "Maple Leaf Jets", Country: "CA"},
		fakeavinode.Aircraft{Type: "Challenger 350", Category: "Super midsize jet", Tail: "C-GMLJ", MaxPax: 9})
	rfqC, _ := fake.AddRFQ(trip.TripID, fakeavinode.Seller{ID: "acompany-3", Name: "Quiet Air"},
		fakeavinode.Aircraft{Type: "Phenom 300", Category: "Light jet", MaxPax: 7})
	quoteID := fake.Quote(rfqA, liftA, 48200, "USD", 48*time.Hour, "Pet-friendly aircraft available",
		fakeavinode.Line{Description: "Flight", Type: "FLIGHT", Amount: 45000}, fakeavinode.Line{Description: "Fees", Type: "FEE", Amount: 3200})
	fake.Decline(rfqB, liftB, "CABOTAGE", "We cannot fly US domestic legs.")

	var q quotesResult
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	notes.Seen(t, trip.Resources.Quotes)
	if q.Total != 1 || q.Status.OperatorsAsked != 3 || q.Status.Quoted != 1 || q.Status.Declined != 1 || q.Status.Pending != 1 ||
		len(q.Status.Declines) != 1 || q.Status.Declines[0].Reason != "CABOTAGE" || q.Cheapest["USD"] != quoteID {
		t.Fatalf("get_quotes = %+v", q)
	}
	got := q.Quotes[0]
	if got.QuoteID != quoteID || got.RFQID != rfqA || got.OperatorName != "Executive Jet Management" || got.AircraftType != "Citation X" ||
		got.AircraftTail != "N601EJ" || got.Total != 48200 || got.Base != 45000 || got.TaxesFees != 3200 || got.Currency != "USD" ||
		got.ValidUntil == nil || got.Status != "active" || got.SellerMessage != "Pet-friendly aircraft available" {
		t.Errorf("quote = %+v", got)
	}
	if !fake.Requests()[len(fake.Requests())-1].Query.Has("latestquote") {
		t.Error("the RFQs were read without their latest quotes")
	}

	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"rfq_id": rfqA}), &q)
	if q.Total != 1 || q.TripID != trip.TripID || q.Status.OperatorsAsked != 1 {
		t.Errorf("get_quotes by rfq = %+v", q)
	}
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"quote_id": quoteID}), &q)
	if q.Total != 1 || q.RFQID != rfqA || q.Quotes[0].Total != 48200 {
		t.Errorf("get_quotes by quote = %+v", q)
	}

	var rfq rfqView
	mcptest.Structured(t, c.Call("get_rfq", map[string]any{"rfq_id": rfqB}), &rfq)
	if rfq.Status != "declined" || rfq.DeclineReason != "CABOTAGE" || rfq.LatestQuote != nil {
		t.Errorf("get_rfq declined = %+v", rfq)
	}
	mcptest.Structured(t, c.Call("get_rfq", map[string]any{"rfq_id": rfqA}), &rfq)
	if rfq.Status != "quoted" || rfq.LatestQuote == nil || len(rfq.LatestQuote.Breakdown) != 2 {
		t.Errorf("get_rfq quoted = %+v", rfq)
	}

	// Messages both ways.
	var sent struct {
		ID string `json:"message_id"`
	}
	mcptest.OK(t, c.Call("send_message", map[string]any{"rfq_id": rfqA, "message": "Can the dogs travel in the cabin?"}), &sent)
	if !strings.HasPrefix(sent.ID, "abuyermsg-") || fake.Count(http.MethodPost, "/tripmsgs/"+rfqA+"/chat") != 1 {
		t.Fatalf("send_message = %+v", sent)
	}
	reply := fake.SellerMessage(rfqA, "Yes, both dogs are welcome.")
	var thread messagesResult
	mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": rfqA}), &thread)
	if len(thread.Messages) != 2 || thread.Messages[0].ID != sent.ID || thread.Messages[1].ID != reply ||
		thread.Messages[1].From != "seller" || thread.Messages[1].Sender != "Executive Jet Management" {
		t.Fatalf("get_messages = %+v", thread)
	}
	// A second read fetches no seller message again.
	before := fake.Count(http.MethodGet, "/tripmsgs/")
	mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": rfqA, "limit": 1}), &thread)
	if len(thread.Messages) != 1 || fake.Count(http.MethodGet, "/tripmsgs/") != before {
		t.Errorf("second read: %d messages, %d message fetches", len(thread.Messages), fake.Count(http.MethodGet, "/tripmsgs/")-before)
	}

	var view tripView
	mcptest.Structured(t, c.Call("get_trip", map[string]any{"trip_id": trip.TripID}), &view)
	if view.Status != "open" || len(view.RFQs) != 3 || view.Marketplace != "avinode" {
		t.Fatalf("get_trip = %+v", view)
	}

	// Cancel.
	mcptest.Structured(t, c.Call("cancel_trip", map[string]any{"trip_id": trip.TripID, "reason": "BOOKED", "message_to_sellers": "Booked elsewhere, thank you."}), &view)
	canceled, reason, msg, _ := fake.TripState(trip.TripID)
	if !canceled || reason != "BOOKED" || msg != "Booked elsewhere, thank you." || view.Status != "cancelled" {
		t.Fatalf("cancel: fake %v %q %q, view %+v", canceled, reason, msg, view)
	}
	for _, r := range view.RFQs {
		if r.RFQID == rfqC && r.Status != "cancelled" {
			t.Errorf("unanswered RFQ after cancel: %+v", r)
		}
	}
	mcptest.Structured(t, c.Call("cancel_trip", map[string]any{"trip_id": trip.TripID, "reason": "OTHER"}), &view)
	if !view.AlreadyCancelled || fake.Count(http.MethodPut, "/trips/") != 1 {
		t.Errorf("a second cancel reached Avinode: %+v", view)
	}
	mcptest.FailCode(t, c.Call("send_message", map[string]any{"rfq_id": rfqA, "message": "hello?"}), mcperr.Conflict)

	// Ids Avinode does not know.
	failField(t, c.Call("get_trip", map[string]any{"trip_id": "atrip-42"}), mcperr.NotFound, "trip_id")
	failField(t, c.Call("get_rfq", map[string]any{"rfq_id": "arfq-42"}), mcperr.NotFound, "rfq_id")
	failField(t, c.Call("get_quotes", map[string]any{"quote_id": "aquote-42"}), mcperr.NotFound, "quote_id")
	failField(t, c.Call("get_messages", map[string]any{"rfq_id": "arfq-42"}), mcperr.NotFound, "rfq_id")
	failField(t, c.Call("cancel_trip", map[string]any{"trip_id": "atrip-42", "reason": "OTHER"}), mcperr.NotFound, "trip_id")
	failField(t, c.Call("send_message", map[string]any{"rfq_id": "arfq-42", "message": "x"}), mcperr.NotFound, "rfq_id")

	// Every request carried the Avinode headers; none was refused.
	for _, r := range fake.Requests() {
		if r.Status >= 400 && r.Status != http.StatusNotFound {
			t.Errorf("%s %s answered %d", r.Method, r.Path, r.Status)
		}
	}
}

func TestLiveAirportsEmptyLegsAndWatches(t *testing.T) {
	e := newLiveEnv(t, nil)
	c, fake := e.c, e.fake
	// An airport the embedded table lacks is found through Avinode, and a
	// trip may use it.
	fake.AddAirport("XZZA", "", "Test Field", "Nowhere", "US", 40.0, -75.0)
	var found struct {
		Airports []struct{ ICAO, Name, Type string } `json:"airports"`
	}
	mcptest.OK(t, c.Call("search_airports", map[string]any{"query": "XZZA"}), &found)
	if len(found.Airports) != 1 || found.Airports[0].Name != "Test Field" || found.Airports[0].Type != "" {
		t.Fatalf("search_airports = %+v", found)
	}
	mcptest.OK(t, c.Call("search_airports", map[string]any{"query": "KTEB"}), &found)
	if found.Airports[0].ICAO != "KTEB" || fake.Count(http.MethodGet, "/airports/search") != 2 {
		t.Errorf("an airport Avinode's search lacks comes from the table, after asking Avinode: %+v", found)
	}
	var trip tripResult
	mcptest.OK(t, c.Call("create_trip", map[string]any{"departure_airport": "XZZA", "arrival_airport": "KTEB", "passengers": 2,
		"departure_date": in(2)}), &trip)
	failField(t, c.Call("create_trip", map[string]any{"departure_airport": "QQQQ", "arrival_airport": "KTEB", "passengers": 2,
		"departure_date": in(2)}), mcperr.Validation, "departure_airport")

	fake.AddEmptyLeg("KTEB", "KPBI", time.Now().Add(48*time.Hour), "Citation X", "Midsize jet", 8, 12000, "USD", "Atlantic Coast Charter")
	fake.AddEmptyLeg("KTEB", "KPBI", time.Now().Add(50*time.Hour), "Phenom 300", "Light jet", 7, 8000, "USD", "Lakeshore")
	var legs struct {
		EmptyLegs []struct {
			ID       string  `json:"empty_leg_id"`
			From     string  `json:"departure_airport"`
			Category string  `json:"aircraft_category"`
			Price    float64 `json:"price"`
			Distance int     `json:"distance_nm"`
			Operator string  `json:"operator_name"`
		} `json:"empty_legs"`
	}
	mcptest.OK(t, c.Call("search_empty_legs", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KPBI",
		"date": time.Now().Add(48 * time.Hour).Format("2006-01-02"), "aircraft_category": "midsize"}), &legs)
	if len(legs.EmptyLegs) != 1 || legs.EmptyLegs[0].Price != 12000 || legs.EmptyLegs[0].Distance == 0 || legs.EmptyLegs[0].Operator == "" {
		t.Errorf("search_empty_legs = %+v", legs)
	}
	// A search only reads: a 503 is retried.
	fake.Inject(fakeavinode.Fault{Method: http.MethodPost, Path: "/emptylegs/search", Status: http.StatusServiceUnavailable})
	mcptest.OK(t, c.Call("search_empty_legs", map[string]any{"departure_airport": "KTEB", "date": time.Now().Add(48 * time.Hour).Format("2006-01-02")}), &legs)
	if len(legs.EmptyLegs) != 2 {
		t.Errorf("after a retried 503: %+v", legs)
	}

	w := createWatch(t, c, map[string]any{"departure_airport": "EGGW", "arrival_airport": "LFMN", "aircraft_category": "light",
		"name": "Luton to Nice"})
	if !strings.HasPrefix(w.ID, "aemptylegwatch-") || w.Name != "Luton to Nice" || !w.Active || w.Category != "light" {
		t.Fatalf("create_watch = %+v", w)
	}
	if list := listWatches(t, c); len(list.Watches) != 1 || list.Watches[0].ID != w.ID {
		t.Errorf("list_watches = %+v", list)
	}
	del := deleteWatch(t, c, w.ID)
	if name, active, ok := fake.Watch(w.ID); !ok || active || name != "Luton to Nice" || !del.Deleted || del.Watch.Active {
		t.Errorf("after delete: fake %q %v %v, result %+v", name, active, ok, del)
	}
	if list := listWatches(t, c); len(list.Watches) != 1 {
		t.Errorf("Avinode still lists the deactivated watch; the store should follow: %+v", list)
	}
}

// TestLiveFaults: Avinode's failures reach the agent with the right code,
// retryable or not, and a POST that may have reached Avinode is never sent
// twice.
func TestLiveFaults(t *testing.T) {
	tripArgs := func() map[string]any {
		return map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 4, "departure_date": in(3)}
	}
	tests := []struct {
		name      string
		fault     fakeavinode.Fault
		tool      string
		code      mcperr.Code
		retryable bool
		contains  string
		posts     int // POST /trips the fake received (for create_trip)
	}{
		{name: "429 on a POST is reported, not resent", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 429, RetryAfter: "7"},
			tool: "create_trip", code: mcperr.RateLimit, retryable: true, contains: "retry after 7s", posts: 1},
		{name: "503 on a POST: the outcome is unknown", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 503},
			tool: "create_trip", code: mcperr.Upstream, retryable: false, contains: "outcome is unknown", posts: 1},
		{name: "503 with Retry-After on a POST: not processed", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 503, RetryAfter: "7"},
			tool: "create_trip", code: mcperr.Upstream, retryable: true, contains: "retry after 7s", posts: 1},
		{name: "500 on a POST: the outcome is unknown", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 500},
			tool: "create_trip", code: mcperr.Upstream, retryable: false, contains: "find_trips with external_reference", posts: 1},
		{name: "timeout after the POST was received", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Delay: 3 * time.Second, After: true},
			tool: "create_trip", code: mcperr.Timeout, retryable: false, contains: "find_trips with external_reference", posts: 1},
		{name: "connection lost after the POST", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Drop: true, After: true},
			tool: "create_trip", code: mcperr.Transport, retryable: false, contains: "find_trips with external_reference", posts: 1},
		{name: "malformed JSON", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Malformed: true},
			tool: "create_trip", code: mcperr.Upstream, retryable: false, contains: "not the expected JSON", posts: 1},
		{name: "soft error with HTTP 200", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Code: "ERR_INPUT_GENERIC_INVALID"},
			tool: "create_trip", code: mcperr.Validation, contains: "ERR_INPUT_GENERIC_INVALID", posts: 1},
		{name: "soft not-found", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Code: "ERR_AIRPORT_NOT_FOUND"},
			tool: "create_trip", code: mcperr.NotFound, contains: "ERR_AIRPORT_NOT_FOUND", posts: 1},
		{name: "soft unknown code", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Code: "ERR_SOMETHING"},
			tool: "create_trip", code: mcperr.Upstream, contains: "ERR_SOMETHING", posts: 1},
		{name: "401 with a hint", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 401},
			tool: "create_trip", code: mcperr.Authentication, contains: "AVINODE_AUTH_TOKEN", posts: 1},
		{name: "403 with a hint", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 403},
			tool: "create_trip", code: mcperr.Authentication, contains: "API connection", posts: 1},
		{name: "400", fault: fakeavinode.Fault{Method: "POST", Path: "/trips", Status: 400},
			tool: "create_trip", code: mcperr.Validation, contains: "ERR_INJECTED", posts: 1},
		{name: "a GET is retried through 502, 503 and a reset", fault: fakeavinode.Fault{Method: "GET", Path: "/airports", Status: 502},
			tool: "search_airports"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newLiveEnv(t, func(c *avinode.Config) { c.Timeout = time.Second })
			e.fake.Inject(tc.fault)
			if tc.tool == "search_airports" {
				e.fake.Inject(fakeavinode.Fault{Method: "GET", Path: "/airports", Drop: true})
				e.fake.AddAirport("XZZB", "", "Retry Field", "", "US", 1, 1)
				var found struct{ Airports []struct{ ICAO string } }
				mcptest.OK(t, e.c.Call("search_airports", map[string]any{"query": "XZZB"}), &found)
				if len(found.Airports) != 1 || e.fake.Count("GET", "/airports") != 3 {
					t.Errorf("after retries: %+v, %d attempts", found, e.fake.Count("GET", "/airports"))
				}
				return
			}
			b := mcptest.FailCode(t, e.c.Call(tc.tool, tripArgs()), tc.code)
			if b.Data.Retryable != tc.retryable {
				t.Errorf("retryable = %v, want %v (%s)", b.Data.Retryable, tc.retryable, b.Message)
			}
			if !strings.Contains(b.Message, tc.contains) {
				t.Errorf("message %q lacks %q", b.Message, tc.contains)
			}
			// The wait Avinode asked for reaches the agent as a number.
			if want := tc.fault.RetryAfter; want != "" {
				if got := b.Data.RetryAfterSeconds; got == nil || fmt.Sprint(*got) != want {
					t.Errorf("retry_after_seconds = %v, want %s", got, want)
				}
			} else if b.Data.RetryAfterSeconds != nil {
				t.Errorf("retry_after_seconds = %d without a Retry-After", *b.Data.RetryAfterSeconds)
			}
			for _, secret := range []string{apiToken, authToken} {
				if strings.Contains(b.Message, secret) {
					t.Errorf("the message shows a secret: %s", b.Message)
				}
			}
			if got := e.fake.Count(http.MethodPost, "/trips"); got != tc.posts {
				t.Errorf("POST /trips received %d times, want %d", got, tc.posts)
			}
		})
	}
}

// TestLiveBreaker: after repeated failures the breaker opens and the
// server says so without calling Avinode.
func TestLiveBreaker(t *testing.T) {
	e := newLiveEnv(t, func(c *avinode.Config) { c.Retry = retry.Policy{MaxAttempts: 1} })
	e.fake.Inject(fakeavinode.Fault{Method: "GET", Path: "/trips/", Status: 500, Times: 5})
	for range 5 {
		mcptest.FailCode(t, e.c.Call("get_trip", map[string]any{"trip_id": "atrip-1"}), mcperr.Upstream)
	}
	before := e.fake.Count("GET", "/trips/")
	b := mcptest.FailCode(t, e.c.Call("get_trip", map[string]any{"trip_id": "atrip-1"}), mcperr.Upstream)
	if e.fake.Count("GET", "/trips/") != before || !b.Data.Retryable || !strings.Contains(b.Message, "avinode") {
		t.Errorf("with the breaker open: %d more calls, %+v", e.fake.Count("GET", "/trips/")-before, b)
	}
}
