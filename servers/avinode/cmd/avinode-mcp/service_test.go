package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	hookUser   = "avinode-notifications"
	hookSecret = "basic-secret-8c1f0e2b77"
)

// logBuffer keeps a process's stderr and tells when a line appears.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
	ch    chan struct{}
}

func (l *logBuffer) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
	default:
	}
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// serviceProc is a running `avinode-mcp webhooks` process.
type serviceProc struct {
	cmd  *exec.Cmd
	url  string
	logs *logBuffer
	done chan error
}

// startService runs the webhook service with env, listening on a free
// port, and returns once it listens.
func startService(t testing.TB, env []string, args ...string) *serviceProc {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"webhooks", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MCP_DATA_DIR=" + t.TempDir(), "MCP_LOG_LEVEL=debug"}, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serviceProc{cmd: cmd, logs: &logBuffer{ch: make(chan struct{}, 1)}, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.logs.add(line)
			var l struct {
				Listener, Addr, Message string
			}
			// Only a line that can be the notice is decoded: under load the
			// service logs a line a delivery, and decoding each took a fifth
			// of the CPU that BenchmarkReceiverVsPgbench's senders use.
			if strings.Contains(line, `"listening"`) && json.Unmarshal([]byte(line), &l) == nil && l.Listener == "webhooks" && l.Message == "listening" {
				addr <- l.Addr
			}
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case a := <-addr:
		s.url = "http://" + a
	case err := <-s.done:
		t.Fatalf("the service exited (%v):\n%s", err, s.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("the service never listened:\n%s", s.logs)
	}
	return s
}

// stop ends the service with SIGTERM, as compose does.
func (s *serviceProc) stop(t testing.TB) {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil && !strings.Contains(err.Error(), "killed") {
			t.Errorf("the service stopped with %v:\n%s", err, s.logs)
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Errorf("the service did not stop on SIGTERM")
	}
}

// kill ends the service with SIGKILL: no grace, nothing finished.
func (s *serviceProc) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// liveAvinode is the fake Avinode with a trip and an RFQ, and the
// environment of a process on it.
type liveAvinode struct {
	fake              *fakeavinode.Server
	env               []string
	tripID, rfq, lift string
}

func newLiveAvinode(t *testing.T) *liveAvinode {
	t.Helper()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	l := &liveAvinode{fake: fake, env: []string{"AVINODE_API_TOKEN=" + apiToken, "AVINODE_AUTH_TOKEN=" + authToken,
		"AVINODE_API_URL=" + fake.BaseURL(), "AVINODE_WEBHOOK_CLIENT_ID=" + hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET=" + hookSecret}}
	return l
}

// seed creates a trip through an MCP process and an RFQ for it at the fake.
func (l *liveAvinode) seed(t *testing.T, c *mcptest.Client) {
	t.Helper()
	var trip struct {
		TripID string `json:"trip_id"`
	}
	mcptest.Structured(t, c.Call("create_trip", map[string]any{"departure_airport": "EGGW", "arrival_airport": "LFMN", "passengers": 2, "departure_date": in(4)}), &trip)
	l.tripID = trip.TripID
	l.rfq, l.lift = l.fake.AddRFQ(trip.TripID, fakeavinode.Seller{ID: "acompany-7", Name: "Thames Executive Air", Country: "GB"},
		fakeavinode.Aircraft{Type: "Phenom 300", Category: "Light jet", Tail: "G-TXEC", MaxPax: 7})
}

func pointerFor(fake *fakeavinode.Server, msgID string) []byte {
	b, _ := json.Marshal(map[string]string{"id": msgID, "href": fake.BaseURL() + "/tripmsgs/" + msgID, "type": "tripmsgs", "tripId": "T00001"})
	return b
}

// deliver posts a notification to the service as Avinode does.
func deliver(t *testing.T, url string, body []byte, user, pass string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/webhooks/avinode", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestWebhookService runs `avinode-mcp webhooks` on the fake Avinode: the
// receiver refuses bad deliveries, stores a good one, the processor stores
// the seller's message; /healthz and /metrics answer.
func TestWebhookService(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		l := newLiveAvinode(t)
		st := db.Open(t, store.Options{})
		c := mcptest.StartStdio(t, binary(t), append(append([]string{}, l.env...), db.Env()...))
		l.seed(t, c)
		svc := startService(t, append(append([]string{"AVINODE_WEBHOOK_METRICS_TOKEN=metrics-token-0123456789"}, l.env...), db.Env()...))
		msg := l.fake.SellerMessage(l.rfq, "We can do it in the Phenom.")
		body := pointerFor(l.fake, msg)
		if code := deliver(t, svc.url, body, hookUser, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("bad credentials: %d", code)
		}
		if code := deliver(t, svc.url, []byte(`{"id":`), hookUser, hookSecret); code != http.StatusBadRequest {
			t.Errorf("malformed: %d", code)
		}
		if code := deliver(t, svc.url, bytes.Repeat([]byte("x"), 70<<10), hookUser, hookSecret); code != http.StatusRequestEntityTooLarge {
			t.Errorf("oversize: %d", code)
		}
		if counts, _ := st.WebhookEventCounts(context.Background()); counts[store.EventPending]+counts[store.EventCompleted] != 0 {
			t.Errorf("refused deliveries stored events: %v", counts)
		}
		if code := deliver(t, svc.url, body, hookUser, hookSecret); code != http.StatusOK {
			t.Fatalf("good delivery: %d", code)
		}
		ev := storetest.WaitEvent(t, st, msg, store.EventCompleted, 20*time.Second)
		if ev.EventType != "message_received" || ev.TripID != l.tripID {
			t.Errorf("event = %+v", ev)
		}
		// The MCP process reads what the service stored.
		var thread struct {
			Messages []struct{ From, Text string } `json:"messages"`
		}
		mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": l.rfq}), &thread)
		if len(thread.Messages) != 1 || thread.Messages[0].Text != "We can do it in the Phenom." {
			t.Errorf("thread = %+v", thread)
		}

		get := func(path, token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, svc.url+path, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if code, body := get("/healthz", ""); code != 200 || !strings.Contains(body, "webhook-processor") || !strings.Contains(body, `"role":"all"`) {
			t.Errorf("/healthz: %d %s", code, body)
		}
		if code, _ := get("/metrics", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("/metrics without the token: %d", code)
		}
		// The processor counts an event after the store has it completed.
		var code int
		var metrics string
		mcptest.WaitFor(t, "the processed counter", func() bool {
			code, metrics = get("/metrics", "metrics-token-0123456789")
			return strings.Contains(metrics, "mcp_avinode_webhook_processed_total")
		})
		for _, want := range []string{"mcp_avinode_webhook_received_total", "mcp_avinode_webhook_processed_total",
			"mcp_avinode_webhook_refused_auth_total", `avinode_webhook_events{status="completed"} 1`, "avinode_webhook_ack_seconds_bucket"} {
			if code != 200 || !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s (%d)", want, code)
			}
		}
		if code, _ := get("/other", ""); code != http.StatusNotFound {
			t.Errorf("/other: %d", code)
		}
		for _, secret := range []string{hookSecret, apiToken, authToken, "metrics-token-0123456789"} {
			if strings.Contains(svc.logs.String(), secret) {
				t.Errorf("a secret reached the service's log")
			}
		}
	})
}

// TestWorkerKilledMidEvent: a worker process killed with SIGKILL while it
// fetches an event loses nothing: after its lease another worker process
// takes the event and completes it.
func TestWorkerKilledMidEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		l := newLiveAvinode(t)
		st := db.Open(t, store.Options{})
		l.seed(t, mcptest.StartStdio(t, binary(t), append(append([]string{}, l.env...), db.Env()...)))
		msg := l.fake.SellerMessage(l.rfq, "Confirmed for Tuesday.")
		// The first fetch hangs: the worker is mid-event when it dies.
		l.fake.Inject(fakeavinode.Fault{Method: http.MethodGet, Path: "/tripmsgs/" + msg, Delay: time.Hour})
		receiver := startService(t, append(append([]string{}, l.env...), db.Env()...), "--role", "receiver")
		if code := deliver(t, receiver.url, pointerFor(l.fake, msg), hookUser, hookSecret); code != 200 {
			t.Fatalf("delivery: %d", code)
		}
		args := []string{"--role", "processor", "--lease", "4s", "--poll", "20ms", "--workers", "1"}
		first := startService(t, append(append([]string{}, l.env...), db.Env()...), args...)
		deadline := time.Now().Add(20 * time.Second)
		for l.fake.Started(http.MethodGet, "/tripmsgs/"+msg) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the worker never fetched the event:\n%s", first.logs)
			}
			time.Sleep(2 * time.Millisecond)
		}
		first.kill()
		if ev := storetest.WaitEvent(t, st, msg, store.EventProcessing, time.Second); ev.LeaseOwner == "" {
			t.Fatalf("the killed worker's event = %+v", ev)
		}
		startService(t, append(append([]string{}, l.env...), db.Env()...), args...)
		ev := storetest.WaitEvent(t, st, msg, store.EventCompleted, 30*time.Second)
		if ev.RetryCount != 1 || !strings.Contains(ev.Error, "lease expired") || ev.EventType != "message_received" {
			t.Errorf("reclaimed event = %+v", ev)
		}
		if n := l.fake.Started(http.MethodGet, "/tripmsgs/"+msg); n != 2 {
			t.Errorf("fetched %d times, want 2 (the lost attempt and the one that completed)", n)
		}
	})
}

// TestThreeWorkersOnePostgres: three worker processes on one PostgreSQL
// share the events; each is processed exactly once.
func TestThreeWorkersOnePostgres(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t, "postgres")
	st := db.Open(t, store.Options{})
	l := newLiveAvinode(t)
	env := append(append([]string{}, l.env...), db.Env()...)
	l.seed(t, mcptest.StartStdio(t, binary(t), env))
	const n = 300
	var ids []string
	for i := range n {
		ids = append(ids, l.fake.SellerMessage(l.rfq, fmt.Sprintf("message %d", i)))
	}
	receiver := startService(t, env, "--role", "receiver", "--rate-limit", "off")
	var workers []*serviceProc
	for range 3 {
		workers = append(workers, startService(t, env, "--role", "processor", "--poll", "20ms", "--workers", "2"))
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if code := deliver(t, receiver.url, pointerFor(l.fake, ids[i]), hookUser, hookSecret); code != 200 {
					t.Errorf("delivery %d: %d", i, code)
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(90 * time.Second)
	for {
		counts, err := st.WebhookEventCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if counts[store.EventCompleted] == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts after 90 s: %v", counts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fetched := l.fake.PathCounts(http.MethodGet)
	for _, id := range ids {
		if k := fetched["/tripmsgs/"+id]; k != 1 {
			t.Errorf("%s fetched %d times", id, k)
		}
	}
	owners := map[string]int{}
	evs, _ := st.WebhookEvents(context.Background(), store.EventFilter{Limit: 200})
	for _, e := range evs {
		if e.RetryCount != 0 {
			t.Errorf("event %s was retried: %+v", e.ID, e)
		}
	}
	for _, w := range workers {
		// A worker logs a completion after the store has it: stopped, it
		// has written (and the test read) every line it will.
		w.stop(t)
		for _, line := range strings.Split(w.logs.String(), "\n") {
			if strings.Contains(line, `"webhook event processed"`) {
				owners[fmt.Sprint(w.cmd.Process.Pid)]++
			}
		}
	}
	total := 0
	for _, k := range owners {
		total += k
	}
	if total != n {
		t.Errorf("the workers logged %d completions (%v), want %d", total, owners, n)
	}
	t.Logf("completions per worker process: %v", owners)
}

// TestOtherProcessHearsNewQuote: the subscription is registered with
// (fake) Avinode by webhooks-register; a seller quotes; Avinode posts the
// pointer to the webhook service, which stores the quote; an MCP client
// subscribed through a different avinode-mcp process (stdio) hears of it.
func TestOtherProcessHearsNewQuote(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		l := newLiveAvinode(t)
		env := append(append([]string{}, l.env...), db.Env()...)
		c := mcptest.StartStdio(t, binary(t), env)
		l.seed(t, c)
		svc := startService(t, env)
		stdout, stderr, code := run(t, env, "webhooks-register", "--url", svc.url+"/webhooks/avinode")
		if code != 0 || !strings.Contains(stdout, "awebhook-") || strings.Contains(stdout+stderr, hookSecret) {
			t.Fatalf("webhooks-register: %d\n%s\n%s", code, stdout, stderr)
		}

		quotesURI := "avinode://trips/" + l.tripID + "/quotes"
		heard := make(chan string, 10)
		c.Raw().OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == "notifications/resources/updated" {
				uri, _ := n.Params.AdditionalFields["uri"].(string)
				heard <- uri
			}
		})
		subscribeTo(t, c, quotesURI)

		quote := l.fake.Quote(l.rfq, l.lift, 10400, "GBP", 24*time.Hour, "Confirmed.")
		select {
		case uri := <-heard:
			if uri != quotesURI {
				t.Errorf("notified %s", uri)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no notification in the other process; deliveries %+v\nservice log:\n%s", l.fake.Deliveries(), svc.logs)
		}
		var q quotes
		mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": l.tripID}), &q)
		if len(q.Quotes) != 1 || q.Quotes[0].QuoteID != quote {
			t.Errorf("get_quotes = %+v", q)
		}
		var events struct {
			Events []struct {
				EventType string `json:"event_type"`
				Status    string `json:"status"`
				QuoteID   string `json:"quote_id"`
			} `json:"events"`
		}
		// The quote is stored before its event is marked completed.
		deadline := time.Now().Add(20 * time.Second)
		for {
			mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"trip_id": l.tripID}), &events)
			if len(events.Events) > 0 && events.Events[0].Status == "completed" || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(events.Events) != 1 || events.Events[0].Status != "completed" || events.Events[0].EventType != "quote_received" ||
			events.Events[0].QuoteID != quote {
			t.Errorf("list_webhook_events = %+v", events)
		}
		// The fake marks its post delivered once it has read the answer,
		// which the receiver wrote before the event was processed.
		var d []fakeavinode.Delivery
		mcptest.WaitFor(t, "the fake to see its post answered", func() bool {
			d = l.fake.Deliveries()
			return len(d) == 1 && d[0].Delivered
		})
		if len(d) != 1 || !d[0].Delivered || d[0].EventType != "TripRequestSellerResponse" {
			t.Errorf("deliveries = %+v", d)
		}
	})
}

// subscribeTo subscribes c to uri in its protocol era and waits until the
// server has it (its acknowledgement).
func subscribeTo(t *testing.T, c *mcptest.Client, uri string) {
	t.Helper()
	if c.Init.ProtocolVersion < mcp.ProtocolVersion20260728 {
		req := mcp.SubscribeRequest{}
		req.Params.URI = uri
		//lint:ignore SA1019 the 2025-11-25 era subscribes this way
		if err := c.Raw().Subscribe(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return
	}
	acked := make(chan struct{}, 1)
	c.Raw().OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/subscriptions/acknowledged" {
			select {
			case acked <- struct{}{}:
			default:
			}
		}
	})
	stop, err := c.Raw().ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}}, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	select {
	case <-acked:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription was never acknowledged")
	}
}

// TestLoneMockProcess: with no configuration at all, one stdio process runs
// the simulated marketplace, publishes its operators' answers as webhook
// pointers and processes them: a subscriber hears of the first quote
// without calling a tool, and the events are listed as completed.
func TestLoneMockProcess(t *testing.T) {
	t.Parallel()
	c := mcptest.StartStdio(t, binary(t), []string{"MCP_DATA_DIR=" + t.TempDir(), "AVINODE_MOCK_FIRST_RESPONSE=1s",
		"AVINODE_MOCK_RESPONSE_WINDOW=2s", "MCP_LOG_LEVEL=debug"})
	var trip struct {
		TripID    string `json:"trip_id"`
		Resources struct {
			Quotes string `json:"quotes"`
		} `json:"resources"`
	}
	mcptest.Structured(t, c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KMIA", "passengers": 4, "departure_date": in(3)}), &trip)
	heard := make(chan string, 100)
	c.Raw().OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/resources/updated" {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			heard <- uri
		}
	})
	subscribeTo(t, c, trip.Resources.Quotes)
	select {
	case uri := <-heard:
		if uri != trip.Resources.Quotes {
			t.Errorf("notified %s", uri)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no quote was heard of:\n%s", c.Stderr())
	}
	var events struct {
		Events []struct {
			Source string `json:"source"`
			Status string `json:"status"`
		} `json:"events"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"trip_id": trip.TripID, "status": "completed"}), &events)
		if len(events.Events) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(events.Events) == 0 || events.Events[0].Source != "mock" {
		t.Errorf("completed events = %+v", events)
	}
	if !strings.Contains(c.Stderr(), `"webhook_processing":"inline"`) {
		t.Errorf("the start-up log does not say the process processes webhook events itself:\n%s", c.Stderr())
	}
}

// TestWebhookCommandLine: every bad flag or missing setting of the webhook
// commands is refused with exit 2 naming it; secrets never printed.
func TestWebhookCommandLine(t *testing.T) {
	t.Parallel()
	creds := []string{"AVINODE_WEBHOOK_CLIENT_ID=" + hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET=" + hookSecret}
	live := []string{"AVINODE_API_TOKEN=" + apiToken, "AVINODE_AUTH_TOKEN=" + authToken}
	mcptest.CheckCLI(t, binary(t), []string{hookSecret, apiToken, authToken, "hunter2-db-secret"}, []mcptest.CLICase{
		{Name: "webhooks --help", Args: []string{"webhooks", "--help"}, Stdout: []string{"AVINODE_WEBHOOK_ADDR", "AVINODE_WEBHOOK_CLIENT_SECRET",
			"AVINODE_WEBHOOK_SIGNING_SECRET", "--role", "--lease", "--max-retries", "--trusted-proxies", "DATABASE_URL"}},
		{Name: "server --help", Args: []string{"--help"}, Stdout: []string{"DATABASE_URL", "AVINODE_WEBHOOK_PROCESSING", "webhooks-register",
			"webhooks-list", "webhooks-deactivate"}},
		{Name: "no credentials", Args: []string{"webhooks"}, Code: 2, Stderr: []string{"AVINODE_WEBHOOK_CLIENT_ID", "--role processor"}},
		{Name: "short secret", Env: []string{"AVINODE_WEBHOOK_CLIENT_ID=x", "AVINODE_WEBHOOK_CLIENT_SECRET=short"}, Args: []string{"webhooks"},
			Code: 2, Stderr: []string{"at least 16"}},
		{Name: "bad rate", Env: creds, Args: []string{"webhooks", "--rate-limit", "5"}, Code: 2, Stderr: []string{"--rate-limit"}},
		{Name: "bad network", Env: creds, Args: []string{"webhooks", "--allow-sources", "example.com"}, Code: 2, Stderr: []string{"--allow-sources"}},
		{Name: "bad proxy", Env: creds, Args: []string{"webhooks", "--trusted-proxies", "10.0.0.0/33"}, Code: 2, Stderr: []string{"--trusted-proxies"}},
		{Name: "short lease", Env: creds, Args: []string{"webhooks", "--lease", "10ms"}, Code: 2, Stderr: []string{"--lease"}},
		{Name: "bad role", Env: creds, Args: []string{"webhooks", "--role", "both"}, Code: 2, Stderr: []string{"--role"}},
		{Name: "bad workers", Env: creds, Args: []string{"webhooks", "--workers", "-1"}, Code: 2, Stderr: []string{"--workers"}},
		{Name: "bad retries", Env: creds, Args: []string{"webhooks", "--max-retries", "-1"}, Code: 2, Stderr: []string{"--max-retries"}},
		{Name: "tiny body cap", Env: creds, Args: []string{"webhooks", "--max-body", "10"}, Code: 2, Stderr: []string{"--max-body"}},
		{Name: "taken address", Env: creds, Args: []string{"webhooks", "--listen", "256.0.0.1:1"}, Code: 1, Stderr: []string{"listen"}},
		{Name: "both stores", Env: []string{"DATABASE_URL=postgres://u@127.0.0.1:1/x", "AVINODE_DB_PATH=/tmp/x.db"}, Code: 2,
			Stderr: []string{"set one"}},
		{Name: "unreachable PostgreSQL", Env: []string{"DATABASE_URL=postgres://fleet:hunter2-db-secret@127.0.0.1:1/avinode?connect_timeout=2"},
			Code: 1, Stderr: []string{"PostgreSQL"}},
		{Name: "bad processing mode", Env: []string{"AVINODE_WEBHOOK_PROCESSING=both"}, Code: 2, Stderr: []string{"AVINODE_WEBHOOK_PROCESSING"}},
		{Name: "register without url", Env: append(live, creds...), Args: []string{"webhooks-register"}, Code: 2, Stderr: []string{"--url is required"}},
		{Name: "register over http", Env: append(live, creds...), Args: []string{"webhooks-register", "--url", "http://hooks.example.com/webhooks/avinode"},
			Code: 2, Stderr: []string{"https"}},
		{Name: "register over http to a lookalike host", Env: append(live, creds...), Args: []string{"webhooks-register", "--url", "http://127.example.com/webhooks/avinode"},
			Code: 2, Stderr: []string{"https"}},
		{Name: "register a bad url", Env: append(live, creds...), Args: []string{"webhooks-register", "--url", "::"}, Code: 2, Stderr: []string{"absolute"}},
		{Name: "register an unknown event", Env: append(live, creds...), Args: []string{"webhooks-register", "--url", "https://h.example.com/w",
			"--events", "TripChatFromSeler"}, Code: 2, Stderr: []string{"TripChatFromSeller"}},
		{Name: "register without credentials", Env: live, Args: []string{"webhooks-register", "--url", "https://h.example.com/w"}, Code: 2,
			Stderr: []string{"AVINODE_WEBHOOK_CLIENT_SECRET"}},
		{Name: "register a short secret", Env: append(live, "AVINODE_WEBHOOK_CLIENT_ID=x", "AVINODE_WEBHOOK_CLIENT_SECRET=short"),
			Args: []string{"webhooks-register", "--url", "https://h.example.com/w"}, Code: 2, Stderr: []string{"at least 16"}},
		{Name: "register on the simulation", Env: creds, Args: []string{"webhooks-register", "--url", "https://h.example.com/w"}, Code: 2,
			Stderr: []string{"needs Avinode's API"}},
		{Name: "list on the simulation", Args: []string{"webhooks-list"}, Code: 2, Stderr: []string{"needs Avinode's API"}},
		{Name: "deactivate without id", Env: live, Args: []string{"webhooks-deactivate"}, Code: 2, Stderr: []string{"usage"}},
		{Name: "bad mock receiver url", Env: creds, Args: []string{"webhooks", "--mock-webhook-url", "avinode-webhooks:8090"}, Code: 2,
			Stderr: []string{"--mock-webhook-url", "absolute http(s) URL"}},
		{Name: "mock receiver url without credentials", Args: []string{"webhooks", "--role", "processor",
			"--mock-webhook-url", "http://127.0.0.1:1/webhooks/avinode"}, Code: 2, Stderr: []string{"AVINODE_WEBHOOK_CLIENT_SECRET"}},
	})
}
