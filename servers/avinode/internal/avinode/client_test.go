package avinode_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

const (
	apiToken     = "app-token-5f1c2d9e"
	authToken    = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtY3AifQ.c2lnbmF0dXJl"
	clientID     = "client-42"
	clientSecret = "s3cret-client-value"
)

var fast = retry.Policy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func newClient(t *testing.T, cfg avinode.Config) *avinode.Client {
	t.Helper()
	if cfg.Retry == (retry.Policy{}) {
		cfg.Retry = fast
	}
	c, err := avinode.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func code(t *testing.T, err error) *mcperr.Error {
	t.Helper()
	e, ok := errors.AsType[*mcperr.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not an mcperr.Error", err, err)
	}
	return e
}

func TestHeaders(t *testing.T) {
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken, Version: "1.2.3",
		ActAsAccount: "jane.broker", APIVersion: "v1.3"})
	if _, err := c.Watches(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()[0]
	h := r.Header
	sent, err := time.Parse(time.RFC3339, h.Get("X-Avinode-SentTimestamp"))
	if err != nil || time.Since(sent) > time.Minute || !strings.HasSuffix(h.Get("X-Avinode-SentTimestamp"), "Z") {
		t.Errorf("SentTimestamp %q: %v", h.Get("X-Avinode-SentTimestamp"), err)
	}
	want := map[string]string{"X-Avinode-ApiToken": apiToken, "X-Avinode-Product": "mcp-fleet/1.2.3", "X-Avinode-ApiVersion": "v1.3",
		"X-Avinode-ActAsAccount": "jane.broker", "Authorization": "Bearer " + authToken, "Cookie": "AVI_JWT=" + authToken,
		"Accept": "application/json"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if !strings.HasPrefix(h.Get("User-Agent"), "avinode-mcp/1.2.3") {
		t.Errorf("User-Agent = %q", h.Get("User-Agent"))
	}
}

// TestFakeRefusesBadHeaders: the fake checks what Avinode checks, so the
// client's headers are tested for real.
func TestFakeRefusesBadHeaders(t *testing.T) {
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	good := func() http.Header {
		h := http.Header{}
		h.Set("X-Avinode-ApiToken", apiToken)
		h.Set("X-Avinode-SentTimestamp", time.Now().UTC().Format(time.RFC3339))
		h.Set("X-Avinode-Product", "test/1")
		h.Set("X-Avinode-ApiVersion", "v1.0")
		h.Set("Authorization", "Bearer "+authToken)
		h.Set("Cookie", "AVI_JWT="+authToken)
		return h
	}
	tests := []struct {
		name   string
		edit   func(h http.Header)
		status int
	}{
		{"all good", func(http.Header) {}, 200},
		{"no api token", func(h http.Header) { h.Del("X-Avinode-ApiToken") }, 400},
		{"no timestamp", func(h http.Header) { h.Del("X-Avinode-SentTimestamp") }, 400},
		{"no product", func(h http.Header) { h.Del("X-Avinode-Product") }, 400},
		{"no api version", func(h http.Header) { h.Del("X-Avinode-ApiVersion") }, 400},
		{"no authorization", func(h http.Header) { h.Del("Authorization") }, 400},
		{"wrong api token", func(h http.Header) { h.Set("X-Avinode-ApiToken", "other") }, 401},
		{"stale timestamp", func(h http.Header) {
			h.Set("X-Avinode-SentTimestamp", time.Now().Add(-10*time.Minute).UTC().Format(time.RFC3339))
		}, 401},
		{"timestamp not ISO", func(h http.Header) { h.Set("X-Avinode-SentTimestamp", "yesterday") }, 400},
		{"wrong bearer", func(h http.Header) { h.Set("Authorization", "Bearer nope") }, 401},
		{"no cookie", func(h http.Header) { h.Del("Cookie") }, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, fake.BaseURL()+"/emptylegs/watches", nil)
			req.Header = good()
			tc.edit(req.Header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	// A body with a field the documented shape lacks is refused.
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken})
	_, err := c.CreateTrip(context.Background(), avinode.TripInput{Sourcing: true})
	if e := code(t, err); e.Code != mcperr.Validation || !strings.Contains(e.Message, "ERR_INPUT_MISSING") {
		t.Errorf("a trip without segments: %v", err)
	}
}

func TestStaleClock(t *testing.T) {
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken,
		Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	_, err := c.Watches(context.Background())
	e := code(t, err)
	if e.Code != mcperr.Authentication || !strings.Contains(e.Message, "clock") || e.Retryable() {
		t.Errorf("a stale timestamp: %+v", e)
	}
	if strings.Contains(e.Message, authToken) || strings.Contains(e.Message, apiToken) {
		t.Errorf("secret in %q", e.Message)
	}
}

func TestOAuth(t *testing.T) {
	clk := retrytest.NewClock(time.Now())
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, ClientID: clientID, ClientSecret: clientSecret,
		TokenLife: 30 * time.Minute, Now: clk.Now})
	var logs bytes.Buffer
	log := zerolog.New(&logs).Level(zerolog.DebugLevel)
	red := logging.NewRedactor(clientSecret, apiToken)
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, ClientID: clientID, ClientSecret: clientSecret,
		Now: clk.Now, Logger: &log, Redactor: red})
	ctx := context.Background()
	for range 3 {
		if _, err := c.Watches(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.Count(http.MethodPost, "/oauth/token"); n != 1 {
		t.Errorf("token fetched %d times for three calls", n)
	}
	tok := fake.Requests()[0]
	if tok.Header.Get("X-Avinode-ApiToken") != apiToken || !strings.Contains(string(tok.Body), "grant_type=client_credentials") {
		t.Errorf("token request %+v", tok)
	}
	// Near expiry the token is refreshed before use.
	clk.Advance(29*time.Minute + 30*time.Second)
	if _, err := c.Watches(ctx); err != nil {
		t.Fatal(err)
	}
	if n := fake.Count(http.MethodPost, "/oauth/token"); n != 2 {
		t.Errorf("token fetched %d times after expiry", n)
	}
	// A revoked token: the call fails as retryable, and the next one
	// fetches a fresh token.
	fake.RevokeTokens()
	_, err := c.Watches(ctx)
	if e := code(t, err); e.Code != mcperr.Authentication || !e.Retryable() {
		t.Errorf("revoked token: %+v", e)
	}
	if _, err := c.Watches(ctx); err != nil {
		t.Errorf("after the revocation: %v", err)
	}
	for _, secret := range []string{clientSecret, apiToken} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a secret reached the log:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "upstream request") {
		t.Errorf("no debug line per attempt:\n%s", logs.String())
	}

	// Wrong credentials.
	bad := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, ClientID: clientID, ClientSecret: "wrong", Now: clk.Now})
	_, err = bad.Watches(ctx)
	if e := code(t, err); e.Code != mcperr.Authentication || !strings.Contains(e.Message, "AVINODE_CLIENT_SECRET") || strings.Contains(e.Message, "wrong") {
		t.Errorf("refused credentials: %+v", e)
	}
	// The token endpoint failing.
	fake.Inject(fakeavinode.Fault{Method: http.MethodPost, Path: "/oauth/token", Status: 500, Times: 10})
	third := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, ClientID: clientID, ClientSecret: clientSecret, Now: clk.Now})
	_, err = third.Watches(ctx)
	if e := code(t, err); e.Code != mcperr.Upstream {
		t.Errorf("token endpoint down: %+v", e)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  avinode.Config
		want string
	}{
		{"no api token", avinode.Config{AuthToken: "x"}, "API token"},
		{"no auth", avinode.Config{APIToken: "x"}, "authentication token"},
		{"half oauth", avinode.Config{APIToken: "x", ClientID: "id"}, "authentication token"},
		{"plain http", avinode.Config{APIToken: "x", AuthToken: "y", BaseURL: "http://avinode.example.com/api"}, "https"},
		{"not a url", avinode.Config{APIToken: "x", AuthToken: "y", BaseURL: "sandbox"}, "absolute"},
		// A host that merely starts like a loopback address is not one.
		{"http to 127.example.com", avinode.Config{APIToken: "x", AuthToken: "y", BaseURL: "http://127.example.com/api"}, "https"},
		{"http via userinfo", avinode.Config{APIToken: "x", AuthToken: "y", BaseURL: "http://127.0.0.1@evil.com/api"}, "https"},
	}
	for _, tc := range tests {
		if _, err := avinode.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, ok := range []string{"", avinode.ProductionURL, "http://127.0.0.1:9/api", "http://localhost:9/api", "http://[::1]:9/api"} {
		if _, err := avinode.New(avinode.Config{APIToken: "x", AuthToken: "y", BaseURL: ok}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestHealthy(t *testing.T) {
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken, Retry: retry.Policy{MaxAttempts: 1}})
	if err := c.Healthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	fake.Inject(fakeavinode.Fault{Path: "/emptylegs", Status: 500, Times: 10})
	for range 5 {
		_, _ = c.Watches(context.Background())
	}
	if err := c.Healthy(context.Background()); err == nil {
		t.Error("healthy with the breaker open")
	}
}

// TestBackendSync covers the conversions of the backend that the tools do
// not reach: a trip created in Avinode's web application, an RFQ read
// before its trip, a quote read on its own.
func TestBackendSync(t *testing.T) {
	ctx := context.Background()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken})
	st := storetest.SQLite(t, store.Options{})
	b := avinode.NewBackend(c, st)
	if b.Mode() != market.ModeLive {
		t.Error(b.Mode())
	}
	// A trip made elsewhere (another client of the same account).
	other := avinode.NewBackend(c, mustStore(t))
	trip, err := other.CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS",
		Departure: time.Now().Add(48 * time.Hour), Passengers: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	rfqID, liftID := fake.AddRFQ(trip.ID, fakeavinode.Seller{ID: "s1", Name: "Seller One"}, fakeavinode.Aircraft{Type: "Phenom 300", Category: "Light jet"})
	quoteID := fake.Quote(rfqID, liftID, 9000, "EUR", time.Hour, "")
	// Read by quote id: the RFQ and the trip come along.
	if err := b.SyncQuote(ctx, quoteID); err != nil {
		t.Fatal(err)
	}
	got, err := st.Trip(ctx, trip.ID)
	if err != nil || len(got.Segments) != 1 || got.Segments[0].To != "KBOS" || got.Segments[0].Passengers != 3 {
		t.Fatalf("trip from Avinode: %+v, %v", got, err)
	}
	qs, _ := st.Quotes(ctx, store.QuoteFilter{QuoteID: quoteID}, time.Now())
	if len(qs) != 1 || qs[0].Total != 900000 || qs[0].Base != 900000 || qs[0].Currency != "EUR" || qs[0].OperatorName != "Seller One" ||
		qs[0].AircraftCategory != market.Light {
		t.Errorf("quote = %+v", qs)
	}
	if err := b.SyncRFQ(ctx, rfqID); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncThread(ctx, rfqID); err != nil {
		t.Fatal(err)
	}
	// Avinode's own trips and ids are validated.
	fake.Inject(fakeavinode.Fault{Method: "GET", Path: "/trips/", Code: "ERR_TRIP_NOT_FOUND"})
	if err := b.SyncTrip(ctx, trip.ID); code(t, err).Field != "trip_id" {
		t.Errorf("soft not found: %v", err)
	}
	if _, ok, err := b.LookupAirport(ctx, "NOPE"); ok || err != nil {
		t.Errorf("lookup of an unknown airport: %v %v", ok, err)
	}
	if err := b.SyncWatches(ctx); err != nil {
		t.Fatal(err)
	}
}

func mustStore(t *testing.T) *store.Store {
	t.Helper()
	st := storetest.SQLite(t, store.Options{})
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestCategories(t *testing.T) {
	for name, want := range map[string]string{"Light jet": market.Light, "Very light jet": market.Light, "Turbo prop": market.Light,
		"Midsize jet": market.Midsize, "Super midsize jet": market.Midsize, "Heavy jet": market.Heavy, "Airliner": market.Heavy,
		"Ultra long range": market.UltraLongRange, "Helicopter": ""} {
		if got := market.CategoryFromAvinode(name); got != want {
			t.Errorf("%q → %q, want %q", name, got, want)
		}
	}
	for _, c := range market.Categories {
		if market.CategoryFromAvinode(market.AvinodeCategory(c)) != c {
			t.Errorf("%s does not round-trip", c)
		}
	}
}
