// Package pgtest gives integration tests a real, throwaway PostgreSQL server.
//
// The first call to [URL] or [AdminURL] in a test binary starts a private
// PostgreSQL cluster (initdb, then pg_ctl start) in a new temporary
// directory. It listens only on 127.0.0.1, on a free port, with trust
// authentication for the superuser "postgres", and with durability switched
// off (fsync, full_page_writes and synchronous_commit off) for speed. All tests
// of the binary share that cluster; [Main] stops it and deletes its directory
// when the tests are done. A test binary that never calls URL or AdminURL
// starts nothing.
//
// Each call to URL creates a fresh, empty database for the calling test and
// drops it when the test ends, so tests are isolated from one another and may
// use t.Parallel. Use it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestStore(t *testing.T) {
//		t.Parallel()
//		db, err := sql.Open("pgx", pgtest.URL(t))
//		...
//	}
//
// # Requirements
//
// There is no skipping: when PostgreSQL is not installed, URL and AdminURL
// fail the test with a message that says what to install (apt-get install
// postgresql-15, or run scripts/ensure-postgres.sh from the repository root).
// initdb and pg_ctl are looked up on PATH first, then in
// /usr/lib/postgresql/<version>/bin, highest version first; psql, which
// pgtest runs to create and drop databases, must be installed as well.
//
// PostgreSQL refuses to run as root. When the tests run as root (as in CI),
// the server runs as the "postgres" system user, which must exist
// (scripts/ensure-postgres.sh creates it); otherwise it runs as the current
// user.
//
// # Using an existing server
//
// Set PGTEST_URL to the admin URL of a server you already run, for example
// postgres://postgres@localhost:5432/postgres?sslmode=disable, and no cluster
// is started: the per-test databases are created and dropped on that server
// (which must be PostgreSQL 13 or newer), and AdminURL returns PGTEST_URL
// itself. The role in the URL needs the CREATEDB privilege, and CREATEROLE
// for tests that use [Role].
//
// # Cleanup
//
// If the test binary dies without reaching the end of Main (a panicking test,
// a -timeout, a signal, or a package that calls URL without using Main), a
// small watchdog shell process started with the cluster notices that the
// binary has gone, shuts the server down and deletes the directory.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// envURL names the environment variable holding an existing server's admin
// URL; when set, no cluster is started.
const envURL = "PGTEST_URL"

// psqlTimeout bounds every psql call, so that a wedged server fails the test
// instead of hanging it until the go test -timeout.
const psqlTimeout = 2 * time.Minute

var (
	startOnce sync.Once
	srv       *server // set by startOnce; nil if setup failed or never ran
	srvErr    error   // why setup failed

	stopOnce sync.Once
	stopErr  error
)

// errStopped is reported to a caller that asks for a server after Main has
// already shut down (say, from a goroutine a test leaked).
var errStopped = errors.New("pgtest: the tests are over; Main has already stopped the cluster")

// server is the PostgreSQL server the tests use: a cluster of our own, or the
// one PGTEST_URL points at.
type server struct {
	admin   *url.URL // the admin database's URL
	psql    string   // path of the psql program
	env     []string // environment for psql; nil means inherit ours
	cluster *cluster // the cluster we started; nil when using PGTEST_URL
}

// Main runs the tests and exits with their status, like the default
// TestMain, after stopping the shared cluster and deleting its directory if
// one was started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	// On a panic in m.Run (on this goroutine) still stop the cluster; the
	// panic then goes on. The watchdog covers panics elsewhere.
	defer func() { _ = shutdown() }()
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: warning: cleaning up the PostgreSQL cluster: %v\n", err)
	}
	os.Exit(code)
}

// shutdown stops the cluster if one was started; it is safe to call more
// than once. It also keeps any later URL call from starting a new cluster.
func shutdown() error {
	stopOnce.Do(func() {
		startOnce.Do(func() { srvErr = errStopped })
		if srv != nil && srv.cluster != nil {
			stopErr = srv.cluster.stop()
		}
	})
	return stopErr
}

// get returns the shared server, starting it on first use; it fails t when
// the server cannot be had.
func get(t testing.TB) *server {
	t.Helper()
	startOnce.Do(func() {
		begin := time.Now()
		srv, srvErr = setup()
		if srvErr == nil && srv.cluster != nil {
			t.Logf("pgtest: started PostgreSQL cluster on 127.0.0.1:%d in %v (directory %s)",
				srv.cluster.port, time.Since(begin).Round(time.Millisecond), srv.cluster.dir)
		}
	})
	if srvErr != nil {
		t.Fatalf("pgtest: %v", srvErr)
	}
	return srv
}

// setup connects to PGTEST_URL if set, or else starts a cluster.
func setup() (*server, error) {
	if raw := os.Getenv(envURL); raw != "" {
		return external(raw)
	}
	return startCluster()
}

// external prepares to use the existing server whose admin URL is raw.
func external(raw string) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, fmt.Errorf("%s must be a URL like postgres://user@host:5432/postgres?sslmode=disable; "+
			"keyword=value connection strings are not supported", envURL)
	}
	psql, err := findPsql(os.Getenv("PATH"), debianBinGlob, serverBins{})
	if err != nil {
		return nil, err
	}
	s := &server{admin: u, psql: psql}
	if _, err := s.exec(s.admin.String(), "SELECT 1"); err != nil {
		return nil, fmt.Errorf("cannot use the server %s=%s: %w", envURL, u.Redacted(), err)
	}
	return s, nil
}

// exec runs the SQL in the database at dbURL with psql and returns psql's
// unaligned, tuples-only output.
func (s *server) exec(dbURL, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), psqlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-d", dbURL, "-c", sql)
	cmd.Env = s.env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("psql %q: %w: %s", sql, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// dbURL returns the URL of database name on s.
func (s *server) dbURL(name string) string {
	u := *s.admin
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// newDatabase creates a fresh database for t, drops it when t ends, and
// returns its URL.
func (s *server) newDatabase(t testing.TB) string {
	t.Helper()
	name := databaseName(t.Name())
	if _, err := s.exec(s.admin.String(), "CREATE DATABASE "+quoteIdent(name)); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	// Registered before anything the test registers, so it runs after the
	// test's own cleanups (closing its connection pools, say). FORCE ends
	// any sessions still open.
	t.Cleanup(func() {
		if _, err := s.exec(s.admin.String(), "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	return s.dbURL(name)
}

// URL creates a fresh, empty database for the test, drops it when the test
// and its subtests have finished, and returns its URL:
// postgres://postgres@127.0.0.1:PORT/DBNAME?sslmode=disable for the shared
// cluster, or PGTEST_URL with the database name replaced. The first call in
// a test binary starts the cluster. Each call returns a different database.
// URL fails the test if PostgreSQL is not available.
func URL(t testing.TB) string {
	t.Helper()
	return get(t).newDatabase(t)
}

// Role creates a LOGIN role with no privileges (named r_ and 12 random hex
// digits, so it needs no quoting) for a test that must not connect as the
// superuser, and returns its name and dbURL with that role as the user.
// Grants are the caller's. When the test ends the role is dropped, with
// what it owns in dbURL: roles are cluster-wide, so they are dropped after
// the test's own later cleanups (closing its pools) and before URL's
// database goes. With PGTEST_URL, that role needs CREATEROLE.
func Role(t testing.TB, dbURL string) (name, roleURL string) {
	t.Helper()
	s := get(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name = "r_" + hex.EncodeToString(rnd[:])
	if _, err := s.exec(dbURL, "CREATE ROLE "+name+" LOGIN"); err != nil {
		t.Fatalf("pgtest: creating role %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := s.exec(dbURL, "DROP OWNED BY "+name+"; DROP ROLE "+name); err != nil {
			t.Errorf("pgtest: dropping role %s: %v", name, err)
		}
	})
	u.User = url.User(name)
	return name, u.String()
}

// PsqlPath returns the psql that pgtest runs: the client of the server the
// tests use, for tests that run SQL scripts as an operator would.
func PsqlPath(t testing.TB) string {
	t.Helper()
	return get(t).psql
}

// ProgramPath returns the PostgreSQL program name (pgbench, pg_dump, …) of
// the installation the tests use: the one beside the cluster's initdb, or,
// with PGTEST_URL, the first on PATH or under /usr/lib/postgresql/*/bin. It
// fails t, saying what to install, when there is none.
func ProgramPath(t testing.TB, name string) string {
	t.Helper()
	var bins serverBins
	if s := get(t); s.cluster != nil {
		bins = s.cluster.bins
	}
	p, ok := findProgram(name, os.Getenv("PATH"), debianBinGlob, bins)
	if !ok {
		t.Fatalf("pgtest: the PostgreSQL program %s was not found beside initdb, on PATH or in %s; %s",
			name, debianBinGlob, installHint)
	}
	return p
}

// AdminURL returns the URL of the "postgres" database of the shared cluster
// (or PGTEST_URL itself), connecting as the superuser "postgres", for tests
// that need to look at or change the server as a whole. The first call in a
// test binary starts the cluster. Databases created through it are not
// dropped automatically (the cluster goes away at the end anyway, but a
// PGTEST_URL server does not). AdminURL fails the test if PostgreSQL is not
// available.
func AdminURL(t testing.TB) string {
	t.Helper()
	return get(t).admin.String()
}

// databaseName makes a unique database name from a test name:
// "pgtest_", the test name reduced to [a-z0-9_] and at most 32 bytes, "_",
// and 12 random hex digits; at most 52 bytes, under PostgreSQL's limit of 63.
// The random part keeps names unique across test binaries sharing a
// PGTEST_URL server, and across -count runs.
func databaseName(testName string) string {
	var b strings.Builder
	b.WriteString("pgtest_")
	under := true // suppress leading and repeated underscores
	n := 0
	for _, r := range strings.ToLower(testName) {
		if n == 32 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			under = false
		case !under:
			b.WriteByte('_')
			under = true
		default:
			continue
		}
		n++
	}
	if !under {
		b.WriteByte('_')
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:]) // never fails (it would crash the program)
	b.WriteString(hex.EncodeToString(rnd[:]))
	return b.String()
}

// quoteIdent quotes s as an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
