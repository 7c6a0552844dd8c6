package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
)

// Load run figures.
const (
	loadEvents  = 10_000
	loadSenders = 32
	// loadDuplicates is the share of events delivered twice at once, as
	// Avinode does when an answer is slow; a further share is delivered
	// again after the run, long after processing.
	loadDuplicates = 0.10
)

// loadWorkers is the processor's --workers, from the environment
// (LOAD_WORKERS) to compare settings; by default the service's own (0:
// automatic).
var loadWorkers = func() string {
	if v := os.Getenv("LOAD_WORKERS"); v != "" {
		return v
	}
	return "0"
}()

// BenchmarkWebhookLoad is the webhook service's load run, on SQLite and on
// PostgreSQL: 10 000 notifications posted by 32 concurrent senders, a tenth
// of them twice at once and some again at the end, to a receiver process
// that is killed (SIGKILL) and restarted half-way, while a separate
// processor process fetches each from the fake Avinode. Senders deliver
// each notification until answered 200, as Avinode does. It fails unless
// every event is stored and processed exactly once (0 lost, 0 processed
// twice), and reports the acknowledged throughput and the p50/p99 latency
// of the answers. The sqlite-one-process run has one process receive and
// process (--role all), restarted with SIGTERM, as a single machine would
// run it. Run it with
//
//	go test ./servers/avinode/cmd/avinode-mcp -run '^$' -bench WebhookLoad -benchtime 1x -timeout 30m
func BenchmarkWebhookLoad(b *testing.B) {
	for _, name := range []string{"sqlite", "sqlite-one-process", "postgres"} {
		b.Run(name, func(b *testing.B) {
			db := storetest.NewDB(b, strings.TrimSuffix(name, "-one-process"))
			for range b.N {
				loadRun(b, db, name == "sqlite-one-process")
			}
		})
	}
}

func loadRun(b *testing.B, db storetest.DB, oneProcess bool) {
	ctx := context.Background()
	fake := fakeavinode.New(b, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c, err := avinode.New(avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken, Version: "load"})
	if err != nil {
		b.Fatal(err)
	}
	scratch, err := store.OpenSQLite(ctx, filepath.Join(b.TempDir(), "scratch.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer scratch.Close()
	// 20 trips × 5 RFQs × 100 seller messages.
	var ids []string
	for tr := range 20 {
		trip, err := avinode.NewBackend(c, scratch).CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS",
			Departure: time.Now().Add(72 * time.Hour), Passengers: 4}}})
		if err != nil {
			b.Fatal(err)
		}
		for r := range 5 {
			rfq, _ := fake.AddRFQ(trip.ID, fakeavinode.Seller{ID: fmt.Sprintf("acompany-%d", r), Name: fmt.Sprintf("Operator %d", r), Country: "US"},
				fakeavinode.Aircraft{Type: "Challenger 350", Category: "Super midsize jet", Tail: fmt.Sprintf("N%d%dAC", tr, r), MaxPax: 9})
			for m := range loadEvents / 100 {
				ids = append(ids, fake.SellerMessage(rfq, fmt.Sprintf("message %d of RFQ %d", m, r)))
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	env := append([]string{"AVINODE_API_TOKEN=" + apiToken, "AVINODE_AUTH_TOKEN=" + authToken, "AVINODE_API_URL=" + fake.BaseURL(),
		"AVINODE_WEBHOOK_CLIENT_ID=" + hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET=" + hookSecret, "MCP_LOG_LEVEL=info"}, db.Env()...)
	receiverArgs := []string{"--role", "receiver", "--listen", addr, "--rate-limit", "off"}
	if oneProcess {
		receiverArgs = []string{"--role", "all", "--listen", addr, "--rate-limit", "off", "--workers", loadWorkers, "--poll", "20ms"}
	}
	receiver := startService(b, env, receiverArgs...)
	if !oneProcess {
		startService(b, env, "--role", "processor", "--workers", loadWorkers, "--poll", "20ms")
	}
	url := "http://" + addr + "/webhooks/avinode"

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: loadSenders * 2}}
	var acked, attempts, failed atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	// send delivers one notification until it is answered 200.
	send := func(body []byte) {
		for {
			attempts.Add(1)
			start := time.Now()
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth(hookUser, hookSecret)
			resp, err := client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					d := time.Since(start)
					mu.Lock()
					latencies = append(latencies, d)
					mu.Unlock()
					return
				}
			}
			failed.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
	}
	restarted := make(chan struct{})
	var restartOnce sync.Once
	work := make(chan string)
	var wg sync.WaitGroup
	duplicates := atomic.Int64{}
	b.ResetTimer()
	began := time.Now()
	for w := range loadSenders {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for id := range work {
				body := pointerFor(fake, id)
				if rng.Float64() < loadDuplicates {
					duplicates.Add(1)
					var twice sync.WaitGroup
					twice.Go(func() { send(body) })
					send(body)
					twice.Wait()
				} else {
					send(body)
				}
				if acked.Add(1) == loadEvents/2 {
					restartOnce.Do(func() {
						go func() {
							if oneProcess {
								receiver.stop(b) // it processes too: let it finish what it holds
							} else {
								receiver.kill()
							}
							receiver = startService(b, env, receiverArgs...)
							close(restarted)
						}()
					})
				}
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	sendTime := time.Since(began)
	<-restarted
	// Redeliveries long after the first ones: answered 200, nothing new.
	for _, id := range ids[:100] {
		duplicates.Add(1)
		send(pointerFor(fake, id))
	}
	b.StopTimer()

	st, err := db.Connect(ctx, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(10 * time.Minute)
	var counts map[string]int
	for {
		if counts, err = st.WebhookEventCounts(ctx); err != nil {
			b.Fatal(err)
		}
		if counts[store.EventCompleted] >= loadEvents || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	processTime := time.Since(began)
	total := 0
	for _, n := range counts {
		total += n
	}
	fetched := fake.PathCounts(http.MethodGet)
	lost, twice := 0, 0
	for _, id := range ids {
		switch k := fetched["/tripmsgs/"+id]; {
		case k == 0:
			lost++
		case k > 1:
			twice++
		}
	}
	// No attempt failed (a failed one would be fetched again).
	retried := 0
	for before := ""; ; {
		evs, err := st.WebhookEvents(ctx, store.EventFilter{Limit: 200, Before: before})
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range evs {
			if e.RetryCount > 0 {
				retried++
				if retried <= 5 {
					b.Logf("event %s (%s) was retried: %s", e.ID, e.AvinodeEventID, e.Error)
				}
			}
		}
		if len(evs) < 200 {
			break
		}
		before = evs[len(evs)-1].ID
	}
	if total != loadEvents || counts[store.EventCompleted] != loadEvents || lost != 0 || twice != 0 || retried != 0 {
		b.Fatalf("stored %d events %v; %d lost, %d processed twice, %d retried", total, counts, lost, twice, retried)
	}
	slices.Sort(latencies)
	pct := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	b.ReportMetric(float64(loadEvents)/sendTime.Seconds(), "acked-events/s")
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ack-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ack-ms")
	b.ReportMetric(float64(loadEvents)/processTime.Seconds(), "processed-events/s")
	b.ReportMetric(0, "lost")
	b.ReportMetric(0, "processed-twice")
	b.Logf("%d events (%d duplicate deliveries, %d attempts refused or cut by the restart) acknowledged in %s; all processed once after %s; "+
		"ack p50 %s, p99 %s", loadEvents, duplicates.Load(), failed.Load(), sendTime.Round(time.Millisecond), processTime.Round(time.Millisecond),
		pct(0.50), pct(0.99))
}
