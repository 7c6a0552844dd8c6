package pgtest_test

import (
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestReaderDB(t *testing.T) {
	t.Parallel()
	reader := pgtest.ReaderDB(t)
	out := psql(t, reader, pgtest.BenchQuery)
	lines := strings.Split(out, "\n")
	if len(lines) != pgtest.BenchRows {
		t.Fatalf("%d rows, want %d", len(lines), pgtest.BenchRows)
	}
	if lines[0] != "1|row 1|1.25|2024-01-01 01:00:00+00" {
		t.Errorf("first row %q", lines[0])
	}
	// The role may read that table and nothing more.
	for _, sql := range []string{
		"INSERT INTO " + pgtest.BenchTable + " VALUES (1000, 'x', 1, now())",
		"CREATE TABLE other (id int)",
		"DELETE FROM " + pgtest.BenchTable,
	} {
		if _, err := psqlErr(t, reader, sql); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as the reader: %v, want permission denied", sql, err)
		}
	}
	if n := psql(t, reader, "SELECT rolsuper OR rolcreatedb OR rolcreaterole FROM pg_roles WHERE rolname = current_user"); n != "f" {
		t.Errorf("the reader has more than LOGIN: %s", n)
	}
}
