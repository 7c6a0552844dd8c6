package pgtest

import (
	"fmt"
	"testing"
)

// BenchTable is the table [ReaderDB] fills, and BenchRows its row count.
const (
	BenchTable = "bench_rows"
	BenchRows  = 100
)

// BenchQuery selects every row of [BenchTable] in a fixed order: the
// statement benchmarks send to a server under test and to a reference server
// alike, so that both do the same work in the database.
const BenchQuery = "SELECT id, name, amount, created FROM " + BenchTable + " ORDER BY id"

// ReaderDB creates a fresh database (as [URL] does) holding one table,
// [BenchTable], of [BenchRows] rows (an integer key, text, a numeric and a
// timestamp per row), and a role (as [Role] does) that may do nothing but
// SELECT from it. It returns the URL that connects as that role: the least
// privilege a read-only server needs, so that servers which refuse a
// superuser run as they would in production. Everything goes when the test
// ends.
func ReaderDB(t testing.TB) (readerURL string) {
	t.Helper()
	s := get(t)
	dbURL := s.newDatabase(t)
	role, readerURL := Role(t, dbURL)
	setup := fmt.Sprintf(`
CREATE TABLE %[1]s (id integer PRIMARY KEY, name text NOT NULL, amount numeric(12,2) NOT NULL, created timestamptz NOT NULL);
INSERT INTO %[1]s SELECT i, 'row ' || i, i * 1.25, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour'
  FROM generate_series(1, %[2]d) AS i;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO %[3]s;
GRANT SELECT ON %[1]s TO %[3]s;`, BenchTable, BenchRows, role)
	if _, err := s.exec(dbURL, setup); err != nil {
		t.Fatalf("pgtest: filling %s: %v", BenchTable, err)
	}
	return readerURL
}
