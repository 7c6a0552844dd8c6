package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

// The receiver comparison's figures.
const (
	cmpSenders = 16
	// cmpEvents is what one receiver leg posts; cmpPgbenchTime how long one
	// pgbench leg runs.
	cmpEvents      = 8000
	cmpPgbenchTime = 4 // seconds
	// cmpDuplicates is the share of posts that deliver again the event the
	// sender posted last, as Avinode does when an answer is slow.
	cmpDuplicates = 0.10
	cmpSigning    = "signing-secret-5d0c8e1f"
)

// pgbenchScript is the reference: the idempotent insert the receiver makes
// for a new notification, one per transaction, into a table of the same
// shape (the events table's columns, defaults, constraints and indexes),
// with values of the same sizes. Each client numbers its events; a tenth
// of its inserts repeat its previous event, and insert nothing.
const pgbenchScript = `\set seq :seq + 1
\set dup random(1, 10)
\set key :client_id * 100000000 + :seq - case when :dup = 1 then 1 else 0 end
INSERT INTO pgbench_webhook_events (id, avinode_event_id, event_type, resource_type, href, avinode_trip_ref, source,
  source_ip, signature_verified, raw_payload, status, received_at, last_received_at, max_retries, next_retry_at, updated_at)
VALUES ('wh-' || substr(md5(:key::text), 1, 20), 'amsg-' || :key, 'message_received', 'tripmsgs',
  'http://127.0.0.1:40000/tripmsgs/amsg-' || :key, 'T00001', 'avinode', '127.0.0.1', 1,
  '{"href":"http://127.0.0.1:40000/tripmsgs/amsg-' || :key || '","id":"amsg-' || :key || '","tripId":"T00001","type":"tripmsgs"}',
  'pending', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 5, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')
ON CONFLICT (avinode_event_id) DO NOTHING;
`

// BenchmarkReceiverVsPgbench compares the webhook receiver on PostgreSQL
// with PostgreSQL's own rate of the insert it makes, on one throwaway
// cluster, alternating so that load from elsewhere on the machine falls on
// both: pgbench (16 clients, cmpPgbenchTime seconds, the insert of
// pgbenchScript), then the receiver process (--role receiver) answering
// cmpEvents notifications from 16 concurrent senders — signed (HTTP Basic
// and the HMAC signature header) and a tenth delivered twice — then pgbench,
// the receiver, pgbench. Every post must be answered 200, and afterwards the
// store must hold each event once with every delivery counted. It reports
// the receiver's answers/s, that rate against pgbench's transactions/s (the
// mean of its legs), and the answers' p50 and p99.
//
// The cluster is pgtest's (fsync and synchronous_commit off), for the
// receiver and pgbench alike: the ratio is the receiver's cost per event
// above the database's own.
func BenchmarkReceiverVsPgbench(b *testing.B) {
	pgbench := pgtest.ProgramPath(b, "pgbench")
	db := storetest.NewDB(b, "postgres")
	st := db.Open(b, store.Options{}) // brings the schema up
	_ = st.Close()
	conn, err := sql.Open("pgx", db.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(`CREATE TABLE pgbench_webhook_events (LIKE avinode_webhook_events INCLUDING ALL)`); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(b.TempDir(), "insert.sql")
	if err := os.WriteFile(script, []byte(pgbenchScript), 0o644); err != nil {
		b.Fatal(err)
	}
	env := append([]string{"AVINODE_WEBHOOK_CLIENT_ID=" + hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET=" + hookSecret,
		"AVINODE_WEBHOOK_SIGNING_SECRET=" + cmpSigning, "MCP_LOG_LEVEL=info"}, db.Env()...)
	for _, kv := range os.Environ() { // the profile hook (cpuprofile.go), when asked for
		if v, ok := strings.CutPrefix(kv, "RECEIVER_AVINODE_CPU_PROFILE"); ok {
			env = append(env, "AVINODE_CPU_PROFILE"+v)
		}
	}
	// The limiter runs, as in production, at a rate that refuses nothing.
	rcv := startService(b, env, "--role", "receiver", "--rate-limit", "1000000/s")
	url := rcv.url + webhooks.Path
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: cmpSenders}}
	sent := map[string]int{} // deliveries per event
	var mu sync.Mutex
	leg := 0
	// post sends n notifications from cmpSenders senders and returns the
	// answers' latencies and the time taken.
	post := func(n int) ([]time.Duration, time.Duration) {
		leg++
		lat := make([]time.Duration, 0, n)
		work := make(chan int)
		var wg sync.WaitGroup
		began := time.Now()
		for w := range cmpSenders {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), uint64(leg)))
				var mine []time.Duration
				last := ""
				for i := range work {
					id := fmt.Sprintf("amsg-%d-%d", leg, i)
					if last != "" && rng.Float64() < cmpDuplicates {
						id = last
					}
					last = id
					body := []byte(`{"id":"` + id + `","href":"http://127.0.0.1:40000/tripmsgs/` + id + `","type":"tripmsgs","tripId":"T00001"}`)
					req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set(webhooks.DefaultSignatureHeader, webhooks.Sign(cmpSigning, body))
					req.SetBasicAuth(hookUser, hookSecret)
					start := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						b.Errorf("posting %s: %v", id, err)
						return
					}
					answer, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					mine = append(mine, time.Since(start))
					if resp.StatusCode != http.StatusOK {
						b.Errorf("posting %s: %d %s", id, resp.StatusCode, answer)
						return
					}
					mu.Lock()
					sent[id]++
					mu.Unlock()
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
		for i := range n {
			work <- i
		}
		close(work)
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		return lat, time.Since(began)
	}
	tpsLine := regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	seq := 0
	runPgbench := func() float64 {
		cmd := exec.Command(pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(cmpSenders), "-j", "2",
			"-T", strconv.Itoa(cmpPgbenchTime), "-f", script, "-D", "seq="+strconv.Itoa(seq), db.URL)
		seq += 10_000_000 // each leg inserts new events
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PG") })
		out, err := cmd.CombinedOutput()
		m := tpsLine.FindSubmatch(out)
		if err != nil || m == nil {
			b.Fatalf("pgbench: %v\n%s", err, out)
		}
		tps, _ := strconv.ParseFloat(string(m[1]), 64)
		return tps
	}

	post(400) // warm-up: connections made, code paths hot
	for range b.N {
		var lat []time.Duration
		var took time.Duration
		var tps []float64
		for i := range 5 {
			if i%2 == 0 {
				tps = append(tps, runPgbench())
				continue
			}
			l, d := post(cmpEvents)
			lat = append(lat, l...)
			took += d
			b.Logf("receiver: %d answers in %s, %.0f/s", len(l), d.Round(time.Millisecond), float64(len(l))/d.Seconds())
		}
		var sum float64
		for _, t := range tps {
			sum += t
		}
		ref := sum / float64(len(tps))
		rate := float64(len(lat)) / took.Seconds()
		slices.Sort(lat)
		pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.Logf("pgbench %.0f tps (legs %.0f); receiver %.0f answers/s = %.2f× pgbench; p50 %.1f ms, p99 %.1f ms",
			ref, tps, rate, rate/ref, pct(0.5), pct(0.99))
		b.ReportMetric(rate/ref, "x_pgbench")
		b.ReportMetric(rate, "answers_per_s")
		b.ReportMetric(ref, "pgbench_tps")
		b.ReportMetric(pct(0.5), "p50_ms")
		b.ReportMetric(pct(0.99), "p99_ms")
	}
	b.StopTimer()

	// Each event stored once, every delivery of it counted.
	rows, err := conn.QueryContext(context.Background(), `SELECT avinode_event_id, deliveries FROM avinode_webhook_events`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	stored := 0
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			b.Fatal(err)
		}
		stored++
		if sent[id] != n {
			b.Fatalf("event %s: %d deliveries stored, %d answered", id, n, sent[id])
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	if stored != len(sent) {
		b.Fatalf("%d events stored, %d answered", stored, len(sent))
	}
}
