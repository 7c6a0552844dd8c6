package tools_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// largeRows and largeCell: a table far over the result budget (1000 rows
// of 20 KB is about 20 MB, 40 MB as sent).
const (
	largeRows = 1000
	largeCell = 20 << 10
)

// fillLarge writes largeRows rows of agent_type "bulk" into agent_errors,
// each with a stack_trace of largeCell bytes, through supabase_insert in
// batches, as an agent (or the TypeScript check) would.
func fillLarge(t *testing.T, call func(args map[string]any) map[string]any) {
	t.Helper()
	const batch = 100
	for from := 0; from < largeRows; from += batch {
		var data []any
		for i := from; i < from+batch; i++ {
			trace := strings.Repeat(fmt.Sprintf("frame %04d at handler (bulk.ts:%d)\n", i, i), largeCell)[:largeCell]
			data = append(data, cells("agent_type", "bulk", "error_type", "large", "task_id", fmt.Sprintf("bulk-%04d", i), "stack_trace", trace))
		}
		r := call(map[string]any{"table": "agent_errors", "data": data, "select": "task_id"})
		if r["row_count"] != float64(batch) {
			t.Fatalf("insert from %d: %v", from, r["row_count"])
		}
	}
}

// TestLargeResultPages: a read of 1000 rows of 20 KB returns only the rows
// that fit the result budget, each page within it, with truncated and
// next_offset; following next_offset reads every row once, in order.
func TestLargeResultPages(t *testing.T) {
	e := testenv.Embedded(t)
	c := client(t, e)
	fillLarge(t, func(args map[string]any) map[string]any { return call(t, c, "supabase_insert", args) })

	args := map[string]any{"table": "agent_errors", "select": "task_id, stack_trace", "filters": where(eq("agent_type", "bulk")),
		"orderBy": asc("task_id"), "limit": largeRows}
	type page struct {
		Rows []struct {
			TaskID     string `json:"task_id"`
			StackTrace string `json:"stack_trace"`
		} `json:"rows"`
		RowCount   int  `json:"row_count"`
		Truncated  bool `json:"truncated"`
		NextOffset *int `json:"next_offset"`
	}
	next, pages := 0, 0
	for {
		args["offset"] = next
		res := c.Call("supabase_query", args)
		if pages < 2 {
			// The first pages get every check: size as sent, rows
			// fenced in the text and the same in structuredContent.
			raw, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > kit.DefaultMaxResultBytes {
				t.Fatalf("page at offset %d is %d bytes, over the budget of %d", next, len(raw), kit.DefaultMaxResultBytes)
			}
			ok(t, res)
		}
		var p page
		mcptest.Structured(t, res, &p)
		pages++
		if len(p.Rows) == 0 || p.RowCount != len(p.Rows) {
			t.Fatalf("page at offset %d: %d rows, row_count %v", next, len(p.Rows), p.RowCount)
		}
		for i, row := range p.Rows {
			if want := fmt.Sprintf("bulk-%04d", next+i); row.TaskID != want || len(row.StackTrace) != largeCell {
				t.Fatalf("row %d of the page at offset %d: task_id %v, stack_trace of %d bytes", i, next, row.TaskID, len(row.StackTrace))
			}
		}
		if next+len(p.Rows) == largeRows {
			if p.Truncated || p.NextOffset != nil {
				t.Fatalf("last page: truncated %v, a next_offset: %v", p.Truncated, p.NextOffset != nil)
			}
			break
		}
		if !p.Truncated || p.NextOffset == nil || *p.NextOffset != next+len(p.Rows) {
			t.Fatalf("page at offset %d of %d rows: truncated %v, next_offset %s", next, len(p.Rows), p.Truncated, offsetText(p.NextOffset))
		}
		next += len(p.Rows)
		if pages == 2 {
			// The budget, not the limit, cuts every page: a smaller
			// limit, still above a page's rows, reads the rest with
			// less work for the database (a page of 1000 rows reads 20 MB).
			args["limit"] = 4 * len(p.Rows)
		}
	}
	if pages < 2 {
		t.Fatalf("%d rows of %d bytes came in %d page(s)", largeRows, largeCell, pages)
	}
}

// TestSmallBudget: under the smallest result budget, a row wider than the
// budget is refused naming select; a write whose returned rows do not fit
// still writes them all and says it left rows out; a function's rows are
// cut to fit.
func TestSmallBudget(t *testing.T) {
	e := testenv.Embedded(t)
	s, err := kit.New(kit.Info{Name: "supabase"}, tools.All(deps(t, e)), kit.Options{Limits: kit.Limits{MaxResultBytes: 16 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "")
	wide := strings.Repeat("w", largeCell)
	r := call(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(
		cells("agent_type", "wide", "error_type", "a", "task_id", "w1", "stack_trace", wide),
		cells("agent_type", "wide", "error_type", "b", "task_id", "w2", "stack_trace", wide))})
	if r["row_count"] != 2.0 || len(rowsOf(t, r)) != 0 || r["truncated"] != true {
		t.Errorf("insert of wide rows: row_count %v, %d rows, truncated %v", r["row_count"], len(rowsOf(t, r)), r["truncated"])
	}
	b := failCode(t, c, "supabase_query", map[string]any{"table": "agent_errors", "filters": where(eq("agent_type", "wide"))}, mcperr.Validation)
	if b.Data.Field != "select" {
		t.Errorf("a row over the budget: field %q (%s)", b.Data.Field, b.Message)
	}
	r = call(t, c, "supabase_query", map[string]any{"table": "agent_errors", "select": "task_id", "filters": where(eq("agent_type", "wide")), "orderBy": asc("task_id")})
	if got := column(rowsOf(t, r), "task_id"); !reflect.DeepEqual(got, strs("w1", "w2")) || r["truncated"] != nil {
		t.Errorf("narrow read: %v", r)
	}
	r = call(t, c, "supabase_update", map[string]any{"table": "agent_errors", "filters": where(eq("agent_type", "wide")), "data": cells("error_type", "c")})
	if r["row_count"] != 2.0 || r["truncated"] != true {
		t.Errorf("update of wide rows: %v %v", r["row_count"], r["truncated"])
	}
	r = call(t, c, "supabase_delete", map[string]any{"table": "agent_errors", "filters": where(eq("agent_type", "wide"))})
	if r["row_count"] != 2.0 || r["truncated"] != true {
		t.Errorf("delete of wide rows: %v %v", r["row_count"], r["truncated"])
	}
	var quotes []any
	for i := range 100 {
		quotes = append(quotes, map[string]any{"id": fmt.Sprintf("quote-%03d", i), "total_price_usd": 40000 + i, "safety_rating": 4.5})
	}
	r = call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", quotes)})
	if n := len(rowsOf(t, r)); n == 0 || n >= 100 || r["row_count"] != float64(n) || r["truncated"] != true {
		t.Errorf("scores under a small budget: %d rows, row_count %v, truncated %v", n, r["row_count"], r["truncated"])
	}
}

func offsetText(p *int) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}
