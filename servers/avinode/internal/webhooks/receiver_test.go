package webhooks_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
)

const signingSecret = "hmac-signing-secret-51e2"

// TestReceiverRefuses: bad credentials, a bad or missing signature, an
// oversize or malformed body are refused with nothing stored; a good
// delivery is stored.
func TestReceiverRefuses(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		reg := metrics.New("avinode")
		l := newLive(t, st, webhooks.ReceiverConfig{SigningSecret: signingSecret, MaxBody: 1024, Metrics: reg})
		good := l.pointer("asellermsg-1000000001")
		sig := func(b []byte) map[string]string {
			return map[string]string{webhooks.DefaultSignatureHeader: webhooks.Sign(signingSecret, b)}
		}
		big := []byte(`{"id":"asellermsg-1","href":"https://x/y","type":"tripmsgs","pad":"` + strings.Repeat("x", 2000) + `"}`)
		tests := []struct {
			name    string
			body    []byte
			user    string
			pass    string
			headers map[string]string
			status  int
			field   string
		}{
			{"no credentials", good, "", "", sig(good), http.StatusUnauthorized, ""},
			{"wrong secret", good, user, secret + "x", sig(good), http.StatusUnauthorized, ""},
			{"wrong user", good, "someone", secret, sig(good), http.StatusUnauthorized, ""},
			{"secret as user", good, secret, user, sig(good), http.StatusUnauthorized, ""},
			{"no signature", good, user, secret, nil, http.StatusUnauthorized, ""},
			{"signature of another body", good, user, secret, sig([]byte(`{}`)), http.StatusUnauthorized, ""},
			{"signature not hex", good, user, secret, map[string]string{webhooks.DefaultSignatureHeader: "sha256=zz"}, http.StatusUnauthorized, ""},
			{"oversize body", big, user, secret, sig(big), http.StatusRequestEntityTooLarge, ""},
			{"not JSON", []byte(`{"id":`), user, secret, sig([]byte(`{"id":`)), http.StatusBadRequest, ""},
			{"an array", []byte(`[1]`), user, secret, sig([]byte(`[1]`)), http.StatusBadRequest, ""},
			{"empty", []byte(``), user, secret, sig([]byte(``)), http.StatusBadRequest, "id"},
			{"no id", []byte(`{"href":"https://a/b","type":"rfqs"}`), user, secret, sig([]byte(`{"href":"https://a/b","type":"rfqs"}`)), http.StatusBadRequest, "id"},
			{"numeric id", []byte(`{"id":7,"href":"https://a/b","type":"rfqs"}`), user, secret, sig([]byte(`{"id":7,"href":"https://a/b","type":"rfqs"}`)), http.StatusBadRequest, "id"},
			{"id with spaces", []byte(`{"id":"a b","href":"https://a/b","type":"rfqs"}`), user, secret, sig([]byte(`{"id":"a b","href":"https://a/b","type":"rfqs"}`)), http.StatusBadRequest, "id"},
			{"relative href", []byte(`{"id":"arfq-1","href":"/rfqs/arfq-1","type":"rfqs"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"/rfqs/arfq-1","type":"rfqs"}`)), http.StatusBadRequest, "href"},
			{"ftp href", []byte(`{"id":"arfq-1","href":"ftp://a/rfqs/arfq-1","type":"rfqs"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"ftp://a/rfqs/arfq-1","type":"rfqs"}`)), http.StatusBadRequest, "href"},
			{"no type", []byte(`{"id":"arfq-1","href":"https://a/rfqs/arfq-1"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/rfqs/arfq-1"}`)), http.StatusBadRequest, "type"},
			{"bad type", []byte(`{"id":"arfq-1","href":"https://a/b","type":"../x"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"../x"}`)), http.StatusBadRequest, "type"},
			{"tripId not a string", []byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","tripId":5}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","tripId":5}`)), http.StatusBadRequest, "tripId"},
			{"tripId control chars", []byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","tripId":"a\u0007"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","tripId":"a\u0007"}`)), http.StatusBadRequest, "tripId"},
			{"a key twice", []byte(`{"id":"arfq-1","id":"arfq-2","href":"https://a/b","type":"rfqs"}`), user, secret, sig([]byte(`{"id":"arfq-1","id":"arfq-2","href":"https://a/b","type":"rfqs"}`)), http.StatusBadRequest, ""},
			{"not UTF-8", []byte("{\"id\":\"arfq-1\",\"href\":\"https://a/b\",\"type\":\"rfqs\",\"x\":\"\xff\"}"), user, secret, sig([]byte("{\"id\":\"arfq-1\",\"href\":\"https://a/b\",\"type\":\"rfqs\",\"x\":\"\xff\"}")), http.StatusBadRequest, ""},
			{"NUL in id", []byte(`{"id":"arfq-1\u0000","href":"https://a/b","type":"rfqs"}`), user, secret, sig([]byte(`{"id":"arfq-1\u0000","href":"https://a/b","type":"rfqs"}`)), http.StatusBadRequest, "id"},
			{"NUL in href", []byte(`{"id":"arfq-1","href":"https://a/b\u0000","type":"rfqs"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b\u0000","type":"rfqs"}`)), http.StatusBadRequest, "href"},
			{"NUL in tripId", []byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","tripId":"\u0000"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","tripId":"\u0000"}`)), http.StatusBadRequest, "tripId"},
			{"NUL in another field", []byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","note":"a\u0000b"}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","note":"a\u0000b"}`)), http.StatusBadRequest, "note"},
			{"NUL deep down", []byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","meta":{"list":["x","\u0000"]}}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","meta":{"list":["x","\u0000"]}}`)), http.StatusBadRequest, "meta.list[1]"},
			{"NUL in a key", []byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","k\u0000":1}`), user, secret, sig([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs","k\u0000":1}`)), http.StatusBadRequest, `k\u0000`},
			{"a NUL byte", []byte("{\"id\":\"arfq-1\",\"href\":\"https://a/b\",\"type\":\"rfqs\",\"note\":\"\x00\"}"), user, secret, sig([]byte("{\"id\":\"arfq-1\",\"href\":\"https://a/b\",\"type\":\"rfqs\",\"note\":\"\x00\"}")), http.StatusBadRequest, ""},
			{"not JSON content", good, user, secret, map[string]string{"Content-Type": "text/plain", webhooks.DefaultSignatureHeader: webhooks.Sign(signingSecret, good)}, http.StatusUnsupportedMediaType, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, body := post(t, l.receiver.URL, tc.body, tc.user, tc.pass, tc.headers)
				if status != tc.status || body["status"] != "refused" || body["error"] == "" {
					t.Errorf("status %d %v, want %d", status, body, tc.status)
				}
				if tc.field != "" && body["field"] != tc.field {
					t.Errorf("field %v, want %s", body["field"], tc.field)
				}
				if strings.Contains(fmt.Sprint(body), secret) {
					t.Error("the answer shows the secret")
				}
			})
		}
		resp, err := http.Get(l.receiver.URL + webhooks.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("GET: %d %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
		counts, err := st.WebhookEventCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for s, n := range counts {
			if n != 0 {
				t.Errorf("%d %s events stored by refused deliveries", n, s)
			}
		}
		if reg.Events()["avinode_webhook_refused_auth"] != 4 || reg.Events()["avinode_webhook_refused_signature"] != 3 {
			t.Errorf("refusal counters: %v", reg.Events())
		}

		// The good one is stored, its signature verified.
		status, body := post(t, l.receiver.URL, good, user, secret, sig(good))
		if status != http.StatusOK || body["status"] != "stored" {
			t.Fatalf("good delivery: %d %v", status, body)
		}
		ev, err := st.WebhookEvent(context.Background(), body["event_id"].(string))
		if err != nil || !ev.SignatureVerified || ev.Payload != string(good) || ev.SourceIP != "127.0.0.1" || ev.Source != store.SourceAvinode {
			t.Errorf("stored = %+v, %v", ev, err)
		}
	})
}

// TestReceiverRateLimitAndSources: a source over its rate is told to come
// back later; only allowed networks may deliver; X-Forwarded-For counts only
// from a trusted proxy.
func TestReceiverRateLimitAndSources(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{Rate: ratelimit.Rate{PerMinute: 1.0 / 60, Burst: 2}})
		for i := range 3 {
			status, _ := post(t, l.receiver.URL, l.pointer(fmt.Sprintf("asellermsg-%d", i)), user, secret, nil)
			if want := []int{200, 200, 429}[i]; status != want {
				t.Errorf("delivery %d: %d, want %d", i, status, want)
			}
		}
		if evs, _ := st.WebhookEvents(context.Background(), store.EventFilter{}); len(evs) != 2 {
			t.Errorf("%d events stored, want 2", len(evs))
		}

		allow, _ := webhooks.ParsePrefixes([]string{"203.0.113.0/24"})
		trusted, _ := webhooks.ParsePrefixes([]string{"127.0.0.1"})
		proxied := func(trusted []netip.Prefix) *httptest.Server {
			r, err := webhooks.NewReceiver(webhooks.ReceiverConfig{Store: st, ClientID: user, ClientSecret: secret, Allow: allow,
				TrustedProxies: trusted})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(r)
			t.Cleanup(srv.Close)
			return srv
		}
		behind, direct := proxied(trusted), proxied(nil)
		for _, tc := range []struct {
			srv    *httptest.Server
			xff    string
			status int
		}{
			{behind, "203.0.113.9", 200},
			{behind, "198.51.100.1, 203.0.113.10", 200}, // the proxy appended the real peer
			{behind, "203.0.113.11, 198.51.100.1", 403}, // a forged first hop does not help
			{behind, "", 403},                           // the proxy itself is not an allowed source
			{behind, "not-an-address", 400},
			{direct, "203.0.113.9", 403}, // from an untrusted peer the header is ignored
		} {
			id := fmt.Sprintf("asellermsg-%d", time.Now().UnixNano())
			h := map[string]string{}
			if tc.xff != "" {
				h["X-Forwarded-For"] = tc.xff
			}
			if status, body := post(t, tc.srv.URL, l.pointer(id), user, secret, h); status != tc.status {
				t.Errorf("X-Forwarded-For %q: %d %v, want %d", tc.xff, status, body, tc.status)
			}
		}
		evs, _ := st.WebhookEvents(context.Background(), store.EventFilter{Limit: 10})
		sources := map[string]int{}
		for _, e := range evs {
			sources[e.SourceIP]++
		}
		if len(evs) != 4 || sources["203.0.113.9"] != 1 || sources["203.0.113.10"] != 1 || sources["127.0.0.1"] != 2 {
			t.Errorf("sources: %v", sources)
		}
	})
}

// TestSameEventTwentyTimes: one notification delivered twenty times at once
// is stored once and processed once.
func TestSameEventTwentyTimes(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{})
		msg := l.fake.SellerMessage(l.rfqID, "Is the Challenger available?")
		body := l.pointer(msg)
		var wg sync.WaitGroup
		var mu sync.Mutex
		answers := map[string]int{}
		ids := map[string]bool{}
		for range 20 {
			wg.Go(func() {
				status, out := post(t, l.receiver.URL, body, user, secret, nil)
				mu.Lock()
				defer mu.Unlock()
				answers[fmt.Sprintf("%d %v", status, out["status"])]++
				ids[fmt.Sprint(out["event_id"])] = true
			})
		}
		wg.Wait()
		if answers["200 stored"] != 1 || answers["200 duplicate"] != 19 || len(ids) != 1 {
			t.Fatalf("answers %v, event ids %v", answers, ids)
		}
		p := newProcessor(t, st, l.backend, nil)
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("processed %d, %v", n, err)
		}
		if n, err := p.RunOnce(context.Background()); n != 0 || err != nil {
			t.Fatalf("processed again: %d, %v", n, err)
		}
		ev := waitEvent(t, st, msg, store.EventCompleted)
		if ev.Deliveries != 20 || ev.EventType != webhooks.TypeMessageReceived || ev.MessageID != msg || ev.TripID != l.tripID ||
			ev.RFQID != l.rfqID || ev.RetryCount != 0 {
			t.Errorf("event = %+v", ev)
		}
		if n := l.fake.Count(http.MethodGet, "/tripmsgs/"+msg); n != 1 {
			t.Errorf("the message was fetched %d times", n)
		}
		m, err := st.Message(context.Background(), msg)
		if err != nil || m.Text != "Is the Challenger available?" {
			t.Errorf("stored message %+v, %v", m, err)
		}
	})
}

func TestReceiverConfig(t *testing.T) {
	st := storetest.SQLite(t, store.Options{})
	for _, cfg := range []webhooks.ReceiverConfig{
		{ClientID: user, ClientSecret: secret},
		{Store: st, ClientSecret: secret},
		{Store: st, ClientID: user, ClientSecret: "short"},
	} {
		if _, err := webhooks.NewReceiver(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	// A store that fails is answered 503, so Avinode delivers again.
	r, err := webhooks.NewReceiver(webhooks.ReceiverConfig{Store: st, ClientID: user, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	req := httptest.NewRequest(http.MethodPost, webhooks.Path, bytes.NewReader([]byte(`{"id":"arfq-1","href":"https://a/b","type":"rfqs"}`)))
	req.SetBasicAuth(user, secret)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("closed store: %d %s", w.Code, w.Body)
	}
}

func TestDefaultRateAndPrefixes(t *testing.T) {
	if s := webhooks.DefaultRate.String(); s != "1200/min,burst=200" {
		t.Errorf("default rate %q", s)
	}
	if r, err := ratelimit.ParseRate(webhooks.DefaultRate.String()); err != nil || r != webhooks.DefaultRate {
		t.Errorf("the default rate does not round-trip: %+v, %v", r, err)
	}
	if _, err := webhooks.ParsePrefixes([]string{"10.0.0.0/8", " 2001:db8::/32", "192.0.2.1", ""}); err != nil {
		t.Error(err)
	}
	if _, err := webhooks.ParsePrefixes([]string{"example.com"}); err == nil {
		t.Error("a host name was taken for a network")
	}
}
