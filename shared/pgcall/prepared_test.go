package pgcall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func prepared(sql string, params ...string) Statement {
	st := stmt(sql, params...)
	st.Prepared = true
	return st
}

// execP runs a Prepared statement and returns its rows as text.
func execP(t testing.TB, p *Pool, o Options, sql string, params ...string) (*rows, *Outcome) {
	t.Helper()
	r := &rows{}
	out, err := p.Exec(context.Background(), o, prepared(sql, params...), r)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r, out
}

// TestPreparedRoundTrips: a Prepared statement costs two round trips the
// first time on a connection (Parse and Describe, then Bind and Execute)
// and one after that read-only, two read-write (COMMIT waits for the
// statement); nothing resets the session in between.
func TestPreparedRoundTrips(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tc := &tripCounter{}
	cfg := Config{URL: e.userURL, MaxConns: 1}
	cfg.dial = tc.dial
	p := e.open(t, cfg)
	exec1(t, p, "SELECT 1") // connect, authenticate, role check

	for _, c := range []struct {
		name         string
		o            Options
		sql          string
		rows         int
		first, later int
	}{
		{"read-only, 100 rows", ro, "SELECT id, name FROM t WHERE id > $1 ORDER BY id LIMIT 100", 100, 2, 1},
		{"read-only, unknown type", ro, "SELECT 'ok'::mood, $1::int", 1, 2, 1},
		{"read-write", rw, "UPDATE t SET name = name WHERE id = $1 RETURNING id", 1, 3, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range 4 {
				before := tc.count()
				r, out := execP(t, p, c.o, c.sql, "1")
				want := c.later
				if i == 0 {
					want = c.first
				}
				if got := tc.count() - before; got != want || len(r.got) != c.rows {
					t.Errorf("call %d: %d round trips, %d rows; want %d, %d", i, got, len(r.got), want, c.rows)
				}
				if c.name == "read-only, unknown type" && strings.Join(out.TypeNames, " ") != "mood int4" {
					t.Errorf("call %d: type names %v", i, out.TypeNames)
				}
			}
		})
	}
	// The statements stayed prepared on the session: the agent's call sees
	// them, and resets the session after it.
	if got := exec1(t, p, "SELECT count(*) FROM pg_prepared_statements WHERE name <> 'pgcall_guard'"); got != "3" {
		t.Errorf("%s statements prepared on the session, want 3", got)
	}
	if got := exec1(t, p, "SELECT count(*) FROM pg_prepared_statements"); got != "0" {
		t.Errorf("after an agent's call, %s statements are still prepared", got)
	}
	// Forgotten with the reset: prepared again, not bound to a name the
	// session no longer has.
	before := tc.count()
	if r, _ := execP(t, p, ro, "SELECT 'ok'::mood, $1::int", "2"); len(r.got) != 1 || r.got[0] != "ok,2" {
		t.Errorf("after the reset: %v", r.got)
	}
	if got := tc.count() - before; got != 2 {
		t.Errorf("after the reset: %d round trips, want 2", got)
	}
}

// TestPreparedKeepsGuarantees: a Prepared call runs in a transaction of its
// mode with its timeouts, as any other call does.
func TestPreparedKeepsGuarantees(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	const settings = "SELECT current_setting('transaction_read_only') || ' ' || current_setting('statement_timeout') || ' ' || " +
		"current_setting('lock_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout') || ' ' || $1::text"
	short := Options{Mode: ReadOnly, Timeout: 200 * time.Millisecond}
	for i, c := range []struct {
		o    Options
		want string
	}{
		{ro, "on 10s 9s 15s x"},
		{ro, "on 10s 9s 15s x"},
		{short, "on 200ms 180ms 5200ms x"},
		{rw, "off 10s 9s 15s x"},
	} {
		if r, _ := execP(t, p, c.o, settings, "x"); r.got[0] != c.want {
			t.Errorf("call %d (%s): %q, want %q", i, c.o.Mode, r.got[0], c.want)
		}
	}
	// Read-only is the database's: a write is refused, on a statement
	// prepared before and after.
	for range 2 {
		_, err := p.Exec(context.Background(), ro, prepared("UPDATE t SET name = 'x' WHERE id = $1", "1"), &rows{})
		if codeOf(err) != mcperr.PermissionDeny {
			t.Errorf("write in a read-only call: %v", err)
		}
	}
	if got := exec1(t, p, "SELECT name FROM t WHERE id = 1"); got != "row1" {
		t.Errorf("the refused write changed the row: %s", got)
	}
	_, err := p.Exec(context.Background(), short, prepared("SELECT pg_sleep($1::float8)", "10"), &rows{})
	if codeOf(err) != mcperr.Timeout {
		t.Errorf("statement timeout: %v", err)
	}
	// A read-write call commits; a failed one changes nothing.
	execP(t, p, rw, "UPDATE t SET name = $2 WHERE id = $1", "2", "two")
	if _, err := p.Exec(context.Background(), rw, prepared("UPDATE t SET name = $2 WHERE id = $1", "2", strings.Repeat("x", 3)+"\x00"), &rows{}); err == nil {
		t.Error("a NUL byte in text was accepted")
	}
	if got := exec1(t, p, "SELECT name FROM t WHERE id = 2"); got != "two" {
		t.Errorf("row 2: %s", got)
	}
	r := &rows{failAt: 1}
	if _, err := p.Exec(context.Background(), rw, prepared("UPDATE t SET name = 'lost' WHERE id = $1 RETURNING id", "3"), r); codeOf(err) != mcperr.Internal {
		t.Errorf("Row's error: %v", err)
	}
	if got := exec1(t, p, "SELECT name FROM t WHERE id = 3"); got != "row3" {
		t.Errorf("a write whose receiver failed was committed: %s", got)
	}
}

// TestPreparedErrors: a statement that does not parse, a wrong number of
// parameters, a receiver that refuses the description: each fails the call
// and leaves the connection usable, with its prepared statements.
func TestPreparedErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	execP(t, p, ro, "SELECT $1::int", "1")
	_, err := p.Exec(context.Background(), ro, prepared("SELECT nope FROM t"), &rows{})
	if me := mcperr.Wrap(err); me.Code != mcperr.Validation || !strings.Contains(me.Message, `"nope"`) {
		t.Errorf("unknown column: %v", err)
	}
	for range 2 { // before and after it is prepared
		_, err = p.Exec(context.Background(), ro, prepared("SELECT $1::int, $2::int", "1"), &rows{})
		if me := mcperr.Wrap(err); me.Code != mcperr.Validation || me.Field != "params" {
			t.Errorf("parameter count: %v", err)
		}
	}
	want := errors.New("refused")
	if _, err = p.Exec(context.Background(), ro, prepared("SELECT $1::int", "1"), &rows{descErr: want}); !errors.Is(err, want) {
		t.Errorf("Describe's error: %v", err)
	}
	if r, _ := execP(t, p, ro, "SELECT $1::int", "7"); r.got[0] != "7" {
		t.Errorf("after the errors: %v", r.got)
	}
	// A statement that fails as it runs, prepared or not yet.
	for i := range 2 {
		_, err := p.Exec(context.Background(), []Options{ro, rw}[i], prepared("SELECT 10 / $1::int", "0"), &rows{})
		if me := mcperr.Wrap(err); me.Code != mcperr.Validation || !strings.Contains(me.Message, "division by zero") {
			t.Errorf("division by zero: %v", err)
		}
	}
	r := &rows{}
	if _, err := p.Exec(context.Background(), ro, stmt("SELECT name FROM pg_prepared_statements WHERE name <> 'pgcall_guard' ORDER BY name"), r); err != nil ||
		strings.Join(r.got, " ") != "pgcall_1 pgcall_3 pgcall_4" {
		t.Errorf("prepared statements %v (%v), want the three that parsed", r.got, err)
	}
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got != pid {
		t.Error("an error closed the connection")
	}
}

// TestPreparedAfterDDL: a table's columns change under a prepared
// statement; the call prepares it again and returns the new columns, in
// both modes.
func TestPreparedAfterDDL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	ctx := context.Background()
	for i, c := range []struct {
		o   Options
		sql string
	}{
		{ro, "SELECT * FROM t WHERE id = $1"},
		{rw, "UPDATE t SET name = name WHERE id = $1 RETURNING *"},
	} {
		r, _ := execP(t, p, c.o, c.sql, "5")
		if len(r.desc.Fields) != 2+i || len(r.got) != 1 {
			t.Fatalf("%s before: %v, %d fields", c.sql, r.got, len(r.desc.Fields))
		}
		col := []string{"extra", "more"}[i]
		if _, err := e.admin.Exec(ctx, "ALTER TABLE t ADD COLUMN "+col+" text DEFAULT 'new'"); err != nil {
			t.Fatal(err)
		}
		r, _ = execP(t, p, c.o, c.sql, "5")
		if len(r.desc.Fields) != 3+i || r.desc.Fields[2+i].Name != col || !strings.HasSuffix(r.got[0], ",new") {
			t.Errorf("%s after ALTER TABLE: %v, fields %d", c.sql, r.got, len(r.desc.Fields))
		}
	}
	// Once is enough: one statement prepared per text, the stale ones closed.
	r := &rows{}
	if _, err := p.Exec(ctx, ro, prepared("SELECT count(*) FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%' AND name <> 'pgcall_guard'"), r); err != nil || r.got[0] != "2" {
		t.Errorf("statements prepared: %v (%v), want 2", r.got, err)
	}
}

// TestPreparedLost: the database's own code deallocates the session's
// prepared statements; the next call finds its statement (or the guard)
// gone, and prepares it again.
func TestPreparedLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.Exec(context.Background(), `CREATE FUNCTION dealloc() RETURNS int LANGUAGE plpgsql AS $$
BEGIN EXECUTE 'DEALLOCATE ALL'; RETURN 1; END $$`); err != nil {
		t.Fatal(err)
	}
	for _, def := range []time.Duration{0, ro.Timeout} { // the guard runs every call, or only on a dirty session
		p := e.open(t, Config{MaxConns: 1, DefaultTimeout: def})
		pid := exec1(t, p, "SELECT pg_backend_pid()")
		for i, o := range []Options{ro, rw, ro} {
			execP(t, p, ro, "SELECT $1::int", "1")
			execP(t, p, o, "SELECT dealloc()")
			if r, _ := execP(t, p, ro, "SELECT $1::int", "2"); r.got[0] != "2" {
				t.Errorf("default %v, call %d: %v", def, i, r.got)
			}
		}
		if got := exec1(t, p, "SELECT pg_backend_pid()"); got != pid {
			t.Errorf("default %v: the connection changed", def)
		}
	}
}

// TestPreparedCap: a connection keeps at most MaxPrepared statements,
// closing the least recently used.
func TestPreparedCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1, MaxPrepared: 3})
	for _, sql := range []string{"SELECT 1", "SELECT 2", "SELECT 3", "SELECT 1", "SELECT 4"} {
		execP(t, p, ro, sql)
	}
	// Its own Parse evicts one more (SELECT 3), closed before it runs.
	r, _ := execP(t, p, ro, "SELECT statement FROM pg_prepared_statements WHERE name <> 'pgcall_guard' ORDER BY name")
	want := "SELECT 1 SELECT 4 SELECT statement FROM pg_prepared_statements WHERE name <> 'pgcall_guard' ORDER BY name"
	if got := strings.Join(r.got, " "); got != want {
		t.Errorf("prepared: %q, want %q", got, want)
	}
}

// TestPreparedDeadConnection: a connection that died while idle costs a
// Prepared call no error, whether its statement was prepared there or not.
func TestPreparedDeadConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	for _, sql := range []string{"SELECT $1::int", "SELECT $1::int + 1"} {
		execP(t, p, ro, "SELECT $1::int", "1")
		var n int
		if err := e.admin.QueryRow(context.Background(),
			"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1", e.role).Scan(&n); err != nil || n != 1 {
			t.Fatalf("terminating the pool's session: %d, %v", n, err)
		}
		time.Sleep(100 * time.Millisecond)
		if r, _ := execP(t, p, ro, sql, "1"); len(r.got) != 1 {
			t.Errorf("%s: %v", sql, r.got)
		}
	}
}

// BenchmarkPreparedVsReset is BenchmarkExec100Rows's read two ways, each
// on a pool of one connection of its own, alternated call by call so that
// the machine's load falls on both: as a Prepared statement (one round
// trip, planned once), and as agent SQL (parsed and planned every call, two
// round trips, the session reset after it). Reports both p50s and their
// ratio.
func BenchmarkPreparedVsReset(b *testing.B) {
	e := newEnv(b)
	pp, pr := e.open(b, Config{MaxConns: 1}), e.open(b, Config{MaxConns: 1})
	const sql = "SELECT id, name FROM t WHERE id > $1 ORDER BY id LIMIT 100"
	ctx := context.Background()
	run := func(p *Pool, st Statement) time.Duration {
		st.MaxRows = 101
		r := &rows{}
		t0 := time.Now()
		if _, err := p.Exec(ctx, ro, st, r); err != nil || len(r.got) != 100 {
			b.Fatal(len(r.got), err)
		}
		return time.Since(t0)
	}
	var prep, reset []time.Duration
	b.ResetTimer()
	for b.Loop() {
		prep = append(prep, run(pp, prepared(sql, "0")))
		reset = append(reset, run(pr, stmt(sql, "0")))
	}
	b.StopTimer()
	slices.Sort(prep)
	slices.Sort(reset)
	p50, r50 := prep[len(prep)/2], reset[len(reset)/2]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(r50.Microseconds()), "reset-p50-µs")
	b.ReportMetric(float64(p50)/float64(r50), "×reset-p50")
}

// TestPreparedSessionDrift: the database's own code (here a function; a
// trigger alike) changes the session in a committed call, and no reset
// follows a Prepared call. The next Prepared call still runs as the login
// role with its own timeouts; a change the server reports (the time zone)
// closes the connection. With the call's timeout the session's default, a
// session no call committed on needs no guard.
func TestPreparedSessionDrift(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	alt := e.role + "_alt"
	if _, err := e.admin.Exec(ctx, fmt.Sprintf(`CREATE ROLE %[1]s; GRANT %[1]s TO %[2]s;
CREATE FUNCTION drift(loud boolean) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('statement_timeout', '123s', false);
  PERFORM set_config('role', '%[1]s', false);
  IF loud THEN PERFORM set_config('TimeZone', 'Asia/Tokyo', false); END IF;
  RETURN 1;
END $$`, alt, e.role)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = e.admin.Exec(context.Background(), "DROP FUNCTION drift(boolean); DROP ROLE "+alt) })
	for _, def := range []time.Duration{0, ro.Timeout} {
		t.Run(fmt.Sprint("default timeout ", def), func(t *testing.T) {
			p := e.open(t, Config{MaxConns: 1, DefaultTimeout: def})
			const guards = "SELECT count(*) FROM pg_prepared_statements WHERE name = 'pgcall_guard'"
			const state = "SELECT current_user || ' ' || current_setting('statement_timeout') || ' ' || current_setting('TimeZone') || ' ' || pg_backend_pid()"
			r, _ := execP(t, p, ro, state)
			before := strings.Fields(r.got[0])
			if before[0] != e.role || before[1] != "10s" {
				t.Fatalf("before: %v", before)
			}
			want := map[time.Duration]string{0: "1", ro.Timeout: "0"}[def]
			if r, _ := execP(t, p, ro, guards); r.got[0] != want {
				t.Errorf("guard statements before any commit: %s, want %s", r.got[0], want)
			}

			execP(t, p, rw, "SELECT drift(false)")
			r, _ = execP(t, p, ro, state)
			if got := strings.Join(strings.Fields(r.got[0]), " "); got != strings.Join(before, " ") {
				t.Errorf("after a quiet change, a Prepared call sees %q, want %q", got, strings.Join(before, " "))
			}
			if r, _ := execP(t, p, ro, guards); r.got[0] != "1" {
				t.Errorf("guard statements after a commit: %s", r.got[0])
			}
			// The change was real: a call that is not Prepared, which sets
			// no role, sees it (and resets the session after it).
			if got := exec1(t, p, "SELECT current_user"); got != alt {
				t.Errorf("the function's role change did not happen (%s): the test proves nothing", got)
			}
			if got := exec1(t, p, "SELECT current_user"); got != e.role {
				t.Errorf("after the reset: %s", got)
			}

			execP(t, p, rw, "SELECT drift(true)")
			r, _ = execP(t, p, ro, state)
			after := strings.Fields(r.got[0])
			if after[0] != e.role || after[1] != "10s" || after[2] != before[2] || after[3] == before[3] {
				t.Errorf("after a reported change: %v, want a new connection as before %v", after, before)
			}
		})
	}
}
