package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks/webhookstest"
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
	var backend int
	if err := conn.QueryRow(`SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		b.Fatal(err)
	}
	_, _, postmaster, err := procTimes(backend)
	if err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(b.TempDir(), "insert.sql")
	if err := os.WriteFile(script, []byte(pgbenchScript), 0o644); err != nil {
		b.Fatal(err)
	}
	env := append([]string{"AVINODE_WEBHOOK_CLIENT_ID=" + hookUser, "AVINODE_WEBHOOK_CLIENT_SECRET=" + hookSecret,
		"AVINODE_WEBHOOK_SIGNING_SECRET=" + cmpSigning, "MCP_LOG_LEVEL=info"}, db.Env()...)
	// The profile hook (cpuprofile.go) and the collector's setting, when
	// asked for: RECEIVER_GOGC is the receiver's GOGC.
	for _, kv := range os.Environ() {
		if v, ok := strings.CutPrefix(kv, "RECEIVER_"); ok && (strings.HasPrefix(v, "AVINODE_CPU_PROFILE") || strings.HasPrefix(v, "GOGC=")) {
			env = append(env, v)
		}
	}
	// The limiter runs, as in production, at a rate that refuses nothing.
	rcv := startService(b, env, "--role", "receiver", "--rate-limit", "1000000/s")
	meter := cpuMeter{receiver: rcv.cmd.Process.Pid, postmaster: postmaster}
	host := strings.TrimPrefix(rcv.url, "http://")
	sent := map[string]int{} // deliveries per event
	var mu sync.Mutex
	leg := 0
	// post sends n notifications from cmpSenders senders and returns the
	// answers' latencies and the time taken. Each sender keeps one
	// connection and writes its requests and reads the answers itself
	// (HTTP/1.1, keep-alive): a load generator about as lean as pgbench's
	// client, so the machine's CPU goes to the receiver, as it goes to
	// PostgreSQL under pgbench.
	post := func(n int) ([]time.Duration, time.Duration) {
		leg++
		lat := make([]time.Duration, 0, n)
		var next atomic.Int64
		var wg sync.WaitGroup
		began := time.Now()
		for w := range cmpSenders {
			wg.Go(func() {
				snd, err := webhookstest.Dial(host, hookUser, hookSecret, cmpSigning)
				if err != nil {
					b.Error(err)
					return
				}
				defer snd.Close()
				rng := rand.New(rand.NewPCG(uint64(w), uint64(leg)))
				var mine []time.Duration
				last := ""
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					id := "amsg-" + strconv.Itoa(leg) + "-" + strconv.Itoa(i)
					if last != "" && rng.Float64() < cmpDuplicates {
						id = last
					}
					last = id
					start := time.Now()
					err := snd.Post(id)
					mine = append(mine, time.Since(start))
					if err != nil {
						b.Error(err)
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
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		return lat, time.Since(began)
	}
	tpsLine := regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	seq := 0
	// runPgbench runs one leg and returns its transactions/s and the CPU
	// time per transaction of pgbench and of PostgreSQL.
	runPgbench := func() (float64, time.Duration, time.Duration) {
		before := meter.read(b)
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
		used := meter.read(b).sub(before)
		txs := tps * cmpPgbenchTime
		client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return tps, time.Duration(float64(client) / txs), time.Duration(float64(used.postgres) / txs)
	}

	post(400) // warm-up: connections made, code paths hot
	for range b.N {
		var lat []time.Duration
		var took time.Duration
		var tps []float64
		for i := range 5 {
			if i%2 == 0 {
				t, client, pg := runPgbench()
				tps = append(tps, t)
				b.Logf("pgbench: %.0f tps; CPU per transaction: pgbench %s, PostgreSQL %s", t, client, pg)
				continue
			}
			before := meter.read(b)
			l, d := post(cmpEvents)
			used := meter.read(b).sub(before)
			lat = append(lat, l...)
			took += d
			per := func(t time.Duration) time.Duration { return t / time.Duration(len(l)) }
			b.Logf("receiver: %d answers in %s, %.0f/s; CPU per answer: receiver %s, senders %s, PostgreSQL %s", len(l),
				d.Round(time.Millisecond), float64(len(l))/d.Seconds(), per(used.receiver), per(used.senders), per(used.postgres))
		}
		var sum float64
		for _, t := range tps {
			sum += t
		}
		ref := sum / float64(len(tps))
		rate := float64(len(lat)) / took.Seconds()
		slices.Sort(lat)
		pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.Logf("pgbench %.0f tps (legs %.0f); receiver %.0f answers/s = %.2f× pgbench; p50 %.1f ms, p99 %.1f ms; receiver's peak resident set %s",
			ref, tps, rate, rate/ref, pct(0.5), pct(0.99), peakRSS(b, rcv.cmd.Process.Pid))
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

// clockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// procTimes reads a process's CPU time and its waited-for children's from
// /proc/<pid>/stat, and its parent's pid.
func procTimes(pid int) (own, children time.Duration, ppid int, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	// The command name may hold spaces; the fields start after its ')'.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	n := func(i int) int { v, _ := strconv.Atoi(f[i]); return v }
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	return time.Duration(n(11)+n(12)) * clockTick, time.Duration(n(13)+n(14)) * clockTick, n(1), nil
}

// cpuMeter reads the CPU time the parts of a leg have used: the receiver
// process, this process (the senders), and the PostgreSQL cluster — its
// postmaster with every backend, live or gone.
type cpuMeter struct{ receiver, postmaster int }

type cpuTimes struct{ receiver, senders, postgres time.Duration }

func (m cpuMeter) read(b *testing.B) cpuTimes {
	var t cpuTimes
	var err error
	if t.receiver, _, _, err = procTimes(m.receiver); err != nil {
		b.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	t.senders = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	own, gone, _, err := procTimes(m.postmaster)
	if err != nil {
		b.Fatal(err)
	}
	t.postgres = own + gone
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if own, _, ppid, err := procTimes(pid); err == nil && ppid == m.postmaster {
			t.postgres += own
		}
	}
	return t
}

func (t cpuTimes) sub(u cpuTimes) cpuTimes {
	return cpuTimes{t.receiver - u.receiver, t.senders - u.senders, t.postgres - u.postgres}
}

// peakRSS is a process's peak resident set so far (VmHWM), as logged.
func peakRSS(b *testing.B, pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
		}
	}
	b.Fatalf("/proc/%d/status has no VmHWM", pid)
	return ""
}
