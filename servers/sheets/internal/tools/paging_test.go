package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// bigSheet adds 40 clients with long names, companies and needs (with
// what JSON escapes) to the sample's 12.
func bigSheet(t *testing.T, c *mcptest.Client) {
	t.Helper()
	long := strings.Repeat(`"Q" <&> `, 20)
	for i := range 40 {
		var out struct{ Client struct{ ClientID string } }
		mcptest.Structured(t, c.Call("create_client", map[string]any{"name": fmt.Sprintf("Big %02d %s", i, long), "email": fmt.Sprintf("big%02d@example.com", i),
			"company": "Big Co " + long, "special_needs": strings.Repeat("wheelchair <lift> & \"oxygen\" ", 30)}), &out)
	}
}

func TestListAndSearchPageWithinTheBudget(t *testing.T) {
	s := localServer(t)
	s.maxResult = mcptest.MinBudget
	c := s.connect(t, nil, "")
	bigSheet(t, c)

	seen := map[string]bool{}
	cursor, pages, cut := "", 0, false
	for {
		var page struct {
			Clients []struct {
				ClientID string `json:"client_id"`
			} `json:"clients"`
			Total      int    `json:"total"`
			NextCursor string `json:"next_cursor"`
			Truncated  bool   `json:"truncated"`
		}
		args := map[string]any{"limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		mcptest.Sized(t, c, mcptest.MinBudget, "list_clients", args, &page)
		pages++
		cut = cut || page.Truncated
		for _, cl := range page.Clients {
			if seen[cl.ClientID] {
				t.Errorf("%s twice", cl.ClientID)
			}
			seen[cl.ClientID] = true
		}
		if page.NextCursor == "" || pages > 52 {
			break
		}
		cursor = page.NextCursor
	}
	if len(seen) != 52 || !cut {
		t.Errorf("list_clients: %d of 52 clients in %d pages (cut %v)", len(seen), pages, cut)
	}
	t.Logf("list_clients: 52 clients in %d results of at most %d bytes", pages, mcptest.MinBudget)

	seen = map[string]bool{}
	offset, pages := 0, 0
	for {
		var found struct {
			Clients []struct {
				ClientID string `json:"client_id"`
			} `json:"clients"`
			Matches    int  `json:"total_matches"`
			Truncated  bool `json:"truncated"`
			NextOffset *int `json:"next_offset"`
		}
		mcptest.Sized(t, c, mcptest.MinBudget, "search_clients", map[string]any{"query": "big", "limit": 100, "offset": offset}, &found)
		pages++
		for _, cl := range found.Clients {
			seen[cl.ClientID] = true
		}
		if found.Matches != 40 || found.Truncated != (found.NextOffset != nil) {
			t.Fatalf("search at %d: %d matches, truncated %v, next %v", offset, found.Matches, found.Truncated, found.NextOffset)
		}
		if found.NextOffset == nil || pages > 40 {
			break
		}
		offset = *found.NextOffset
	}
	if len(seen) != 40 || pages < 2 {
		t.Errorf("search_clients: %d of 40 clients in %d pages", len(seen), pages)
	}
	t.Logf("search_clients: 40 matches in %d results of at most %d bytes", pages, mcptest.MinBudget)
}

func TestReadSheetPagesWithinTheBudget(t *testing.T) {
	for name, mk := range backends() {
		t.Run(name, func(t *testing.T) {
			s := mk(t)
			s.maxResult = mcptest.MinBudget
			c := s.connect(t, nil, "")
			bigSheet(t, c)
			var rows []int
			offset, pages, cut := 0, 0, false
			for {
				var page struct {
					Range string `json:"range"`
					Rows  []struct {
						Row int `json:"row"`
					} `json:"rows"`
					NextOffset *int `json:"next_offset"`
					Truncated  bool `json:"truncated"`
				}
				mcptest.Sized(t, c, mcptest.MinBudget, "read_sheet", map[string]any{"range": "Clients", "limit": 500, "offset": offset}, &page)
				pages++
				cut = cut || page.Truncated
				for _, r := range page.Rows {
					rows = append(rows, r.Row)
				}
				if page.Truncated && (page.NextOffset == nil || !strings.HasSuffix(page.Range, fmt.Sprint(page.Rows[len(page.Rows)-1].Row))) {
					t.Errorf("a cut page: range %s, last row %d, next %v", page.Range, page.Rows[len(page.Rows)-1].Row, page.NextOffset)
				}
				if page.NextOffset == nil || pages > 52 {
					break
				}
				offset = *page.NextOffset
			}
			if len(rows) != 52 || rows[0] != 2 || rows[51] != 53 || !cut {
				t.Errorf("read_sheet: %d rows (%v) in %d pages (cut %v)", len(rows), rows, pages, cut)
			}
			for i := 1; i < len(rows); i++ {
				if rows[i] != rows[i-1]+1 {
					t.Errorf("row %d follows row %d", rows[i], rows[i-1])
				}
			}
			t.Logf("%s: read_sheet: 52 rows in %d results of at most %d bytes", name, pages, mcptest.MinBudget)
		})
	}
}

func TestUpdateNeedsAField(t *testing.T) {
	c := localServer(t).connect(t, nil, "")
	b := mcptest.FailCode(t, c.Call("update_client", map[string]any{"client_id": "CL-001", "updates": map[string]any{}}), mcperr.Validation)
	if b.Data.Field != "updates" {
		t.Errorf("%+v", b)
	}
}
