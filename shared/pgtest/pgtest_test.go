package pgtest_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// psql runs sql in the database at dbURL and returns the unaligned,
// tuples-only output without the final newline.
func psql(t *testing.T, dbURL, sql string) string {
	t.Helper()
	out, err := psqlErr(t, dbURL, sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func psqlErr(t *testing.T, dbURL, sql string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pgtest.PsqlPath(t), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dbURL, "-c", sql)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &psqlError{sql: sql, err: err, out: string(out)}
	}
	return strings.TrimRight(string(out), "\n"), nil
}

type psqlError struct {
	sql, out string
	err      error
}

func (e *psqlError) Error() string { return "psql " + e.sql + ": " + e.err.Error() + ": " + e.out }

// dbName returns the database name in a URL from pgtest.
func dbName(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("URL %q: %v", dbURL, err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// external reports whether the tests run against PGTEST_URL.
func external() bool { return os.Getenv("PGTEST_URL") != "" }

// exists reports whether the database exists, asking through AdminURL.
func exists(t *testing.T, name string) bool {
	t.Helper()
	n := psql(t, pgtest.AdminURL(t), "SELECT count(*) FROM pg_database WHERE datname = '"+name+"'")
	return n != "0"
}

func TestURL(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	dbURL := pgtest.URL(t)
	t.Logf("URL (first call may include cluster start) took %v: %s", time.Since(begin).Round(time.Millisecond), dbURL)

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := dbName(t, dbURL)
	if !strings.HasPrefix(name, "pgtest_testurl_") {
		t.Errorf("database name %q does not start with pgtest_testurl_", name)
	}
	if !external() {
		if u.Scheme != "postgres" || u.User.String() != "postgres" || u.Hostname() != "127.0.0.1" ||
			u.Port() == "" || u.RawQuery != "sslmode=disable" {
			t.Errorf("URL = %q, want postgres://postgres@127.0.0.1:PORT/%s?sslmode=disable", dbURL, name)
		}
		if got := psql(t, dbURL, "SELECT current_setting('fsync') || current_setting('full_page_writes') || current_setting('synchronous_commit') || current_setting('listen_addresses')"); got != "offoffoff127.0.0.1" {
			t.Errorf("settings = %q, want offoffoff127.0.0.1", got)
		}
	}
	if got := psql(t, dbURL, "SELECT current_database()"); got != name {
		t.Errorf("current_database() = %q, want %q", got, name)
	}
	got := psql(t, dbURL, `
		CREATE TABLE widgets (id int PRIMARY KEY, name text NOT NULL);
		INSERT INTO widgets VALUES (2, 'nut'), (1, 'bolt');
		SELECT id || ':' || name FROM widgets ORDER BY id;`)
	if want := "1:bolt\n2:nut"; got != want {
		t.Errorf("SELECT = %q, want %q", got, want)
	}
}

func TestAdminURL(t *testing.T) {
	t.Parallel()
	admin := pgtest.AdminURL(t)
	want := dbName(t, admin)
	if !external() {
		want = "postgres"
		if u, _ := url.Parse(admin); u.User.String() != "postgres" {
			t.Errorf("AdminURL %q: user is not postgres", admin)
		}
	}
	if got := psql(t, admin, "SELECT current_database()"); got != want {
		t.Errorf("current_database() = %q, want %q", got, want)
	}
	if pgtest.AdminURL(t) != admin {
		t.Error("AdminURL changed between calls")
	}
}

func TestTwoURLsInOneTest(t *testing.T) {
	t.Parallel()
	a, b := pgtest.URL(t), pgtest.URL(t)
	if dbName(t, a) == dbName(t, b) {
		t.Fatalf("two URL calls gave the same database %s", a)
	}
	psql(t, a, "CREATE TABLE only_in_a (x int)")
	if got := psql(t, b, "SELECT to_regclass('only_in_a') IS NULL"); got != "t" {
		t.Errorf("table created in database a is visible in database b")
	}
}

// TestTestsAreIsolated runs parallel subtests that each make the same table
// in their database and must see only their own rows, then checks that the
// databases differed and were dropped.
func TestTestsAreIsolated(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	names := map[string]string{} // subtest -> database
	t.Run("group", func(t *testing.T) {
		for _, sub := range []string{"a", "b", "c"} {
			t.Run(sub, func(t *testing.T) {
				t.Parallel()
				dbURL := pgtest.URL(t)
				mu.Lock()
				names[sub] = dbName(t, dbURL)
				mu.Unlock()
				got := psql(t, dbURL, `
					CREATE TABLE items (who text);
					INSERT INTO items VALUES ('`+sub+`');
					SELECT string_agg(who, ',') FROM items;`)
				if got != sub {
					t.Errorf("items = %q, want only %q", got, sub)
				}
			})
		}
	})
	// The parallel subtests, and their cleanups, are done now.
	if len(names) != 3 || names["a"] == names["b"] || names["b"] == names["c"] || names["a"] == names["c"] {
		t.Fatalf("subtests did not get three different databases: %v", names)
	}
	for sub, name := range names {
		if exists(t, name) {
			t.Errorf("database %s of subtest %s still exists after the subtest", name, sub)
		}
	}
}

// TestDatabaseDroppedAfterTest checks that the database goes away when its
// test ends, even with a session still connected to it.
func TestDatabaseDroppedAfterTest(t *testing.T) {
	t.Parallel()
	var name string
	var session *exec.Cmd
	done := make(chan error, 1) // session.Wait's result
	t.Cleanup(func() {
		if session != nil && session.Process != nil {
			session.Process.Kill() // fails harmlessly if it has exited
			<-done
		}
	})
	t.Run("inner", func(t *testing.T) {
		dbURL := pgtest.URL(t)
		name = dbName(t, dbURL)
		if !exists(t, name) {
			t.Fatalf("database %s does not exist during the test", name)
		}
		// A session the test "forgets" to close.
		session = exec.Command(pgtest.PsqlPath(t), "-X", "-d", dbURL, "-c", "SELECT pg_sleep(60)")
		if err := session.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- session.Wait() }()
		for deadline := time.Now().Add(10 * time.Second); ; {
			n := psql(t, pgtest.AdminURL(t), "SELECT count(*) FROM pg_stat_activity WHERE datname = '"+name+"'")
			if n != "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the psql session did not show up in pg_stat_activity")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	if t.Failed() {
		return
	}
	if exists(t, name) {
		t.Errorf("database %s still exists after its test ended", name)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err == nil {
			t.Error("the open session survived its database being dropped")
		}
	case <-time.After(10 * time.Second):
		t.Error("the open session is still running 10s after its database was dropped")
	}
}

// TestRole: the role logs in without superuser rights, sees what it is
// granted, and is gone (with what it owns) when the test ends.
func TestRole(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("inner", func(t *testing.T) {
		dbURL := pgtest.URL(t)
		var roleURL string
		name, roleURL = pgtest.Role(t, dbURL)
		if !strings.HasPrefix(name, "r_") || !strings.Contains(roleURL, name+"@") {
			t.Fatalf("role %q, URL %q", name, roleURL)
		}
		psql(t, dbURL, "CREATE TABLE t (x int); GRANT SELECT ON t TO "+name+"; GRANT CREATE ON SCHEMA public TO "+name)
		if got := psql(t, roleURL, "SELECT current_user || ' ' || (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"); got != name+" false" {
			t.Errorf("connected as %q", got)
		}
		psql(t, roleURL, "SELECT count(*) FROM t; CREATE TABLE mine (y int)")
		if _, err := psqlErr(t, roleURL, "INSERT INTO t VALUES (1)"); err == nil {
			t.Error("the role may write what it was not granted")
		}
	})
	if n := psql(t, pgtest.AdminURL(t), "SELECT count(*) FROM pg_roles WHERE rolname = '"+name+"'"); n != "0" {
		t.Errorf("role %s still exists after its test", name)
	}
}

func TestProgramPath(t *testing.T) {
	out, err := exec.Command(pgtest.ProgramPath(t, "pgbench"), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PostgreSQL") {
		t.Fatalf("pgbench --version: %v: %s", err, out)
	}
}

// TestConn: the connection is to the database and as the user the URL
// names, and it is closed when the test ends.
func TestConn(t *testing.T) {
	dbURL := pgtest.URL(t)
	role, roleURL := pgtest.Role(t, dbURL)
	var conn *pgx.Conn
	t.Run("open", func(t *testing.T) {
		conn = pgtest.Conn(t, roleURL)
		var db, user string
		if err := conn.QueryRow(context.Background(), "SELECT current_database(), current_user").Scan(&db, &user); err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(dbURL)
		if db != strings.TrimPrefix(u.Path, "/") || user != role {
			t.Errorf("connected to %s as %s, want %s as %s", db, user, u.Path, role)
		}
	})
	if !conn.IsClosed() {
		t.Error("the connection outlived its test")
	}
}
