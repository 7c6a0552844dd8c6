package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

// mainIn runs the binary's Main in this process with env.
func mainIn(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = kit.MainIO(spec(), args, kit.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }})
	return out.String(), errb.String(), code
}

// TestSubscriptionCommands registers, lists and deactivates a webhook
// subscription with the fake Avinode, as an operator would.
func TestSubscriptionCommands(t *testing.T) {
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	env := map[string]string{"MCP_DATA_DIR": t.TempDir(), "AVINODE_API_TOKEN": apiToken, "AVINODE_AUTH_TOKEN": authToken,
		"AVINODE_API_URL": fake.BaseURL(), "AVINODE_WEBHOOK_CLIENT_ID": hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET": hookSecret}
	stdout, stderr, code := mainIn(t, env, "webhooks-register", "--url", "https://hooks.example.com/webhooks/avinode",
		"--events", "TripRequestSellerResponse,TripChatFromSeller,TripChatMine", "--display-name", "broker desk")
	if code != 0 {
		t.Fatalf("register: %d %s", code, stderr)
	}
	var reg struct {
		Registered struct {
			ID         string   `json:"id"`
			TargetURI  string   `json:"targetURI"`
			Active     bool     `json:"active"`
			EventTypes []string `json:"eventTypes"`
		} `json:"registered"`
	}
	if err := json.Unmarshal([]byte(stdout), &reg); err != nil || reg.Registered.ID == "" || !reg.Registered.Active ||
		len(reg.Registered.EventTypes) != 3 || strings.Contains(stdout, hookSecret) {
		t.Fatalf("register printed %s (%v)", stdout, err)
	}
	target, active, events, user, secret, ok := fake.Subscription(reg.Registered.ID)
	if !ok || !active || target != "https://hooks.example.com/webhooks/avinode" || len(events) != 3 || user != hookUser || secret != hookSecret {
		t.Errorf("the fake holds %q %v %v %q", target, active, events, user)
	}

	stdout, _, code = mainIn(t, env, "webhooks-list")
	if code != 0 || !strings.Contains(stdout, reg.Registered.ID) || !strings.Contains(stdout, `"total": 1`) || strings.Contains(stdout, hookSecret) {
		t.Errorf("list: %d %s", code, stdout)
	}
	stdout, _, code = mainIn(t, env, "webhooks-deactivate", reg.Registered.ID)
	if code != 0 || !strings.Contains(stdout, `"active": false`) {
		t.Errorf("deactivate: %d %s", code, stdout)
	}
	if _, active, _, _, secret, _ := fake.Subscription(reg.Registered.ID); active || secret != hookSecret {
		t.Errorf("after deactivation: active %v, secret kept %v", active, secret == hookSecret)
	}
	if _, stderr, code := mainIn(t, env, "webhooks-deactivate", "awebhook-1"); code != 1 || !strings.Contains(stderr, "no webhook subscription") {
		t.Errorf("deactivating an unknown subscription: %d %s", code, stderr)
	}
	// Avinode refusing is reported, with its code.
	fake.Inject(fakeavinode.Fault{Path: "/webhooks/settings", Status: http.StatusForbidden, Times: 3})
	for _, args := range [][]string{{"webhooks-list"}, {"webhooks-register", "--url", "https://h.example.com/w"}, {"webhooks-deactivate", "x"}} {
		if _, stderr, code := mainIn(t, env, args...); code != 1 || !strings.Contains(stderr, "AUTHENTICATION") && !strings.Contains(stderr, "refused") {
			t.Errorf("%v with Avinode refusing: %d %s", args, code, stderr)
		}
	}
}

// serviceEnv parses the webhook service's flags from env and builds its
// Env, as Main would.
func serviceEnv(t *testing.T, env map[string]string, args ...string) (*kit.Env, *settings, *webhookSettings, *bytes.Buffer) {
	t.Helper()
	var s settings
	w := &webhookSettings{}
	f := cli.NewFlags("avinode-mcp webhooks")
	s.register(f)
	w.registerService(f)
	if err := f.Parse(args, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	kenv := kit.NewEnv(spec(), func(k string) string { return env[k] }, &logs, "debug", logging.NewRedactor(f.Secrets()...))
	kenv.Stdout = io.Discard
	return kenv, &s, w, &logs
}

// TestServiceInProcess builds the service as `avinode-mcp webhooks` does and
// drives its handler and processor.
func TestServiceInProcess(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	env := map[string]string{"MCP_DATA_DIR": data, "AVINODE_WEBHOOK_CLIENT_ID": hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET": hookSecret,
		"AVINODE_WEBHOOK_METRICS_TOKEN": "metrics-token-0123456789", "AVINODE_MOCK_FIRST_RESPONSE": "0s", "AVINODE_MOCK_RESPONSE_WINDOW": "0s"}
	kenv, s, w, logs := serviceEnv(t, env, "--lease", "2s", "--allow-sources", "127.0.0.0/8", "--trusted-proxies", "10.0.0.1")
	svc, err := newService(ctx, kenv, s, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.st.Close() })
	svc.start(kenv, w)
	if svc.mock == nil || svc.proc == nil {
		t.Fatal("the simulated marketplace service has no processor")
	}
	srv := httptest.NewServer(svc.handler)
	defer srv.Close()

	// A trip on the simulation; its answers published, their notifications
	// posted to this service's own receiver (as Avinode would post them),
	// stored and processed.
	trip, published := answeredTrip(t, svc)
	if n, err := svc.mock.SendNotices(ctx); n != 0 || err == nil {
		t.Fatalf("posted %d before the receiver listened: %v", n, err)
	}
	svc.notices.listening(srv.Listener.Addr())
	if n, err := svc.mock.SendNotices(ctx); n != published || err != nil {
		t.Fatalf("posted %d of %d: %v", n, published, err)
	}
	if n, err := svc.proc.RunOnce(ctx); err != nil || n == 0 {
		t.Fatalf("processed %d, %v", n, err)
	}
	qs, _ := svc.st.Quotes(ctx, store.QuoteFilter{TripID: trip.ID}, store.Now())
	if len(qs) == 0 {
		t.Error("no quote stored")
	}
	evs, err := svc.st.WebhookEvents(ctx, store.EventFilter{TripID: trip.ID, Limit: 100})
	if err != nil || len(evs) == 0 {
		t.Fatalf("events %d, %v", len(evs), err)
	}
	for _, e := range evs {
		if e.Source != store.SourceAvinode || e.SourceIP != "127.0.0.1" {
			t.Errorf("a simulated notification did not come through the receiver: %+v", e)
		}
	}
	// A delivery through the handler is stored (and pokes the processor).
	if code := deliver(t, srv.URL, []byte(`{"id":"arfq-9","href":"https://sandbox.avinode.com/api/rfqs/arfq-9","type":"rfqs"}`), hookUser, hookSecret); code != 200 {
		t.Errorf("delivery: %d", code)
	}
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
	if !strings.Contains(logs.String(), "cut off at three quarters of --lease") {
		t.Errorf("no warning about a lease shorter than the API timeout:\n%s", logs)
	}

	// The receiver alone needs no marketplace; the processor alone no
	// credentials.
	kenv, s, w, _ = serviceEnv(t, map[string]string{"MCP_DATA_DIR": t.TempDir(), "AVINODE_API_TOKEN": "not-mock", "AVINODE_WEBHOOK_CLIENT_ID": hookUser,
		"AVINODE_WEBHOOK_CLIENT_SECRET": hookSecret}, "--role", "receiver")
	rsvc, err := newService(ctx, kenv, s, w)
	if err != nil || rsvc.proc != nil {
		t.Fatalf("receiver role: %+v, %v", rsvc, err)
	}
	rsvc.poke()
	_ = rsvc.st.Close()
	kenv, s, w, _ = serviceEnv(t, map[string]string{"MCP_DATA_DIR": t.TempDir()}, "--role", "processor")
	psvc, err := newService(ctx, kenv, s, w)
	if err != nil || psvc.proc == nil {
		t.Fatalf("processor role: %v", err)
	}
	_ = psvc.st.Close()
	// On Avinode the simulation's receiver URL is not used (one stack
	// configuration serves both marketplaces).
	kenv, s, w, logs = serviceEnv(t, map[string]string{"MCP_DATA_DIR": t.TempDir(), "AVINODE_API_TOKEN": "not-mock",
		"AVINODE_AUTH_TOKEN": "auth-token-0123456789"}, "--role", "processor", "--mock-webhook-url", "http://127.0.0.1:1/webhooks/avinode")
	asvc, err := newService(ctx, kenv, s, w)
	if err != nil || asvc.notices != nil || !strings.Contains(logs.String(), "--mock-webhook-url is not used") {
		t.Fatalf("a processor on Avinode with --mock-webhook-url: %v, notices %v\n%s", err, asvc != nil && asvc.notices != nil, logs)
	}
	_ = asvc.st.Close()
	// The processor on Avinode without authentication is refused.
	kenv, s, w, _ = serviceEnv(t, map[string]string{"MCP_DATA_DIR": t.TempDir(), "AVINODE_API_TOKEN": "not-mock"}, "--role", "processor")
	if _, err := newService(ctx, kenv, s, w); err == nil {
		t.Error("a processor on Avinode without authentication")
	}
}

// answeredTrip creates a trip on the service's simulated marketplace and
// publishes its operators' answers, returning how many were published.
func answeredTrip(t *testing.T, svc *service) (*store.Trip, int) {
	t.Helper()
	ctx := context.Background()
	trip, err := svc.mock.CreateTrip(ctx, tripFor())
	if err != nil {
		t.Fatal(err)
	}
	published, err := svc.mock.Deliver(ctx, "")
	if err != nil || published == 0 {
		t.Fatalf("published %d, %v", published, err)
	}
	return trip, published
}

func tripFor() market.TripRequest {
	return market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS", Departure: store.Now().Add(72 * time.Hour), Passengers: 3}}}
}

// TestPublishWorker: the simulation's clock publishes due answers and wakes
// the processor, which stores them, with nobody reading.
func TestPublishWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.SQLite(t, store.Options{})
	m := mock.New(st, mock.Config{})
	proc, err := webhooks.NewProcessor(webhooks.ProcessorConfig{Store: st, Resolver: m, Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kenv, _, _, _ := serviceEnv(t, map[string]string{})
	trip, err := m.CreateTrip(ctx, tripFor())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- publish(kenv, m, proc).Run(ctx) }()
	go func() { done <- proc.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		qs, err := st.Quotes(ctx, store.QuoteFilter{TripID: trip.ID}, store.Now())
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no quote was stored")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	for range 2 {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("worker ended with %v", err)
		}
	}
}

// TestProcessorPostsToReceiver: the compose shape on the simulation — a
// receiver service and a processor service on one store, the processor
// posting the simulated operators' signed notifications to the receiver's
// URL (--mock-webhook-url) and then processing what the receiver stored.
func TestProcessorPostsToReceiver(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	env := map[string]string{"MCP_DATA_DIR": data, "AVINODE_WEBHOOK_CLIENT_ID": hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET": hookSecret,
		"AVINODE_WEBHOOK_SIGNING_SECRET": "signing-secret-0123456789", "AVINODE_MOCK_FIRST_RESPONSE": "0s", "AVINODE_MOCK_RESPONSE_WINDOW": "0s"}
	kenv, s, w, _ := serviceEnv(t, env, "--role", "receiver")
	rsvc, err := newService(ctx, kenv, s, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rsvc.st.Close() })
	srv := httptest.NewServer(rsvc.handler)
	defer srv.Close()

	kenv, s, w, _ = serviceEnv(t, env, "--role", "processor", "--mock-webhook-url", srv.URL+"/webhooks/avinode")
	psvc, err := newService(ctx, kenv, s, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = psvc.st.Close() })
	trip, published := answeredTrip(t, psvc)
	if n, err := psvc.mock.SendNotices(ctx); n != published || err != nil {
		t.Fatalf("posted %d of %d: %v", n, published, err)
	}
	if n, err := psvc.proc.RunOnce(ctx); err != nil || n == 0 {
		t.Fatalf("processed %d, %v", n, err)
	}
	evs, err := psvc.st.WebhookEvents(ctx, store.EventFilter{TripID: trip.ID, Limit: 100})
	if err != nil || len(evs) == 0 {
		t.Fatalf("events %d, %v", len(evs), err)
	}
	for _, e := range evs {
		if !e.SignatureVerified || e.Source != store.SourceAvinode {
			t.Errorf("event %+v: want a signed notification through the receiver", e)
		}
	}
	// The receiver refusing (wrong credentials) keeps the notifications
	// for the next round.
	bad := &noticeSender{clientID: hookUser, clientSecret: "wrong-secret-0123456789", client: http.DefaultClient}
	bad.listening(srv.Listener.Addr())
	if err := bad.send(ctx, []byte(`{"id":"arfq-1","href":"x","type":"rfqs"}`)); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a refused post: %v", err)
	}
}
