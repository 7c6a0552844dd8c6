package mcptest

import (
	"context"
	"strconv"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

type countIn struct {
	Offset int    `json:"offset,omitempty" mcp:"min=0"`
	Cursor string `json:"cursor,omitempty"`
	Step   int    `json:"step" mcp:"min=0"`
}

type countOut struct {
	Items      []int  `json:"items"`
	NextOffset *int   `json:"next_offset,omitempty"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// countTool pages through 0…9, step items at a time, by offset or by
// cursor; step 0 never moves on.
func countTool() kit.Tool {
	return kit.NewTool(kit.Tool{Name: "count", Title: "Count", Description: "Count to ten a page at a time.", Effect: kit.ReadOnly},
		func(_ context.Context, _ *kit.Call, in countIn) (countOut, error) {
			start := in.Offset
			if in.Cursor != "" {
				start, _ = strconv.Atoi(in.Cursor)
			}
			out := countOut{Items: []int{}}
			for i := start; i < min(start+max(in.Step, 1), 10); i++ {
				out.Items = append(out.Items, i)
			}
			if next := start + in.Step; next < 10 {
				out.NextOffset, out.NextCursor = &next, strconv.Itoa(next)
			}
			return out, nil
		})
}

func TestPages(t *testing.T) {
	s, err := kit.New(kit.Info{Name: "test"}, []kit.Tool{countTool()}, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewInProcess(t, s, "tester")
	byOffset := Pages(t, c, MinBudget, "count", map[string]any{"step": 4}, "offset", func(p countOut) (any, bool) { return Offset(p.NextOffset) }, 10)
	byCursor := Pages(t, c, MinBudget, "count", map[string]any{"step": 3}, "cursor", func(p countOut) (any, bool) { return Token(p.NextCursor) }, 10)
	for _, tc := range []struct {
		pages []countOut
		want  int
	}{{byOffset, 3}, {byCursor, 4}} {
		var all []int
		for _, p := range tc.pages {
			all = append(all, p.Items...)
		}
		if len(tc.pages) != tc.want || len(all) != 10 || all[0] != 0 || all[9] != 9 {
			t.Errorf("%d pages (want %d) of %v", len(tc.pages), tc.want, all)
		}
	}
	r := record(t, func(tb testing.TB) {
		Pages(tb, c, MinBudget, "count", map[string]any{"step": 0}, "offset", func(p countOut) (any, bool) { return Offset(p.NextOffset) }, 5)
	})
	if !r.fatal {
		t.Error("a continuation that never moves on passed")
	}
	r.has(t, "after 5 calls")
	if r := record(t, func(tb testing.TB) {
		Pages(tb, c, 10, "count", map[string]any{"step": 4}, "offset", func(p countOut) (any, bool) { return Offset(p.NextOffset) }, 10)
	}); !r.fatal {
		t.Error("a page over the budget passed")
	}
}
