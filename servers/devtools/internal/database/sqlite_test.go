package database

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, to write the fixture
)

const sqliteFixture = `
CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'x', amount REAL, data BLOB, created DATETIME);
CREATE TABLE pair (a INTEGER, b TEXT, c INTEGER GENERATED ALWAYS AS (a * 2) STORED, PRIMARY KEY (b, a));
CREATE INDEX t_name ON t (name);
CREATE VIEW v AS SELECT id, name FROM t WHERE id <= 10;
CREATE TRIGGER t_log AFTER UPDATE ON t BEGIN UPDATE t SET amount = 0 WHERE id = 1; END;
CREATE VIRTUAL TABLE docs USING fts5(body);
INSERT INTO docs VALUES ('hello world'), ('goodbye moon');
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 150)
INSERT INTO t (id, name, amount, data, created)
  SELECT n, 'row' || n, n * 1.25, CASE WHEN n = 1 THEN x'00ff' END, '2024-01-02 03:04:05' FROM g;
`

// newSQLite writes the fixture into a new database file with an ordinary
// read-write connection, then opens it the way the tools do.
func newSQLite(t testing.TB, cfg Config) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "devtools.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(sqliteFixture); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.EmbeddedPath = path
	db, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, path
}

// dirState is every file in dir with a hash of its content: a write, a
// journal, a WAL or a new file all change it.
func dirState(t testing.TB, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		out = append(out, e.Name()+":"+hex.EncodeToString(sum[:8]))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// dirUnchanged has the test fail if, once it is over, dir is not as it is
// now.
func dirUnchanged(t testing.TB, dir string) {
	t.Helper()
	before := dirState(t, dir)
	t.Cleanup(func() {
		if after := dirState(t, dir); after != before {
			t.Errorf("the database directory changed:\nbefore %s\nafter  %s", before, after)
		}
	})
}

func TestSQLiteQueryWithParams(t *testing.T) {
	t.Parallel()
	db, _ := newSQLite(t, Config{})
	if db.Backend() != SQLite || db.DefaultSchema() != "main" {
		t.Fatalf("backend %s, schema %s", db.Backend(), db.DefaultSchema())
	}
	for _, sql := range []string{
		"SELECT id, name, amount FROM t WHERE id > ? AND name LIKE ? ORDER BY id",
		"SELECT id, name, amount FROM t WHERE id > ?1 AND name LIKE ?2 ORDER BY id",
		"SELECT id, name, amount FROM t WHERE id > $1 AND name LIKE $2 ORDER BY id",
		"SELECT id, name, amount FROM t WHERE name LIKE $2 AND id > $1 ORDER BY id",
	} {
		res := query(t, db, sql, json.Number("147"), "row%")
		want := `[[148,"row148",185],[149,"row149",186.25],[150,"row150",187.5]]`
		if got := mustJSON(t, res.Rows); got != want {
			t.Errorf("%s: rows = %s, want %s", sql, got, want)
		}
		if res.RowCount != 3 || res.Truncated || res.Command != "" || res.Backend != SQLite {
			t.Errorf("result = %+v", res)
		}
		if got := fmt.Sprint(res.Columns); got != "[{id INTEGER} {name TEXT} {amount REAL}]" {
			t.Errorf("columns = %s", got)
		}
	}
	res := query(t, db, "SELECT ? + 1, ? * 2, ?, ? IS NULL, ?, typeof(?)", json.Number("41"), 1.25, true, nil,
		json.Number("123456789012345678901234567890"), json.Number("1e3"))
	if got := mustJSON(t, res.Rows); got != `[[42,2.5,1,1,"123456789012345678901234567890","real"]]` {
		t.Errorf("typed params: %s", got)
	}
	res = query(t, db, "SELECT count(*) FROM t WHERE name = ?", "x' OR '1'='1")
	if got := mustJSON(t, res.Rows); got != `[[0]]` {
		t.Errorf("injection via a parameter matched rows: %s", got)
	}
	for _, q := range []Query{
		{SQL: "SELECT ?, ?", Params: []any{"one"}},
		// Numbered and named parameters without a value: a caller's
		// mistake, not "database unavailable" (which says retry).
		{SQL: "SELECT ?1"},
		{SQL: "SELECT ?2", Params: []any{"one"}},
		{SQL: "SELECT $2", Params: []any{"one"}},
		{SQL: "SELECT :x", Params: []any{"one"}},
	} {
		if _, err := db.Query(context.Background(), q); codeOf(err) != mcperr.Validation {
			t.Errorf("%s with %d params: %v (code %s), want a validation error", q.SQL, len(q.Params), err, codeOf(err))
		}
	}
	for _, sql := range []string{"SELEC 1", "SELECT nope FROM t", "SELECT * FROM nope"} {
		if _, err := db.Query(context.Background(), Query{SQL: sql}); codeOf(err) != mcperr.Validation || !strings.Contains(err.Error(), "SQLite:") {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

func TestSQLiteLimitAndTruncation(t *testing.T) {
	t.Parallel()
	db, _ := newSQLite(t, Config{MaxLimit: 200})
	for _, tc := range []struct {
		limit, want int
		truncated   bool
	}{
		{0, 100, true}, {5, 5, true}, {150, 150, false}, {200, 150, false},
	} {
		res, err := db.Query(context.Background(), Query{SQL: "SELECT id FROM t ORDER BY id", Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if res.RowCount != tc.want || res.Truncated != tc.truncated || (tc.truncated && res.TruncatedBy != "limit") {
			t.Errorf("limit %d: %d rows, truncated %v by %q", tc.limit, res.RowCount, res.Truncated, res.TruncatedBy)
		}
	}
	// An endless result stops at the limit.
	res := query(t, db, "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g) SELECT n FROM g")
	if res.RowCount != DefaultLimit || !res.Truncated {
		t.Errorf("endless: %d rows, truncated %v", res.RowCount, res.Truncated)
	}

	small, _ := newSQLite(t, Config{MaxResultBytes: 100})
	res = query(t, small, "SELECT name FROM t ORDER BY id")
	var size int
	for _, r := range res.Rows {
		size += len(r)
	}
	if !res.Truncated || res.TruncatedBy != "max_bytes" || size > 100 || res.RowCount < 5 {
		t.Errorf("byte cap: %d rows, %d bytes, truncated %v by %q", res.RowCount, size, res.Truncated, res.TruncatedBy)
	}
}

// sqliteWriteForms must all fail. dir is the database's directory.
func sqliteWriteForms(dir string) []string {
	return []string{
		"INSERT INTO t (name) VALUES ('x')",
		"INSERT OR REPLACE INTO t (id, name) VALUES (1, 'x')",
		"REPLACE INTO t (id, name) VALUES (1, 'x')",
		"INSERT INTO t (id, name) VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET name = 'y'",
		"INSERT INTO t (name) SELECT name FROM t",
		"UPDATE t SET name = 'x'",
		"DELETE FROM t",
		"WITH x AS (SELECT 1) DELETE FROM t",
		"INSERT INTO docs VALUES ('x')",
		"INSERT INTO docs (docs) VALUES ('delete-all')",
		"CREATE TABLE x (a)",
		"CREATE TEMP TABLE x (a)",
		"CREATE TABLE x AS SELECT * FROM t",
		"CREATE INDEX x ON t (amount)",
		"CREATE VIEW x AS SELECT 1",
		"CREATE TEMP VIEW x AS SELECT 1",
		"CREATE TRIGGER x AFTER INSERT ON t BEGIN DELETE FROM t; END",
		"CREATE VIRTUAL TABLE x USING fts5(a)",
		"DROP TABLE t",
		"DROP VIEW v",
		"DROP INDEX t_name",
		"DROP TRIGGER t_log",
		"ALTER TABLE t ADD COLUMN z",
		"ALTER TABLE t RENAME TO t2",
		"ATTACH DATABASE '" + filepath.Join(dir, "attached.db") + "' AS x",
		"ATTACH DATABASE ':memory:' AS x",
		"DETACH DATABASE main",
		"PRAGMA writable_schema = ON",
		"PRAGMA writable_schema = RESET",
		"PRAGMA query_only = OFF",
		"PRAGMA query_only(0)",
		"PRAGMA journal_mode = WAL",
		"PRAGMA user_version = 5",
		"PRAGMA main.user_version = 5",
		"PRAGMA foreign_keys = ON",
		"PRAGMA defer_foreign_keys = ON",
		"PRAGMA temp_store_directory = '" + dir + "'",
		"PRAGMA cache_size = 1",
		"PRAGMA incremental_vacuum",
		"PRAGMA optimize",
		"PRAGMA wal_checkpoint(TRUNCATE)",
		"VACUUM",
		"VACUUM INTO '" + filepath.Join(dir, "copy.db") + "'",
		"REINDEX",
		"ANALYZE",
		"BEGIN",
		"BEGIN IMMEDIATE",
		"COMMIT",
		"END",
		"ROLLBACK",
		"SAVEPOINT a",
		"RELEASE a",
		"SELECT load_extension('/nonexistent')",
		"SELECT 1; DELETE FROM t",
		"SELECT 1; SELECT 2",
		"SELECT * FROM t; DROP TABLE t",
		"SELECT 1;DELETE FROM t;",
		"PRAGMA table_info(t); DELETE FROM t",
		"PRAGMA table_info(t); PRAGMA index_list(t)",
		"SELECT * FROM pragma_table_info('t'); SELECT 2",
		"VACUUM; SELECT 1",
		"",
		"   ",
		"-- nothing",
		";",
	}
}

func TestSQLiteWriteFormsRefused(t *testing.T) {
	t.Parallel()
	db, path := newSQLite(t, Config{MaxConns: 1})
	dir := filepath.Dir(path)
	dirUnchanged(t, dir)
	for _, sql := range sqliteWriteForms(dir) {
		res, err := db.Query(context.Background(), Query{SQL: sql})
		if err == nil {
			t.Errorf("%q: succeeded: %s", sql, mustJSON(t, res))
			continue
		}
		if k := codeOf(err); k != mcperr.PermissionDeny && k != mcperr.Validation {
			t.Errorf("%q: %v (code %s)", sql, err, k)
		}
		if strings.Contains(err.Error(), dir) {
			t.Errorf("%q: the error names the file: %v", sql, err)
		}
	}
	// The connection still works and still refuses.
	if res := query(t, db, "SELECT count(*) FROM t"); string(res.Rows[0]) != "[150]" {
		t.Errorf("rows after: %s", res.Rows[0])
	}
	if _, err := db.Query(context.Background(), Query{SQL: "DELETE FROM t"}); codeOf(err) != mcperr.PermissionDeny {
		t.Errorf("after the table: %v", err)
	}
	var de *mcperr.Error
	if _, err := db.Query(context.Background(), Query{SQL: "SELECT 1; SELECT 2"}); !errors.As(err, &de) ||
		de.Code != mcperr.Validation || !strings.Contains(de.Message, "only one SQL statement") {
		t.Errorf("multi-statement message: %v", err)
	}
}

// TestSQLiteQueriesThatCompileWhileRunning: table-valued functions compile
// SQL of their own while the statement runs; the one-statement check must
// let them through.
func TestSQLiteQueriesThatCompileWhileRunning(t *testing.T) {
	t.Parallel()
	db, path := newSQLite(t, Config{MaxConns: 1})
	dirUnchanged(t, filepath.Dir(path))
	for sql, want := range map[string]string{
		"SELECT name, pk FROM pragma_table_info('t') ORDER BY cid LIMIT 2": `[["id",1],["name",0]]`,
		"SELECT name FROM pragma_table_info(?) WHERE pk = 1":               `[["id"]]`,
		"SELECT body FROM docs WHERE docs MATCH 'hello'":                   `[["hello world"]]`,
		"SELECT count(*) > 0 FROM dbstat":                                  `[[1]]`,
		"SELECT * FROM v WHERE id = 2":                                     `[[2,"row2"]]`,
		"PRAGMA index_list(t)":                                             `[[0,"t_name",0,"c",0]]`,
		"PRAGMA user_version":                                              `[[0]]`,
		"PRAGMA query_only":                                                `[[1]]`,
		"EXPLAIN QUERY PLAN SELECT * FROM t WHERE name = 'x'":              ``,
		"WITH x(a) AS (VALUES (1), (2)) SELECT sum(a) FROM x;":             `[[3]]`,
		"SELECT json_extract('{\"a\": [1, 2]}', '$.a[1]')":                 `[[2]]`,
	} {
		var params []any
		if strings.Contains(sql, "?") {
			params = []any{"t"}
		}
		res := query(t, db, sql, params...)
		if got := mustJSON(t, res.Rows); want != "" && got != want {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
	}
}

func TestSQLiteValues(t *testing.T) {
	t.Parallel()
	db, _ := newSQLite(t, Config{})
	res := query(t, db, "SELECT id, name, amount, data, created, NULL, 9007199254740993, 0.1 + 0.2, x'', 'é' FROM t WHERE id = 1")
	want := `[1,"row1",1.25,"AP8=","2024-01-02T03:04:05Z",null,9007199254740993,0.30000000000000004,"","é"]`
	if got := string(res.Rows[0]); got != want {
		t.Errorf("values\n got %s\nwant %s", got, want)
	}
	if got := fmt.Sprint(res.Columns[:5]); got != "[{id INTEGER} {name TEXT} {amount REAL} {data BLOB} {created DATETIME}]" {
		t.Errorf("columns %s", got)
	}
}

func TestSQLiteTimeout(t *testing.T) {
	t.Parallel()
	db, _ := newSQLite(t, Config{MaxConns: 1, StatementTimeout: 200 * time.Millisecond})
	endless := "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g) SELECT count(*) FROM g"
	start := time.Now()
	_, err := db.Query(context.Background(), Query{SQL: endless})
	if codeOf(err) != mcperr.Timeout || !strings.Contains(err.Error(), "200ms") {
		t.Errorf("endless count: %v, want Timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	query(t, db, selectOne)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := db.Query(ctx, Query{SQL: endless}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	long, _ := newSQLite(t, Config{})
	if _, err := long.Query(context.Background(), Query{SQL: endless, Timeout: 100 * time.Millisecond}); codeOf(err) != mcperr.Timeout {
		t.Errorf("per-call timeout: %v", err)
	}
}

func TestSQLiteTables(t *testing.T) {
	t.Parallel()
	db, path := newSQLite(t, Config{})
	dirUnchanged(t, filepath.Dir(path))
	ts, err := db.Tables(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range ts.Tables {
		names = append(names, tb.Name+":"+tb.Type)
	}
	want := "docs:virtual docs_config:shadow docs_content:shadow docs_data:shadow docs_docsize:shadow docs_idx:shadow pair:table t:table v:view"
	if ts.Schema != "main" || ts.Backend != SQLite || strings.Join(names, " ") != want {
		t.Errorf("tables %s %s: %s", ts.Backend, ts.Schema, strings.Join(names, " "))
	}
	if ts, err := db.Tables(context.Background(), "temp"); err != nil || len(ts.Tables) != 0 || ts.Tables == nil {
		t.Errorf("temp: %+v, %v", ts, err)
	}
	for _, schema := range []string{"nope", "main'; DROP TABLE t; --", `main" OR 1=1 --`, "public"} {
		_, err := db.Tables(context.Background(), schema)
		var de *mcperr.Error
		if !errors.As(err, &de) || de.Code != mcperr.NotFound || de.Field != "schema" {
			t.Errorf("schema %q: %v, want NotFound", schema, err)
		}
	}
}

func TestSQLiteSchema(t *testing.T) {
	t.Parallel()
	db, path := newSQLite(t, Config{})
	dirUnchanged(t, filepath.Dir(path))
	s, err := db.Schema(context.Background(), "", "t")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"backend":"sqlite","schema":"main","table":"t","type":"table","columns":[` +
		`{"position":1,"name":"id","type":"INTEGER","nullable":true,"default":null,"primary_key":1},` +
		`{"position":2,"name":"name","type":"TEXT","nullable":false,"default":"'x'","primary_key":0},` +
		`{"position":3,"name":"amount","type":"REAL","nullable":true,"default":null,"primary_key":0},` +
		`{"position":4,"name":"data","type":"BLOB","nullable":true,"default":null,"primary_key":0},` +
		`{"position":5,"name":"created","type":"DATETIME","nullable":true,"default":null,"primary_key":0}],"primary_key":["id"]}`
	if got := mustJSON(t, s); got != want {
		t.Errorf("schema t\n got %s\nwant %s", got, want)
	}
	s, err = db.Schema(context.Background(), "main", "PAIR") // SQLite names ignore case
	if err != nil {
		t.Fatal(err)
	}
	want = `{"backend":"sqlite","schema":"main","table":"pair","type":"table","columns":[` +
		`{"position":1,"name":"a","type":"INTEGER","nullable":true,"default":null,"primary_key":2},` +
		`{"position":2,"name":"b","type":"TEXT","nullable":true,"default":null,"primary_key":1},` +
		`{"position":3,"name":"c","type":"INTEGER","nullable":true,"default":null,"primary_key":0,"generated":true}],` +
		`"primary_key":["b","a"]}`
	if got := mustJSON(t, s); got != want {
		t.Errorf("schema pair\n got %s\nwant %s", got, want)
	}
	if s, err := db.Schema(context.Background(), "", "v"); err != nil || s.Type != "view" || len(s.Columns) != 2 {
		t.Errorf("schema v: %+v, %v", s, err)
	}
	for _, tc := range []struct{ schema, table, field string }{
		{"", "nope", "table"},
		{"", `t" OR 1=1 --`, "table"},
		{"", "t'; DROP TABLE t; --", "table"},
		{"", "t; DROP TABLE t", "table"},
		{"temp", "t", "table"},
		{"main'; DROP TABLE t; --", "t", "schema"},
	} {
		_, err := db.Schema(context.Background(), tc.schema, tc.table)
		var de *mcperr.Error
		if !errors.As(err, &de) || de.Code != mcperr.NotFound || de.Field != tc.field {
			t.Errorf("schema %q table %q: %v, want NotFound on %s", tc.schema, tc.table, err, tc.field)
		}
	}
}

func TestSQLiteOpen(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "devtools")
	path := filepath.Join(dir, "devtools.db")
	db, err := Open(Config{EmbeddedPath: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for p, mode := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", p, fi.Mode(), err, mode)
		}
	}
	ts, err := db.Tables(context.Background(), "")
	if err != nil || len(ts.Tables) != 0 {
		t.Errorf("empty database: %+v, %v", ts, err)
	}
	if _, err := db.Query(context.Background(), Query{SQL: "CREATE TABLE x (a)"}); codeOf(err) != mcperr.PermissionDeny {
		t.Errorf("create in the empty database: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("the empty database was written: %d bytes", fi.Size())
	}

	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{EmbeddedPath: notDB}); err == nil {
		t.Error("opened a file that is not a database")
	}
	if _, err := Open(Config{}); err == nil {
		t.Error("opened without a URL or a path")
	}
}

func TestSQLiteConcurrentCalls(t *testing.T) {
	t.Parallel()
	db, _ := newSQLite(t, Config{MaxConns: 3})
	concurrently(t, 8, 5, func(i, j int) error {
		switch j % 3 {
		case 0:
			id := i*5 + j + 1
			res, err := db.Query(context.Background(), Query{SQL: "SELECT id FROM t WHERE id = ?", Params: []any{json.Number(fmt.Sprint(id))}})
			if err == nil && string(res.Rows[0]) != fmt.Sprintf("[%d]", id) {
				err = fmt.Errorf("got %s", res.Rows[0])
			}
			return err
		case 1:
			if _, err := db.Query(context.Background(), Query{SQL: "SELECT 1; DELETE FROM t"}); codeOf(err) != mcperr.Validation {
				return fmt.Errorf("multi-statement: %v", err)
			}
			return nil
		default:
			_, err := db.Schema(context.Background(), "", "t")
			return err
		}
	})
}

// TestSQLiteValueLengthCapped: a value larger than the result cap is refused
// at once instead of being built in memory.
func TestSQLiteValueLengthCapped(t *testing.T) {
	db, _ := newSQLite(t, Config{MaxResultBytes: 2 << 20})
	start := time.Now()
	_, err := db.Query(context.Background(), Query{SQL: "SELECT length(hex(randomblob(400000000)))"})
	var de *mcperr.Error
	if !errors.As(err, &de) || de.Code != mcperr.Validation || !strings.Contains(de.Message, "too big") {
		t.Fatalf("a 400 MB value: want an Invalid 'too big' error, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("refusal took %v", time.Since(start))
	}
	if _, err := db.Query(context.Background(), Query{SQL: "SELECT length(randomblob(1000000))"}); err != nil {
		t.Fatalf("a 1 MB value under the cap: %v", err)
	}
	for in, want := range map[int64]int{0: 1 << 20, 5 << 20: 5 << 20, 1 << 40: 1<<31 - 1} {
		if got := valueLengthLimit(in); got != want {
			t.Errorf("valueLengthLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestSQLitePath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
		isSQLite bool
		bad      bool
	}{
		{"sqlite:///abs/path/app.db", "/abs/path/app.db", true, false},
		{"sqlite:/abs/app.db", "/abs/app.db", true, false},
		{"sqlite://localhost/abs/app.db", "/abs/app.db", true, false},
		{"sqlite:rel/app.db", filepath.Join(wd, "rel/app.db"), true, false},
		{"SQLITE3:///a%20b.db?mode=rwc", "/a b.db", true, false},
		{"file:app.db", filepath.Join(wd, "app.db"), true, false},
		{"file:///abs/app.db?cache=shared", "/abs/app.db", true, false},
		{"sqlite://somehost/abs/app.db", "", true, true},
		{"sqlite:", "", true, true},
		{"sqlite:///", "", true, true},
		{"sqlite:%zz", "", true, true},
		{"postgres://u:p@h/db", "", false, false},
		{"postgresql://h/db", "", false, false},
		{"host=h dbname=db", "", false, false},
	} {
		got, isSQLite, err := SQLitePath(tc.in)
		if got != tc.want || isSQLite != tc.isSQLite || (err != nil) != tc.bad {
			t.Errorf("SQLitePath(%q) = %q, %v, %v; want %q, %v, error %v", tc.in, got, isSQLite, err, tc.want, tc.isSQLite, tc.bad)
		}
	}
}

// TestSQLiteNamedByURL: DATABASE_URL may name any existing SQLite file,
// which is opened read-only, never created.
func TestSQLiteNamedByURL(t *testing.T) {
	t.Parallel()
	_, path := newSQLite(t, Config{})
	dir := filepath.Dir(path)
	dirUnchanged(t, dir)
	for _, u := range []string{"sqlite://" + path, "sqlite:" + path, "file:" + path + "?mode=rwc"} {
		db, err := Open(Config{DatabaseURL: u})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if db.Backend() != SQLite || !db.Named() || db.Empty() || db.Source() != "SQLite file devtools.db" {
			t.Errorf("%s: backend %s, named %v, empty %v, source %q", u, db.Backend(), db.Named(), db.Empty(), db.Source())
		}
		if res := query(t, db, "SELECT count(*) FROM t"); string(res.Rows[0]) != "[150]" {
			t.Errorf("%s: %s", u, res.Rows[0])
		}
		if _, err := db.Query(context.Background(), Query{SQL: "DELETE FROM t"}); codeOf(err) != mcperr.PermissionDeny {
			t.Errorf("%s: delete: %v", u, err)
		}
		ts, err := db.Tables(context.Background(), "")
		if err != nil || ts.Note != "" {
			t.Errorf("%s: tables %+v, %v", u, ts, err)
		}
		db.Close()
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := Open(Config{DatabaseURL: "sqlite://" + missing}); err == nil || !strings.Contains(err.Error(), "cannot be opened") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the missing file was created: %v", err)
	}
	if _, err := Open(Config{DatabaseURL: "sqlite://" + t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Open(Config{DatabaseURL: "sqlite://elsewhere/x.db"}); err == nil {
		t.Error("an SQLite URL with a host was accepted")
	}
}

// TestSQLiteEmptyNote: an empty database's table listing says how to point
// the tools at a database of one's own.
func TestSQLiteEmptyNote(t *testing.T) {
	t.Parallel()
	db, err := Open(Config{EmbeddedPath: filepath.Join(t.TempDir(), "devtools.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.Empty() || db.Named() {
		t.Errorf("empty %v, named %v", db.Empty(), db.Named())
	}
	ts, err := db.Tables(context.Background(), "")
	if err != nil || len(ts.Tables) != 0 || ts.Note != EmptyHint {
		t.Errorf("tables %+v, %v", ts, err)
	}
	if ts, err := db.Tables(context.Background(), "temp"); err != nil || ts.Note != "" {
		t.Errorf("temp: %+v, %v", ts, err)
	}
	for _, want := range []string{"DATABASE_URL=postgres://", "DATABASE_URL=sqlite:///", "--db-path"} {
		if !strings.Contains(EmptyHint, want) {
			t.Errorf("the hint does not mention %s", want)
		}
	}
}
