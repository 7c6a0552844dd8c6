package pgcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// TestPreparedRoundTrips: a Prepared read costs two round trips the first
// time on a connection (Parse and Describe, then Bind and Execute) and one
// after that; nothing resets the session in between. A Prepared write
// costs three every time (COMMIT waits for the statement): the session is
// reset after it, which drops its statements.
func TestPreparedRoundTrips(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, tc := e.counted(t)

	for _, c := range []struct {
		name         string
		o            Options
		sql          string
		rows         int
		first, later int
	}{
		{"read-write", rw, "UPDATE t SET name = name WHERE id = $1 RETURNING id", 1, 3, 3},
		{"read-only, 100 rows", ro, "SELECT id, name FROM t WHERE id > $1 ORDER BY id LIMIT 100", 100, 2, 1},
		{"read-only, unknown type", ro, "SELECT 'ok'::mood, $1::int", 1, 2, 1},
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
	if got := exec1(t, p, "SELECT count(*) FROM pg_prepared_statements WHERE name NOT IN ('pgcall_guard', 'pgcall_unlock')"); got != "2" {
		t.Errorf("%s statements prepared on the session, want the two reads'", got)
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
	// A read that fails as it runs, prepared or not yet.
	for range 2 {
		_, err := p.Exec(context.Background(), ro, prepared("SELECT 10 / $1::int", "0"), &rows{})
		if me := mcperr.Wrap(err); me.Code != mcperr.Validation || !strings.Contains(me.Message, "division by zero") {
			t.Errorf("division by zero: %v", err)
		}
	}
	r := &rows{}
	if _, err := p.Exec(context.Background(), ro, stmt("SELECT name FROM pg_prepared_statements WHERE name NOT IN ('pgcall_guard', 'pgcall_unlock') ORDER BY name"), r); err != nil ||
		strings.Join(r.got, " ") != "pgcall_1 pgcall_3 pgcall_4" {
		t.Errorf("prepared statements %v (%v), want the three that parsed", r.got, err)
	}
	// A write that fails is reset as agent SQL is (its triggers may have
	// done what ROLLBACK leaves), on the same connection.
	execP(t, p, ro, "SELECT $1::int", "1")
	_, err = p.Exec(context.Background(), rw, prepared("SELECT 10 / $1::int", "0"), &rows{})
	if me := mcperr.Wrap(err); me.Code != mcperr.Validation || !strings.Contains(me.Message, "division by zero") {
		t.Errorf("division by zero, read-write: %v", err)
	}
	if r, _ := execP(t, p, ro, "SELECT count(*) FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%' AND name NOT IN ('pgcall_guard', 'pgcall_unlock')"); r.got[0] != "0" {
		t.Errorf("after a failed write, %s statements are still prepared", r.got[0])
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
		// Once is enough: one statement prepared per text, the stale one
		// closed (a write's session is reset after it: none).
		r = &rows{}
		if _, err := p.Exec(ctx, ro, prepared("SELECT count(*) FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%' AND name NOT IN ('pgcall_guard', 'pgcall_unlock')"), r); err != nil || r.got[0] != []string{"1", "0"}[i] {
			t.Errorf("statements prepared after %s: %v (%v)", c.o.Mode, r.got, err)
		}
	}
}

// TestPreparedLost: the database's own code deallocates the session's
// prepared statements (which ROLLBACK does not undo); the next call finds
// its statement, or the guard, gone, and prepares it again. Names it took
// with PREPARE do not keep a statement from being prepared.
func TestPreparedLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.Exec(context.Background(), `CREATE FUNCTION dealloc() RETURNS int LANGUAGE plpgsql AS $$
BEGIN EXECUTE 'DEALLOCATE ALL'; RETURN 1; END $$;
CREATE FUNCTION squat() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..30 LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = 'pgcall_' || i) THEN
      EXECUTE format('PREPARE %I AS SELECT 0', 'pgcall_' || i);
    END IF;
  END LOOP;
  RETURN 1;
END $$`); err != nil {
		t.Fatal(err)
	}
	short := Options{Mode: ReadOnly, Timeout: 5 * time.Second} // the guard runs
	for _, def := range []time.Duration{0, ro.Timeout} {
		p := e.open(t, Config{MaxConns: 1, DefaultTimeout: def})
		pid := exec1(t, p, "SELECT pg_backend_pid()")
		for i, o := range []Options{ro, rw, ro} {
			execP(t, p, ro, "SELECT $1::int", "1")
			execP(t, p, short, "SELECT $1::int", "1") // the guard is prepared
			execP(t, p, o, "SELECT dealloc()")
			// A new statement, bound behind the guard the session lost.
			sql := fmt.Sprintf("SELECT $1::int + %d", i)
			if r, _ := execP(t, p, short, sql, "2"); r.got[0] != strconv.Itoa(2+i) {
				t.Errorf("default %v, call %d, new statement: %v", def, i, r.got)
			}
			execP(t, p, o, "SELECT dealloc()")
			if r, _ := execP(t, p, ro, "SELECT $1::int", "2"); r.got[0] != "2" {
				t.Errorf("default %v, call %d: %v", def, i, r.got)
			}
		}
		execP(t, p, ro, "SELECT squat()")
		for i := range 3 {
			if r, _ := execP(t, p, ro, fmt.Sprintf("SELECT $1::int * %d", i+2), "3"); r.got[0] != strconv.Itoa(3*(i+2)) {
				t.Errorf("default %v, statement named as one the database prepared: %v", def, r.got)
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
	r, _ := execP(t, p, ro, "SELECT statement FROM pg_prepared_statements WHERE name NOT IN ('pgcall_guard', 'pgcall_unlock') ORDER BY name")
	want := "SELECT 1 SELECT 4 SELECT statement FROM pg_prepared_statements WHERE name NOT IN ('pgcall_guard', 'pgcall_unlock') ORDER BY name"
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

// TestPreparedWriteLeavesNothing: a committed Prepared write whose
// trigger changes the session for good (settings, role, search_path, the
// custom variables row-level security reads, an advisory lock, a temporary
// table, LISTEN) is followed by the full reset: the next call, Prepared or
// not, finds the session as the pool opened it, on the same connection.
func TestPreparedWriteLeavesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	alt := e.role + "_alt"
	if _, err := e.admin.Exec(ctx, fmt.Sprintf(`CREATE ROLE %[1]s; GRANT %[1]s TO %[2]s;
CREATE TABLE w (id int PRIMARY KEY, n int NOT NULL);
INSERT INTO w VALUES (1, 0);
GRANT SELECT, UPDATE ON w TO %[2]s;
CREATE FUNCTION leak() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(777);
  CREATE TEMP TABLE IF NOT EXISTS leftover (x int);
  LISTEN leak;
  PERFORM set_config('statement_timeout', '0', false);
  PERFORM set_config('app.tenant', 'evil', false);
  PERFORM set_config('request.jwt.claims', '{"role":"service_role"}', false);
  PERFORM set_config('search_path', 'nowhere', false);
  PERFORM set_config('role', '%[1]s', false);
  RETURN NEW;
END $$;
CREATE TRIGGER leak BEFORE UPDATE ON w FOR EACH ROW EXECUTE FUNCTION leak();`, alt, e.role)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = e.admin.Exec(context.Background(), "DROP TABLE w; DROP FUNCTION leak(); DROP ROLE "+alt)
	})
	const state = `SELECT concat_ws('|', current_user, current_setting('statement_timeout'), current_setting('search_path'),
  coalesce(nullif(current_setting('app.tenant', true), ''), '-'), coalesce(nullif(current_setting('request.jwt.claims', true), ''), '-'),
  (SELECT count(*) FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND pid = pg_catalog.pg_backend_pid()),
  pg_catalog.to_regclass('pg_temp.leftover') IS NOT NULL, (SELECT count(*) FROM pg_catalog.pg_listening_channels()),
  pg_catalog.pg_backend_pid())`
	const write = "UPDATE w SET n = n + 1 WHERE id = $1 RETURNING current_user, current_setting('app.tenant')"
	for _, def := range []time.Duration{0, ro.Timeout} { // the guard sets the timeouts every call, or never
		t.Run(fmt.Sprint("default timeout ", def), func(t *testing.T) {
			p := e.open(t, Config{MaxConns: 1, DefaultTimeout: def})
			r, _ := execP(t, p, ro, state)
			before := r.got[0]
			if f := strings.Split(before, "|"); f[0] != e.role || f[1] != "10s" || f[3] != "-" || f[5] != "0" || f[6] != "f" || f[7] != "0" {
				t.Fatalf("before: %s", before)
			}
			for _, next := range []string{"Prepared", "agent SQL"} {
				// The trigger's changes are real: the write's own RETURNING
				// sees them.
				if r, _ := execP(t, p, rw, write, "1"); r.got[0] != alt+",evil" {
					t.Fatalf("the trigger changed nothing (%v): the test proves nothing", r.got)
				}
				got := ""
				if next == "Prepared" {
					r, _ := execP(t, p, ro, state)
					got = r.got[0]
				} else {
					got = exec1(t, p, state)
				}
				if got != before {
					t.Errorf("after a write, a %s call finds %q, want %q", next, got, before)
				}
			}
		})
	}
}

// TestPreparedReadUnlocks: a view's function takes a session-level
// advisory lock in a Prepared read, which ROLLBACK does not release; the
// unlock after it does, whether the read succeeded (one round trip) or
// failed, or the database's code deallocated the unlock statement, and the
// connection is kept.
func TestPreparedReadUnlocks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.Exec(context.Background(), fmt.Sprintf(`
CREATE FUNCTION grab(fail boolean) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(777);
  IF fail THEN RAISE EXCEPTION 'failed holding the lock'; END IF;
  RETURN (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid());
END $$;
CREATE VIEW locked AS SELECT id, grab(id = 99) AS held FROM t;
GRANT SELECT ON locked TO %s;
CREATE FUNCTION forget() RETURNS int LANGUAGE plpgsql AS $$
BEGIN EXECUTE 'DEALLOCATE ALL'; PERFORM pg_advisory_lock(778); RETURN 1; END $$;`, e.role)); err != nil {
		t.Fatal(err)
	}
	p := e.open(t, Config{MaxConns: 1})
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	const held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
	// "forget": the database's code deallocates the unlock statement too.
	for i, id := range []string{"1", "1", "99", "99", "1", "forget", "1", "1"} {
		if id == "forget" {
			execP(t, p, ro, "SELECT forget()")
			// Agent SQL, which resets the session only after it: a
			// Prepared call would find its statements lost and recover.
			if got := exec1(t, p, held); got != "0" {
				t.Errorf("after the unlock statement was lost: %s advisory locks held", got)
			}
			continue
		}
		r := &rows{}
		_, err := p.Exec(context.Background(), ro, prepared("SELECT held FROM locked WHERE id = $1", id), r)
		switch {
		case id == "1" && (err != nil || r.got[0] != "1"):
			t.Fatalf("call %d: %v (%v), want the lock held during the call", i, r.got, err)
		case id == "99" && (err == nil || !strings.Contains(err.Error(), "failed holding the lock")):
			t.Fatalf("call %d: %v, want the function's error", i, err)
		}
		if r, _ := execP(t, p, ro, held); r.got[0] != "0" {
			t.Errorf("after call %d (id %s): %s advisory locks held", i, id, r.got[0])
		}
	}
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got != pid {
		t.Error("the connection changed")
	}
}

// TestPreparedCommitDrift: a deferred trigger changes a setting the server
// reports (the time zone) at COMMIT; the connection is closed rather than
// reused, and the next call runs in the time zone the pool opened with.
func TestPreparedCommitDrift(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.Exec(context.Background(), fmt.Sprintf(`
CREATE TABLE d (id int PRIMARY KEY, n int NOT NULL);
INSERT INTO d VALUES (1, 0);
GRANT SELECT, UPDATE ON d TO %s;
CREATE FUNCTION tz() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM set_config('TimeZone', 'Asia/Tokyo', false); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER tz AFTER UPDATE ON d DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tz();`, e.role)); err != nil {
		t.Fatal(err)
	}
	p := e.open(t, Config{MaxConns: 1})
	const state = "SELECT current_setting('TimeZone') || ' ' || pg_backend_pid()"
	r, _ := execP(t, p, ro, state)
	before := strings.Fields(r.got[0])
	// Not yet at the statement's end: the trigger waits for COMMIT.
	if r, _ := execP(t, p, rw, "UPDATE d SET n = n + 1 WHERE id = $1 RETURNING current_setting('TimeZone')", "1"); r.got[0] != before[0] {
		t.Fatalf("the time zone changed before COMMIT: %v", r.got)
	}
	r, _ = execP(t, p, ro, state)
	if after := strings.Fields(r.got[0]); after[0] != before[0] || after[1] == before[1] {
		t.Errorf("after a change at COMMIT: %v, want a new connection in %s", after, before[0])
	}
	if before[0] == "Asia/Tokyo" {
		t.Fatal("the session's time zone is the trigger's: the test proves nothing")
	}
}

// TestPreparedRetryCancelled: the context of a read ends as its cached
// statement turns out stale; the call reports the cancellation and does
// not prepare and run the statement again.
func TestPreparedRetryCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.oneRowTable(t, "SELECT")
	const sql = "SELECT * FROM s WHERE id = $1"
	var (
		mu        sync.Mutex
		cancelOn  func()
		cancelled bool
		again     bool
	)
	p := e.hooked(t, func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if cancelOn != nil && bytes.Contains(b, []byte("cached plan must not change result type")) {
			cancelOn()
			cancelled = true
		}
	}, func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		again = again || (cancelled && bytes.Contains(b, []byte(sql)))
	})
	execP(t, p, ro, sql, "1")
	if _, err := e.admin.Exec(ctx, "ALTER TABLE s ADD COLUMN extra text"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mu.Lock()
	cancelOn = cancel
	mu.Unlock()
	_, err := p.Exec(cctx, ro, prepared(sql, "1"), &rows{})
	mu.Lock()
	defer mu.Unlock()
	if !cancelled {
		t.Fatal("the statement did not turn out stale: the test proves nothing")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during the retry: %v", err)
	}
	if again {
		t.Error("the cancelled read prepared its statement again")
	}
}

// TestPreparedWriteUnprepared: a Prepared write is never bound to a
// statement of the connection's cache, not even one a read prepared with
// its text: it runs once, on the table's columns of the moment, in three
// round trips, and the session is reset after it.
func TestPreparedWriteUnprepared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.oneRowTable(t, "SELECT, UPDATE")
	p, tc := e.counted(t)
	const sql = "UPDATE s SET n = n + 1 WHERE id = $1 RETURNING *"
	// Prepared by a read-only call (whose session is not reset), where the
	// write itself is refused.
	if _, err := p.Exec(ctx, ro, prepared(sql, "1"), &rows{}); codeOf(err) != mcperr.PermissionDeny {
		t.Fatalf("write in a read-only call: %v", err)
	}
	if _, err := e.admin.Exec(ctx, "ALTER TABLE s ADD COLUMN extra text DEFAULT 'new'"); err != nil {
		t.Fatal(err)
	}
	before := tc.count()
	r, _ := execP(t, p, rw, sql, "1")
	if got := tc.count() - before; got != 3 {
		t.Errorf("the write took %d round trips, want 3", got)
	}
	if len(r.got) != 1 || r.got[0] != "1,1,new" {
		t.Errorf("the write returned %v, want the new columns", r.got)
	}
	if got := exec1(t, p, "SELECT n FROM s WHERE id = 1"); got != "1" {
		t.Errorf("n = %s, want the one write's 1", got)
	}
	if r, _ := execP(t, p, ro, "SELECT count(*) FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%' AND name NOT IN ('pgcall_guard', 'pgcall_unlock')"); r.got[0] != "0" {
		t.Errorf("after the write, %s statements are still prepared", r.got[0])
	}
}

// hookConn shows a test the bytes its connection reads, and writes when
// write is set.
type hookConn struct {
	net.Conn
	read, write func([]byte)
}

// hooked opens a pool of one connection whose reads and writes pass
// through read and write (write may be nil) as they happen.
func (e *env) hooked(t *testing.T, read, write func([]byte)) *Pool {
	t.Helper()
	cfg := Config{MaxConns: 1}
	cfg.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return &hookConn{Conn: c, read: read, write: write}, err
	}
	return e.open(t, cfg)
}

func (c *hookConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read(b[:n])
	return n, err
}

func (c *hookConn) Write(b []byte) (int, error) {
	if c.write != nil {
		c.write(b)
	}
	return c.Conn.Write(b)
}

// TestPreparedStillLost: a Prepared statement still finds a statement
// lost, or a result type changed, after its one retry, or the database's
// own code raises the same errors: the SQL is the server's, so the error is
// the database's (UPSTREAM, retryable), not the caller's input. The same
// errors of an agent's SQL remain the agent's.
func TestPreparedStillLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.Exec(context.Background(), `CREATE FUNCTION lost() RETURNS int LANGUAGE plpgsql AS $$
BEGIN EXECUTE 'EXECUTE nowhere'; RETURN 1; END $$;
CREATE FUNCTION replan() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE churn (a int);
  EXECUTE 'PREPARE churn_q AS SELECT * FROM churn';
  ALTER TABLE churn ADD COLUMN b int;
  EXECUTE 'EXECUTE churn_q';
  RETURN 1;
END $$`); err != nil {
		t.Fatal(err)
	}
	p, tc := e.counted(t)
	upstream := func(what string, err error, state string) {
		t.Helper()
		me := mcperr.Wrap(err)
		if me.Code != mcperr.Upstream || !me.Retryable() || !strings.Contains(me.Message, "[SQLSTATE "+state+"]") {
			t.Errorf("%s: %v (retryable %v), want a retryable UPSTREAM_ERROR with SQLSTATE %s", what, err, me.Retryable(), state)
		}
	}
	// Prepared on the first call, bound from the cache on the second,
	// which fails, is prepared again and fails again.
	for i, trips := range []int{2, 4} {
		before := tc.count()
		_, err := p.Exec(context.Background(), ro, prepared("SELECT lost()"), &rows{})
		upstream(fmt.Sprintf("call %d", i), err, "26000")
		if got := tc.count() - before; got != trips {
			t.Errorf("call %d: %d round trips, want %d", i, got, trips)
		}
	}
	_, err := p.Exec(context.Background(), rw, prepared("SELECT replan()"), &rows{})
	upstream("result type changed", err, "0A000")
	if !strings.Contains(err.Error(), "cached plan must not change result type") {
		t.Errorf("result type changed: %v", err)
	}
	for _, sql := range []string{"SELECT lost()", "EXECUTE nowhere"} {
		if _, err := p.Exec(context.Background(), ro, stmt(sql), &rows{}); codeOf(err) != mcperr.Validation {
			t.Errorf("agent SQL %q: %v, want VALIDATION_ERROR", sql, err)
		}
	}
	if r, _ := execP(t, p, ro, "SELECT $1::int", "3"); r.got[0] != "3" {
		t.Errorf("after the errors: %v", r.got)
	}
}

// TestPreparedFailedReadMeddled: the database's code in a Prepared read
// deallocates the session's statements, or takes the name of one for a
// statement of its own, then fails. The next call on the connection
// prepares its statement again at once (two round trips, not a failed
// Bind and a retry) and runs its own statement, not the one under its old
// name; statements the session still holds stay prepared.
func TestPreparedFailedReadMeddled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.Exec(context.Background(), `CREATE FUNCTION meddle(victim text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF victim = '' THEN
    EXECUTE 'DEALLOCATE ALL';
  ELSE
    EXECUTE format('DEALLOCATE %I', victim);
    EXECUTE format('PREPARE %I(int) AS SELECT $1 + 1000', victim);
  END IF;
  RAISE EXCEPTION 'failed after changing the session''s statements';
END $$`); err != nil {
		t.Fatal(err)
	}
	p, tc := e.counted(t)
	const own, other = "SELECT $1::int", "SELECT $1::int * 10"
	for _, victim := range []string{"", "named"} {
		execP(t, p, ro, own, "1")
		execP(t, p, ro, other, "1")
		arg := ""
		if victim != "" {
			r, _ := execP(t, p, ro, "SELECT name FROM pg_prepared_statements WHERE statement = $1", own)
			arg = r.got[0]
		}
		_, err := p.Exec(context.Background(), ro, prepared("SELECT meddle($1)", arg), &rows{})
		if err == nil || !strings.Contains(err.Error(), "failed after changing") {
			t.Fatalf("victim %q: %v, want the function's error", arg, err)
		}
		before := tc.count()
		if r, _ := execP(t, p, ro, own, "2"); r.got[0] != "2" {
			t.Errorf("victim %q: the next call returned %v, want 2", arg, r.got)
		}
		if got := tc.count() - before; got != 2 {
			t.Errorf("victim %q: the next call took %d round trips, want 2", arg, got)
		}
		// The other statement is lost with DEALLOCATE ALL, still there
		// otherwise.
		want := 2
		if victim != "" {
			want = 1
		}
		before = tc.count()
		if r, _ := execP(t, p, ro, other, "2"); r.got[0] != "20" {
			t.Errorf("victim %q: the other statement returned %v, want 20", arg, r.got)
		}
		if got := tc.count() - before; got != want {
			t.Errorf("victim %q: the other statement took %d round trips, want %d", arg, got, want)
		}
		exec1(t, p, "SELECT 1") // agent SQL: the session reset, every record forgotten
	}
}

// oneRowTable creates the table s with one row, which the role may use as
// grants says.
func (e *env) oneRowTable(t *testing.T, grants string) {
	t.Helper()
	if _, err := e.admin.Exec(context.Background(), fmt.Sprintf(`CREATE TABLE s (id int PRIMARY KEY, n int NOT NULL);
INSERT INTO s VALUES (1, 0);
GRANT %s ON s TO %s;`, grants, e.role)); err != nil {
		t.Fatal(err)
	}
}

// TestPreparedTypeNamesOnlyFromALookup: a Prepared read whose type-name
// lookup fails (a role that may not read pg_type) still answers, without
// the names, and the statement's record keeps none: once the catalog is
// readable again the next call looks them up.
func TestPreparedTypeNamesOnlyFromALookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	exec1(t, p, "SELECT 1") // connected and checked before the catalog is closed
	const sql = "SELECT 'ok'::mood, $1::int"
	if _, err := e.admin.Exec(context.Background(), "REVOKE SELECT ON pg_catalog.pg_type FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	_, out := execP(t, p, ro, sql, "1")
	if out.TypeNames[0] != "" {
		t.Fatalf("type names %q without the catalog", out.TypeNames)
	}
	if _, err := e.admin.Exec(context.Background(), "GRANT SELECT ON pg_catalog.pg_type TO PUBLIC"); err != nil {
		t.Fatal(err)
	}
	if _, out = execP(t, p, ro, sql, "2"); out.TypeNames[0] != "mood" {
		t.Errorf("type names %q once the catalog is readable, want mood first", out.TypeNames)
	}
}

// TestPreparedNotRunAgainAfterRows: a cached statement that fails with a
// lost statement's error after some rows reached the receiver (the
// database's code raised it mid-result) is not run again into the same
// receiver: the call fails, and no row comes twice.
func TestPreparedNotRunAgainAfterRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.admin.Exec(ctx, fmt.Sprintf(`CREATE TABLE ctl (armed bool NOT NULL);
INSERT INTO ctl VALUES (false);
GRANT SELECT ON ctl TO %s;
CREATE FUNCTION boom(i int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF i = 3 AND (SELECT armed FROM ctl) THEN RAISE EXCEPTION 'gone' USING ERRCODE = '26000'; END IF;
  RETURN i;
END $$;`, e.role)); err != nil {
		t.Fatal(err)
	}
	var disarm sync.Once
	p := e.hooked(t, func(b []byte) {
		if bytes.Contains(b, []byte("C26000")) {
			// As a retry would find it: the condition gone.
			disarm.Do(func() {
				if _, err := e.admin.Exec(context.Background(), "UPDATE ctl SET armed = false"); err != nil {
					t.Error(err)
				}
			})
		}
	}, nil)
	const sql = "SELECT boom(id) FROM t WHERE id <= $1 ORDER BY id"
	if r, _ := execP(t, p, ro, sql, "5"); len(r.got) != 5 {
		t.Fatalf("rows %v, want 5", r.got)
	}
	if _, err := e.admin.Exec(ctx, "UPDATE ctl SET armed = true"); err != nil {
		t.Fatal(err)
	}
	r := &rows{}
	_, err := p.Exec(ctx, ro, prepared(sql, "5"), r)
	if err == nil || codeOf(err) != mcperr.Upstream {
		t.Errorf("a statement that failed after %d rows: %v, want UPSTREAM_ERROR", len(r.got), err)
	}
	if strings.Join(r.got, ",") != "1,2" {
		t.Errorf("rows %v, want 1,2 once", r.got)
	}
}
