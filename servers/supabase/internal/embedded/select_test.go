package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
)

// TestSelectOrderPagesAndCount: a read gives its rows in the order asked,
// the page asked, the exact count and whether more rows match, also when
// a value holds the character that separates the rows, and with more
// distinct reads running at once than statements are kept prepared.
func TestSelectOrderPagesAndCount(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const total = 30
	for i := range total {
		if _, err := db.db.ExecContext(ctx, `INSERT INTO agent_errors (agent_type, error_type, task_id, error_message, retry_count)
VALUES ('paging', 'e', ?, ?, ?)`, fmt.Sprintf("t-%02d", i), fmt.Sprintf("row %d \x1e \"quoted\" \\ \n", i), i%3); err != nil {
			t.Fatal(err)
		}
	}
	read := func(limit, offset int, desc bool) error {
		q := &query.Select{Schema: Schema, Table: "agent_errors", Items: []query.Item{{Column: "task_id"}, {Column: "error_message"}},
			Where: query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "agent_type", Op: query.Eq, Value: query.Value{Kind: query.String, Text: "paging"}}}}},
			Order: []query.Order{{Column: "task_id", Desc: desc}}, Limit: limit, Offset: offset, Count: true}
		res, err := db.Select(ctx, q)
		if err != nil {
			return err
		}
		var want []int
		for i := offset; i < total && len(want) < limit; i++ {
			if desc {
				want = append(want, total-1-i)
			} else {
				want = append(want, i)
			}
		}
		if res.RowCount != len(want) || len(res.Rows) != len(want) || *res.Count != total || res.Truncated != (offset+limit < total) {
			return fmt.Errorf("limit %d offset %d desc %v: %d rows, count %d, truncated %v", limit, offset, desc, len(res.Rows), *res.Count, res.Truncated)
		}
		for i, raw := range res.Rows {
			var row struct {
				TaskID  string `json:"task_id"`
				Message string `json:"error_message"`
			}
			if err := json.Unmarshal(raw, &row); err != nil {
				return fmt.Errorf("row %s: %w", raw, err)
			}
			if w := want[i]; row.TaskID != fmt.Sprintf("t-%02d", w) || row.Message != fmt.Sprintf("row %d \x1e \"quoted\" \\ \n", w) {
				return fmt.Errorf("limit %d offset %d desc %v: row %d is %+v, want t-%02d", limit, offset, desc, i, row, w)
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*maxStmts)
	for i := range 2 * maxStmts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- read(1+i%total, i%7, i%2 == 1)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(db.stmts.m); n > maxStmts {
		t.Errorf("%d statements kept prepared, at most %d", n, maxStmts)
	}
	// Ordered by a column without an index (SQLite sorts), then a second key.
	q := &query.Select{Schema: Schema, Table: "agent_errors", Items: []query.Item{{Column: "task_id"}},
		Order: []query.Order{{Column: "retry_count", Desc: true}, {Column: "task_id"}}, Limit: total}
	res, err := db.Select(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, raw := range res.Rows {
		var row struct {
			TaskID string `json:"task_id"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			t.Fatal(err)
		}
		got = append(got, row.TaskID)
	}
	var want []string
	for r := 2; r >= 0; r-- {
		for i := range total {
			if i%3 == r {
				want = append(want, fmt.Sprintf("t-%02d", i))
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sorted by retry_count desc, task_id:\n got %v\nwant %v", got, want)
	}
	// Past the last row: none, and nothing more.
	q = &query.Select{Schema: Schema, Table: "agent_errors", Items: []query.Item{{Star: true}}, Limit: 5, Offset: 100}
	if res, err := db.Select(ctx, q); err != nil || len(res.Rows) != 0 || res.Rows == nil || res.Truncated || res.Count != nil {
		t.Errorf("past the end: %+v %v", res, err)
	}
}

// TestSplitRows: the rows of a read are cut at the separator; a count
// that does not match the parts is an error, not rows cut in the wrong
// places.
func TestSplitRows(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want []string
	}{
		{"", 0, []string{}},
		{`{"a":1}`, 1, []string{`{"a":1}`}},
		{"{\"a\":1}\x1e{}\x1e[]", 3, []string{`{"a":1}`, `{}`, `[]`}},
	} {
		got, err := splitRows(tc.text, tc.n)
		if err != nil || len(got) != len(tc.want) {
			t.Fatalf("%q: %q %v", tc.text, got, err)
		}
		for i := range got {
			if string(got[i]) != tc.want[i] {
				t.Errorf("%q: row %d is %s", tc.text, i, got[i])
			}
		}
	}
	if _, err := splitRows("{\"a\":\"\x1e\"}", 1); err == nil || !strings.Contains(err.Error(), "2 parts") {
		t.Errorf("a separator inside a row: %v", err)
	}
}
