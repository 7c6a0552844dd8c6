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

	type listPage struct {
		Clients []struct {
			ClientID string `json:"client_id"`
		} `json:"clients"`
		Total      int    `json:"total"`
		NextCursor string `json:"next_cursor"`
		Truncated  bool   `json:"truncated"`
	}
	pages := mcptest.Pages(t, c, mcptest.MinBudget, "list_clients", map[string]any{"limit": 100},
		"cursor", func(p listPage) (any, bool) { return mcptest.Token(p.NextCursor) }, 53)
	seen, cut := map[string]bool{}, false
	for _, page := range pages {
		cut = cut || page.Truncated
		for _, cl := range page.Clients {
			if seen[cl.ClientID] {
				t.Errorf("%s twice", cl.ClientID)
			}
			seen[cl.ClientID] = true
		}
	}
	if len(seen) != 52 || !cut {
		t.Errorf("list_clients: %d of 52 clients in %d pages (cut %v)", len(seen), len(pages), cut)
	}
	t.Logf("list_clients: 52 clients in %d results of at most %d bytes", len(pages), mcptest.MinBudget)

	type searchPage struct {
		Clients []struct {
			ClientID string `json:"client_id"`
		} `json:"clients"`
		Matches    int  `json:"total_matches"`
		Truncated  bool `json:"truncated"`
		NextOffset *int `json:"next_offset"`
	}
	found := mcptest.Pages(t, c, mcptest.MinBudget, "search_clients", map[string]any{"query": "big", "limit": 100, "offset": 0},
		"offset", func(p searchPage) (any, bool) { return mcptest.Offset(p.NextOffset) }, 41)
	seen, offset := map[string]bool{}, 0
	for _, page := range found {
		for _, cl := range page.Clients {
			seen[cl.ClientID] = true
		}
		if page.Matches != 40 || page.Truncated != (page.NextOffset != nil) {
			t.Fatalf("search at %d: %d matches, truncated %v, next %v", offset, page.Matches, page.Truncated, page.NextOffset)
		}
		if page.NextOffset != nil {
			offset = *page.NextOffset
		}
	}
	if len(seen) != 40 || len(found) < 2 {
		t.Errorf("search_clients: %d of 40 clients in %d pages", len(seen), len(found))
	}
	t.Logf("search_clients: 40 matches in %d results of at most %d bytes", len(found), mcptest.MinBudget)
}

func TestReadSheetPagesWithinTheBudget(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		s.maxResult = mcptest.MinBudget
		c := s.connect(t, nil, "")
		bigSheet(t, c)
		type page struct {
			Range string `json:"range"`
			Rows  []struct {
				Row int `json:"row"`
			} `json:"rows"`
			NextOffset *int `json:"next_offset"`
			Truncated  bool `json:"truncated"`
		}
		pages := mcptest.Pages(t, c, mcptest.MinBudget, "read_sheet", map[string]any{"range": "Clients", "limit": 500, "offset": 0},
			"offset", func(p page) (any, bool) { return mcptest.Offset(p.NextOffset) }, 53)
		var rows []int
		cut := false
		for _, p := range pages {
			cut = cut || p.Truncated
			for _, r := range p.Rows {
				rows = append(rows, r.Row)
			}
			if p.Truncated && (p.NextOffset == nil || !strings.HasSuffix(p.Range, fmt.Sprint(p.Rows[len(p.Rows)-1].Row))) {
				t.Errorf("a cut page: range %s, last row %d, next %v", p.Range, p.Rows[len(p.Rows)-1].Row, p.NextOffset)
			}
		}
		if len(rows) != 52 || rows[0] != 2 || rows[51] != 53 || !cut {
			t.Errorf("read_sheet: %d rows (%v) in %d pages (cut %v)", len(rows), rows, len(pages), cut)
		}
		for i := 1; i < len(rows); i++ {
			if rows[i] != rows[i-1]+1 {
				t.Errorf("row %d follows row %d", rows[i], rows[i-1])
			}
		}
		t.Logf("%s: read_sheet: 52 rows in %d results of at most %d bytes", t.Name(), len(pages), mcptest.MinBudget)
	})
}

func TestUpdateNeedsAField(t *testing.T) {
	c := localServer(t).connect(t, nil, "")
	b := mcptest.FailCode(t, c.Call("update_client", map[string]any{"client_id": "CL-001", "updates": map[string]any{}}), mcperr.Validation)
	if b.Data.Field != "updates" {
		t.Errorf("%+v", b)
	}
}
