package state

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// v1, v2 and v3 are a schema's history; each migration also logs itself, so
// a test can count how often it ran.
var (
	m1 = &fstest.MapFile{Data: []byte(`CREATE TABLE log (version integer NOT NULL);
CREATE TABLE owner (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO log VALUES (1);`)}
	m2 = &fstest.MapFile{Data: []byte(`CREATE TABLE pet (id integer PRIMARY KEY, owner integer NOT NULL REFERENCES owner (id));
INSERT INTO log VALUES (2);`)}
	m3 = &fstest.MapFile{Data: []byte(`CREATE INDEX pet_owner ON pet (owner);
INSERT INTO log VALUES (3);`)}
	v1 = fstest.MapFS{"0001_init.sql": m1, "README.md": {Data: []byte("not a migration")}}
	v2 = fstest.MapFS{"0001_init.sql": m1, "0002_pets.sql": m2}
	v3 = fstest.MapFS{"0001_init.sql": m1, "0002_pets.sql": m2, "0003_index.sql": m3, "sub": {Mode: fs.ModeDir}}
)

func TestLoadMigrations(t *testing.T) {
	ms, err := LoadMigrations(v3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].Name != "0001_init.sql" || ms[2].Version != 3 || len(ms[1].Checksum) != 64 || ms[1].SQL != string(m2.Data) {
		t.Errorf("migrations %+v", ms)
	}
	if ms, err := LoadMigrations(nil); err != nil || ms != nil {
		t.Errorf("nil: %v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"bad name":     {"init.sql": m1},
		"zero":         {"0_init.sql": m1},
		"gap":          {"0001_a.sql": m1, "0003_c.sql": m2},
		"not from one": {"0002_b.sql": m1},
		"duplicate":    {"0001_a.sql": m1, "1_b.sql": m2},
		"empty":        {"0001_a.sql": {Data: nil}},
		"huge version": {"99999999999999999999_a.sql": m1},
	} {
		if _, err := LoadMigrations(fsys); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := LoadMigrations(os.DirFS(filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("a missing directory was accepted")
	}
}

func TestSQLiteOpenAndMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data", "srv")
	path := filepath.Join(dir, "state.db")
	db, err := OpenSQLite(ctx, path, Options{Migrations: v2})
	if err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode(), err, mode)
		}
	}
	if db.Version() != 2 || db.Path() != path {
		t.Errorf("version %d, path %s", db.Version(), db.Path())
	}
	var mode string
	var fk, busy int
	if err := db.QueryRow("SELECT * FROM pragma_journal_mode, pragma_foreign_keys, pragma_busy_timeout").Scan(&mode, &fk, &busy); err != nil ||
		mode != "wal" || fk != 1 || busy != 5000 {
		t.Errorf("writer: journal %s, foreign keys %d, busy %d, %v", mode, fk, busy, err)
	}
	// Foreign keys are enforced; readers see committed writes and cannot write.
	if _, err := db.Exec("INSERT INTO pet VALUES (1, 42)"); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Errorf("orphan pet: %v", err)
	}
	if _, err := db.Exec("INSERT INTO owner VALUES (1, 'ann'); INSERT INTO pet VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.Readers().QueryRow("SELECT count(*) FROM pet").Scan(&n); err != nil || n != 1 {
		t.Errorf("reader: %d, %v", n, err)
	}
	if _, err := db.Readers().Exec("DELETE FROM pet"); err == nil {
		t.Error("a reader wrote")
	}
	// Writer transactions begin IMMEDIATE: holding one, another process
	// cannot start its own write transaction.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	other, err := OpenSQLite(ctx, path, Options{Migrations: v2, BusyTimeout: 50_000_000})
	if err == nil {
		_ = other.Close()
		t.Error("opened (and migrated) while another connection held the write lock")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening with more migrations applies only the new one; reopening
	// with the same is a no-op.
	for _, tc := range []struct {
		fsys fs.FS
		want int
	}{{v3, 3}, {v3, 3}} {
		db, err := OpenSQLite(ctx, path, Options{Migrations: tc.fsys, Readers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var log string
		if err := db.QueryRow("SELECT group_concat(version, ',') FROM log").Scan(&log); err != nil || log != "1,2,3" || db.Version() != tc.want {
			t.Errorf("log %q, version %d, %v", log, db.Version(), err)
		}
		_ = db.Close()
	}

	// An older binary refuses the newer database; a changed migration is
	// refused.
	if _, err := OpenSQLite(ctx, path, Options{Migrations: v2}); err == nil || !strings.Contains(err.Error(), "newer than this program knows") {
		t.Errorf("older binary: %v", err)
	}
	changed := fstest.MapFS{"0001_init.sql": m1, "0002_pets.sql": {Data: []byte("CREATE TABLE pet (id int);")}, "0003_index.sql": m3}
	if _, err := OpenSQLite(ctx, path, Options{Migrations: changed}); err == nil || !strings.Contains(err.Error(), "0002_pets.sql was changed") {
		t.Errorf("changed migration: %v", err)
	}
}

func TestSQLiteFailedMigrationChangesNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	bad := fstest.MapFS{"0001_init.sql": m1, "0002_bad.sql": {Data: []byte("CREATE TABLE half (a int); INSERT INTO nope VALUES (1);")}}
	if _, err := OpenSQLite(context.Background(), path, Options{Migrations: bad}); err == nil || !strings.Contains(err.Error(), "0002_bad.sql") {
		t.Fatalf("bad migration: %v", err)
	}
	db, err := OpenSQLite(context.Background(), path, Options{Migrations: v1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'half'").Scan(&n); err != nil || n != 0 || db.Version() != 1 {
		t.Errorf("half-applied migration: table %d, version %d, %v", n, db.Version(), err)
	}

	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSQLite(context.Background(), notDB, Options{}); err == nil {
		t.Error("opened a file that is not a database")
	}
	if _, err := OpenSQLite(context.Background(), path, Options{Migrations: fstest.MapFS{"x.sql": m1}}); err == nil {
		t.Error("bad migration names accepted")
	}
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSQLite(context.Background(), filepath.Join(blocked, "state.db"), Options{}); err == nil {
		t.Error("opened a database under a file")
	}
}

// TestSQLiteConcurrentOpen: several openers (as several processes would)
// migrate one new database at once; each migration runs exactly once.
func TestSQLiteConcurrentOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	atOnce(t, 6, func() error {
		db, err := OpenSQLite(context.Background(), path, Options{Migrations: v3})
		if err == nil && db.Version() != 3 {
			err = errors.New("not at version 3")
		}
		if err == nil {
			err = db.Close()
		}
		return err
	})
	db, err := OpenSQLite(context.Background(), path, Options{Migrations: v3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var log string
	if err := db.QueryRow("SELECT group_concat(version, ',') FROM log").Scan(&log); err != nil || log != "1,2,3" {
		t.Errorf("log %q, %v", log, err)
	}
}

func TestPostgresMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if v, err := MigratePostgres(ctx, pool, v2); err != nil || v != 2 {
		t.Fatalf("v2: %d, %v", v, err)
	}
	for range 2 {
		if v, err := MigratePostgres(ctx, pool, v3); err != nil || v != 3 {
			t.Fatalf("v3: %d, %v", v, err)
		}
	}
	var log string
	if err := pool.QueryRow(ctx, "SELECT string_agg(version::text, ',' ORDER BY version) FROM log").Scan(&log); err != nil || log != "1,2,3" {
		t.Errorf("log %q, %v", log, err)
	}
	var recorded string
	if err := pool.QueryRow(ctx, "SELECT string_agg(name || ':' || left(checksum, 8), ' ' ORDER BY version) FROM schema_migrations").Scan(&recorded); err != nil ||
		!strings.HasPrefix(recorded, "0001_init.sql:") || strings.Count(recorded, " ") != 2 {
		t.Errorf("schema_migrations %q, %v", recorded, err)
	}
	if _, err := MigratePostgres(ctx, pool, v2); err == nil || !strings.Contains(err.Error(), "newer than this program knows") {
		t.Errorf("older binary: %v", err)
	}
	changed := fstest.MapFS{"0001_init.sql": {Data: []byte("CREATE TABLE x (a int);")}, "0002_pets.sql": m2, "0003_index.sql": m3}
	if _, err := MigratePostgres(ctx, pool, changed); err == nil || !strings.Contains(err.Error(), "0001_init.sql was changed") {
		t.Errorf("changed migration: %v", err)
	}
	bad := fstest.MapFS{"0001_init.sql": m1, "0002_pets.sql": m2, "0003_index.sql": m3,
		"0004_bad.sql": {Data: []byte("CREATE TABLE half (a int); INSERT INTO nope VALUES (1);")}}
	if _, err := MigratePostgres(ctx, pool, bad); err == nil || !strings.Contains(err.Error(), "0004_bad.sql") {
		t.Errorf("bad migration: %v", err)
	}
	var half *string
	if err := pool.QueryRow(ctx, "SELECT to_regclass('half')::text").Scan(&half); err != nil || half != nil {
		t.Errorf("half-applied migration left %v (%v)", half, err)
	}
	if _, err := MigratePostgres(ctx, pool, fstest.MapFS{"x.sql": m1}); err == nil {
		t.Error("bad migration names accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := MigratePostgres(cancelled, pool, v3); err == nil {
		t.Error("migrated with a cancelled context")
	}
}

// TestPostgresConcurrentMigrate: eight connections (as eight processes
// starting at once) migrate one database; each migration runs exactly once.
func TestPostgresConcurrentMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	atOnce(t, 8, func() error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		v, err := MigratePostgres(ctx, conn, v3)
		if err == nil && v != 3 {
			err = errors.New("not at version 3")
		}
		return err
	})
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var log string
	if err := conn.QueryRow(ctx, "SELECT string_agg(version::text, ',' ORDER BY version) FROM log").Scan(&log); err != nil || log != "1,2,3" {
		t.Errorf("log %q, %v", log, err)
	}
}

// atOnce runs open n times concurrently, as n processes starting together
// would, and fails t with every error they return.
func atOnce(t *testing.T, n int, open func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- open()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
