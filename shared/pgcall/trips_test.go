package pgcall

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// tripCounter counts round trips on the connections it dials: a write that
// follows a read (or opens the connection) starts a new trip. Reads alone —
// the background reset's replies — start none.
type tripCounter struct {
	mu    sync.Mutex
	trips int
}

func (tc *tripCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, tc: tc, readLast: true}, nil
}

func (tc *tripCounter) count() int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.trips
}

type countingConn struct {
	net.Conn
	tc       *tripCounter
	readLast bool
}

// resetFlight is how the background reset's write begins: a simple Query
// message holding ROLLBACK or DISCARD ALL. The call does not wait for its
// reply, so it is not a trip on the call's critical path.
func resetFlight(b []byte) bool {
	return len(b) > 5 && b[0] == 'Q' && (bytes.HasPrefix(b[5:], []byte("ROLLBACK\x00")) || bytes.HasPrefix(b[5:], []byte("DISCARD ALL\x00")))
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.tc.mu.Lock()
	if c.readLast && !resetFlight(b) {
		c.tc.trips++
	}
	c.readLast = false
	c.tc.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.tc.mu.Lock()
		c.readLast = true
		c.tc.mu.Unlock()
	}
	return n, err
}

// counted is a pool of one connection, already open and checked, and the
// counter of its round trips.
func (e *env) counted(t *testing.T) (p *Pool, tc *tripCounter) {
	t.Helper()
	tc = &tripCounter{}
	cfg := Config{URL: e.userURL, MaxConns: 1}
	cfg.dial = tc.dial
	p = e.open(t, cfg)
	exec1(t, p, "SELECT 1") // connect, authenticate, role check
	return p, tc
}

// TestRoundTrips counts the network round trips of a call once the
// connection is open: two for a read-only statement (the shape of
// database_query: a parameter, 100 rows, and a type the type map lacks),
// three for a read-write one (the commit waits for the statement), and the
// background reset adds none.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, tc := e.counted(t)

	for _, c := range []struct {
		name  string
		o     Options
		sql   string
		param string
		rows  int
		trips int
	}{
		{"read-only, 100 rows", ro, "SELECT id, name FROM t WHERE id > $1 ORDER BY id LIMIT 100", "0", 100, 2},
		{"read-only, unknown type", ro, "SELECT 'ok'::mood, $1::int", "1", 1, 2},
		{"read-only, MaxRows stop", ro, "SELECT id, name FROM t WHERE id > $1", "0", 10, 2},
		{"read-write", rw, "UPDATE t SET name = name WHERE id = $1 RETURNING id", "1", 1, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range 5 {
				before := tc.count()
				r := &rows{}
				if c.rows != 1 {
					r.formats = []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode}
				}
				st := stmt(c.sql, c.param)
				st.MaxRows = 10
				if c.rows == 100 {
					st.MaxRows = 101
				}
				if _, err := p.Exec(context.Background(), c.o, st, r); err != nil {
					t.Fatal(err)
				}
				if got := tc.count() - before; got != c.trips || len(r.got) != c.rows {
					t.Errorf("call %d: %d round trips, %d rows; want %d, %d", i, got, len(r.got), c.trips, c.rows)
				}
			}
		})
	}
	// A failed parse costs one round trip, its reset none.
	before := tc.count()
	if _, err := p.Exec(context.Background(), ro, stmt("SELEC 1"), &rows{}); err == nil {
		t.Fatal("syntax error accepted")
	}
	if got := tc.count() - before; got != 1 {
		t.Errorf("failed parse: %d round trips", got)
	}
	// Tx: BEGIN, then one per query; the reset runs in the background.
	before = tc.count()
	if err := p.Tx(context.Background(), ro, func(ctx context.Context, c *pgx.Conn) error {
		var n int
		return c.QueryRow(ctx, "SELECT count(*) FROM t WHERE id > $1", 3).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	if got := tc.count() - before; got != 2 {
		t.Errorf("Tx with one query: %d round trips", got)
	}
}

// BenchmarkExec100Rows is one read-only call returning 100 rows, on one
// connection, like devtools' database_query.
func BenchmarkExec100Rows(b *testing.B) {
	e := newEnv(b)
	p := e.open(b, Config{MaxConns: 1})
	st := stmt("SELECT id, name FROM t WHERE id > $1 ORDER BY id LIMIT 100", "0")
	st.MaxRows = 101
	ctx := context.Background()
	for b.Loop() {
		r := &rows{}
		if _, err := p.Exec(ctx, ro, st, r); err != nil || len(r.got) != 100 {
			b.Fatal(len(r.got), err)
		}
	}
}

// BenchmarkConcurrentClients is 8 callers at once, by pool size, on two
// workloads: "rows" is the 100-row call (CPU-bound here, where the database
// shares the machine's cores), "wait" the same call spending 2 ms waiting in
// the database, as a call to a remote or busy database does. ns/op is per
// call; p50/p95 are one call's latency.
func BenchmarkConcurrentClients(b *testing.B) {
	e := newEnv(b)
	for _, w := range []struct{ name, sql string }{
		{"rows", "SELECT id, name FROM t WHERE id > $1 ORDER BY id LIMIT 100"},
		{"wait", "SELECT id, name FROM t, pg_sleep(0.002) WHERE id > $1 ORDER BY id LIMIT 100"},
	} {
		st := stmt(w.sql, "0")
		st.MaxRows = 101
		for _, size := range []int{2, 4, 8} {
			b.Run(fmt.Sprintf("%s/pool=%d", w.name, size), func(b *testing.B) {
				p := e.open(b, Config{MaxConns: size})
				const callers = 8
				var mu sync.Mutex
				var lat []time.Duration
				var wg sync.WaitGroup
				per := (b.N + callers - 1) / callers
				b.ResetTimer()
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range per {
							start := time.Now()
							if _, err := p.Exec(context.Background(), ro, st, &rows{}); err != nil {
								b.Error(err)
								return
							}
							d := time.Since(start)
							mu.Lock()
							lat = append(lat, d)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				slices.Sort(lat)
				if len(lat) > 0 {
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
				}
			})
		}
	}
}
