package tools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

// newClock is a settable clock shared by the simulation and the tools.
func newClock() *retrytest.Clock {
	return retrytest.NewClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC))
}

// env is a server under test: its client, store and notifier.
type env struct {
	c     *mcptest.Client
	n     *kit.Notifier
	st    *store.Store
	clock *retrytest.Clock
	m     *mock.Market
	deps  tools.Deps
}

func openStore(t *testing.T, path string, n *kit.Notifier) *store.Store {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), path, store.Options{OnChange: notifyChanges(n)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// serve builds a kit server over deps and connects a client as agent.
func serve(t *testing.T, d tools.Deps, n *kit.Notifier, agent string, opts kit.Options, copts ...client.ClientOption) *mcptest.Client {
	t.Helper()
	opts.Templates = tools.Templates(d)
	opts.Notifier = n
	// A subscriptions/listen stream stays open until shutdown, which
	// waits this long for it.
	opts.Grace = 50 * time.Millisecond
	s, err := kit.New(kit.Info{Name: "avinode", Version: "test"}, tools.All(d), opts)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, s, agent, copts...)
}

// processor processes the webhook events the simulation queues, on the
// test's clock.
func processor(t *testing.T, st *store.Store, m *mock.Market, now func() time.Time) *webhooks.Processor {
	t.Helper()
	p, err := webhooks.NewProcessor(webhooks.ProcessorConfig{Store: st, Resolver: m, Now: now, Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// process runs the webhook processor over every event due now.
func (e *env) process(t *testing.T) int {
	t.Helper()
	n, err := processor(t, e.st, e.m, e.clock.Now).RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// newMockEnv serves the simulated marketplace on a fresh store.
func newMockEnv(t *testing.T, opts ...client.ClientOption) *env {
	t.Helper()
	n := kit.NewNotifier()
	clk := newClock()
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), n)
	m := mock.New(st, mock.Config{FirstResponse: 3 * time.Second, ResponseWindow: 2 * time.Minute, Now: clk.Now})
	d := tools.Deps{Store: st, Market: m, Now: clk.Now}
	return &env{c: serve(t, d, n, "", kit.Options{}, opts...), n: n, st: st, clock: clk, m: m, deps: d}
}

// failField asserts an error with code and field.
func failField(t *testing.T, res *mcp.CallToolResult, code mcperr.Code, field string) mcperr.Body {
	t.Helper()
	b := mcptest.FailCode(t, res, code)
	if b.Data.Field != field {
		t.Errorf("error field = %q, want %q (message %q)", b.Data.Field, field, b.Message)
	}
	return b
}

// Decoded results.
type tripResult struct {
	TripID         string            `json:"trip_id"`
	DisplayID      string            `json:"display_id"`
	Status         string            `json:"status"`
	NextAction     string            `json:"next_action"`
	DeepLink       string            `json:"deep_link"`
	DeepLinks      map[string]string `json:"deep_links"`
	Message        string            `json:"message"`
	Marketplace    string            `json:"marketplace"`
	OperatorsAsked int               `json:"operators_asked"`
	Segments       []struct {
		From       string    `json:"departure_airport"`
		To         string    `json:"arrival_airport"`
		Departure  time.Time `json:"departure_date"`
		Passengers int       `json:"passengers"`
		DistanceNM int       `json:"distance_nm"`
		FromName   string    `json:"departure_name"`
	} `json:"segments"`
	Resources struct{ Trip, Quotes string } `json:"resources"`
}

type quoteRow struct {
	QuoteID       string     `json:"quote_id"`
	RFQID         string     `json:"rfq_id"`
	TripID        string     `json:"trip_id"`
	OperatorName  string     `json:"operator_name"`
	AircraftType  string     `json:"aircraft_type"`
	AircraftTail  string     `json:"aircraft_tail"`
	Currency      string     `json:"currency"`
	Base          float64    `json:"base_price"`
	TaxesFees     float64    `json:"taxes_fees"`
	Total         float64    `json:"total_price"`
	ValidUntil    *time.Time `json:"valid_until"`
	Status        string     `json:"status"`
	SellerMessage string     `json:"seller_message"`
	Breakdown     []struct {
		Label  string  `json:"label"`
		Kind   string  `json:"kind"`
		Amount float64 `json:"amount"`
	} `json:"breakdown"`
}

// rfqView is what get_rfq returns.
type rfqView struct {
	RFQID         string     `json:"rfq_id"`
	SellerName    string     `json:"seller_name"`
	Status        string     `json:"status"`
	DeclineReason string     `json:"decline_reason"`
	LatestQuote   *quoteRow  `json:"latest_quote"`
	Quotes        []quoteRow `json:"quotes"`
	Lifts         []struct {
		AircraftType string `json:"aircraft_type"`
	} `json:"lifts"`
}

// watchView is a watch as create_watch returns it, and delete_watch within
// its result.
type watchView struct {
	ID       string `json:"watch_id"`
	Name     string `json:"name"`
	From     string `json:"departure_airport"`
	Category string `json:"aircraft_category"`
	DaysOut  int    `json:"days_out"`
	Active   bool   `json:"active"`
	Existed  bool   `json:"already_existed"`
}

type watchList struct {
	Watches []watchView `json:"watches"`
	Total   int         `json:"total"`
}

type deletedWatch struct {
	Deleted       bool      `json:"deleted"`
	AlreadyAbsent bool      `json:"already_absent"`
	Watch         watchView `json:"watch"`
}

func createWatch(t *testing.T, c *mcptest.Client, args map[string]any) watchView {
	t.Helper()
	var w watchView
	mcptest.OK(t, c.Call("create_watch", args), &w)
	return w
}

func listWatches(t *testing.T, c *mcptest.Client) watchList {
	t.Helper()
	var l watchList
	mcptest.OK(t, c.Call("list_watches", nil), &l)
	return l
}

func deleteWatch(t *testing.T, c *mcptest.Client, id string) deletedWatch {
	t.Helper()
	var d deletedWatch
	mcptest.OK(t, c.Call("delete_watch", map[string]any{"watch_id": id}), &d)
	return d
}

type summary struct {
	OperatorsAsked int      `json:"operators_asked"`
	Responded      int      `json:"responded"`
	Quoted         int      `json:"quoted"`
	Declined       int      `json:"declined"`
	Pending        int      `json:"pending"`
	Cancelled      int      `json:"cancelled"`
	Quotes         int      `json:"quotes"`
	First          *float64 `json:"first_response_time_minutes"`
	Average        *float64 `json:"average_response_time_minutes"`
	Declines       []struct {
		SellerName string `json:"seller_name"`
		Reason     string `json:"reason"`
	} `json:"declines"`
}

type quotesResult struct {
	TripID   string            `json:"trip_id"`
	RFQID    string            `json:"rfq_id"`
	Quotes   []quoteRow        `json:"quotes"`
	Total    int               `json:"total"`
	Status   summary           `json:"quote_status"`
	Cheapest map[string]string `json:"cheapest_quote_by_currency"`
}

type tripView struct {
	TripID       string  `json:"trip_id"`
	Status       string  `json:"status"`
	CancelReason string  `json:"cancel_reason"`
	Notes        string  `json:"notes"`
	Marketplace  string  `json:"marketplace"`
	QuoteStatus  summary `json:"quote_status"`
	RFQs         []struct {
		RFQID         string `json:"rfq_id"`
		SellerName    string `json:"seller_name"`
		Status        string `json:"status"`
		DeclineReason string `json:"decline_reason"`
		Quotes        int    `json:"quotes"`
		Messages      int    `json:"messages"`
	} `json:"rfqs"`
	AlreadyCancelled bool   `json:"already_cancelled"`
	Message          string `json:"message"`
}

type messageRow struct {
	ID     string    `json:"message_id"`
	RFQID  string    `json:"rfq_id"`
	From   string    `json:"from"`
	Sender string    `json:"sender"`
	Text   string    `json:"text"`
	SentAt time.Time `json:"sent_at"`
}

type messagesResult struct {
	RFQID      string       `json:"rfq_id"`
	TripID     string       `json:"trip_id"`
	SellerName string       `json:"seller_name"`
	Messages   []messageRow `json:"messages"`
}

// isDeclineReason reports whether r is one of Avinode's decline reasons.
func isDeclineReason(r string) bool {
	for _, x := range market.DeclineReasons {
		if x == r {
			return true
		}
	}
	return false
}

// subscribe subscribes c to uris — with resources/subscribe before
// protocol 2026-07-28, with a subscriptions/listen stream from it — and
// returns once the server has the subscriptions.
func subscribe(t *testing.T, c *mcptest.Client, n *kit.Notifier, uris ...string) {
	t.Helper()
	if c.Init.ProtocolVersion < mcp.ProtocolVersion20260728 {
		for _, uri := range uris {
			req := mcp.SubscribeRequest{}
			req.Params.URI = uri
			//lint:ignore SA1019 the 2025-11-25 era subscribes this way, and is tested too
			if err := c.Raw().Subscribe(context.Background(), req); err != nil {
				t.Fatalf("subscribe %s: %v", uri, err)
			}
		}
	} else {
		stop, err := c.Raw().ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: uris}, func(err error) {
			t.Errorf("subscriptions/listen: %v", err)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, uri := range uris {
		for !n.Subscribed(uri) {
			if time.Now().After(deadline) {
				t.Fatalf("the server never had the subscription to %s", uri)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func readResource(t *testing.T, c *mcptest.Client, uri string, v any) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.Raw().ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("read %s: %T", uri, res.Contents[0])
	}
	if err := json.Unmarshal([]byte(tc.Text), v); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
}

func futureDate(c *retrytest.Clock, d time.Duration) string {
	return c.Now().Add(d).Format(time.RFC3339)
}

// notifyChanges tells subscribers of a changed trip's resources — the
// change listener of a store with one writer, as the tests run it (the
// server itself uses feed.Feed, which also hears other processes).
func notifyChanges(n *kit.Notifier) func(store.Change) {
	return func(c store.Change) {
		n.Updated(market.TripURI(c.TripID))
		if c.Quotes {
			n.Updated(market.QuotesURI(c.TripID))
		}
	}
}
