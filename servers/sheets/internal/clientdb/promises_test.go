package clientdb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// TestVersionSeesAPersonsEdit: an agent reads a client, a person changes a
// cell in the sheet (without touching updated_at), and the agent's update
// made on the strength of its read is refused.
func TestVersionSeesAPersonsEdit(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		read := must(e.db.Get(ctx, "CL-004", "client_id"))
		if read.Version == "" {
			t.Fatal("get_client gives no version")
		}
		for _, s := range must(e.db.List(ctx, "", 10)).Clients {
			if s.ClientID == "CL-004" && s.Version != read.Version {
				t.Errorf("list version %q, get version %q", s.Version, read.Version)
			}
		}
		if f := must(e.db.Search(ctx, clientdb.Query{Text: "meilin.chen@example.com", Limit: 5})); len(f.Clients) == 0 || f.Clients[0].Version != read.Version {
			t.Errorf("search version: %+v", f.Clients)
		}
		// A person changes the phone (row 5 is CL-004, column 4 phone).
		e.setCell("Clients", 5, 4, "+1-555-9999")
		_, err := e.db.UpdateIf(ctx, "CL-004", clientdb.Fields{Company: str("Lumen Bio")}, clientdb.Expect{Version: read.Version})
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Field != "expected_version" || !strings.Contains(me.Message, "phone") {
			t.Fatalf("update after a person's edit: %v", err)
		}
		if got := must(e.db.Get(ctx, "CL-004", "client_id")); got.Company != "Lumen Biotech" || got.Phone != "+1-555-9999" {
			t.Errorf("the refused update wrote: %+v", got)
		}
		// With the current version the update goes through, and the
		// version it returns is the one to use next.
		now := must(e.db.Get(ctx, "CL-004", "client_id"))
		res := must(e.db.UpdateIf(ctx, "CL-004", clientdb.Fields{Company: str("Lumen Bio")}, clientdb.Expect{Version: now.Version}))
		if res.Client.Company != "Lumen Bio" || res.Client.Version == now.Version {
			t.Errorf("update with the current version: %+v", res.Client)
		}
		if again := must(e.db.Get(ctx, "CL-004", "client_id")); again.Version != res.Client.Version {
			t.Errorf("version after the write %q, read again %q", res.Client.Version, again.Version)
		}
		if _, err := e.db.UpdateIf(ctx, "CL-004", clientdb.Fields{Phone: str("1")}, clientdb.Expect{Version: "not a version!"}); code(err) != mcperr.Validation {
			t.Errorf("a malformed version: %v", err)
		}
	})
}

// TestRowsWithoutID: a person adds a client row without a client_id; lists
// and searches show it (with its row) and create_client does not add a
// second client with its email.
func TestRowsWithoutID(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		e.setCell("Clients", 14, 2, "Nora Quist")
		e.setCell("Clients", 14, 3, "nora@example.com")
		p := must(e.db.List(ctx, "", 100))
		if len(p.RowsWithoutID) != 1 || p.RowsWithoutID[0].Row != 14 || p.RowsWithoutID[0].Email != "nora@example.com" || p.RowsWithoutID[0].Warning == "" {
			t.Errorf("list: rows without id %+v", p.RowsWithoutID)
		}
		if !strings.Contains(strings.Join(p.Warnings, "\n"), "row 14") {
			t.Errorf("list warnings %v", p.Warnings)
		}
		f := must(e.db.Search(ctx, clientdb.Query{Text: "nora", Limit: 10}))
		if len(f.RowsWithoutID) != 1 || f.RowsWithoutID[0].Row != 14 {
			t.Errorf("search: %+v", f)
		}
		if f := must(e.db.Search(ctx, clientdb.Query{Text: "hartford", Limit: 10})); len(f.RowsWithoutID) != 0 {
			t.Errorf("search for someone else lists the row: %+v", f.RowsWithoutID)
		}
		_, err := e.db.Create(ctx, clientdb.Fields{Name: str("Nora Quist"), Email: str("Nora@example.com")})
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Field != "email" || !strings.Contains(me.Message, "row 14") {
			t.Errorf("create with the email of a row without id: %v", err)
		}
		_, err = e.db.Update(ctx, "CL-004", clientdb.Fields{Email: str("nora@example.com")}, "")
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || !strings.Contains(me.Message, "row 14") {
			t.Errorf("update to the email of a row without id: %v", err)
		}
	})
}

// TestFlightIDReusedAndFutureFlights: a flight_id recorded with other
// details is a CONFLICT naming them; a flight in the future is refused.
func TestFlightIDReusedAndFutureFlights(t *testing.T) {
	today := time.Date(2025, 11, 20, 15, 0, 0, 0, time.UTC)
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		price := 1000.0
		in := clientdb.FlightInput{FlightID: "TRIP-9", Date: "2025-11-10", Route: "KTEB-KASE", Aircraft: "Citation X", Operator: "OP-001", Price: &price}
		must(e.db.AddFlight(ctx, "CL-001", in))
		if again := must(e.db.AddFlight(ctx, "CL-001", in)); !again.AlreadyRecorded {
			t.Errorf("the same flight again: %+v", again)
		}
		other := 2000.0
		diff := in
		diff.Route, diff.Price = "KTEB-KMIA", &other
		_, err := e.db.AddFlight(ctx, "CL-001", diff)
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Field != "flight_details.flight_id" ||
			!strings.Contains(me.Message, "route") || !strings.Contains(me.Message, "price") || strings.Contains(me.Message, "aircraft") {
			t.Errorf("a reused flight_id with other details: %v", err)
		}
		for _, d := range []string{"2025-11-23", "2026-01-01"} {
			_, err = e.db.AddFlight(ctx, "CL-001", clientdb.FlightInput{Date: d, Route: "KTEB-KASE"})
			if me := mcpErr(err); me == nil || me.Code != mcperr.Validation || me.Field != "flight_details.date" {
				t.Errorf("a flight on %s: %v", d, err)
			}
		}
		// Tomorrow is allowed: somewhere it is already that day.
		if r := must(e.db.AddFlight(ctx, "CL-001", clientdb.FlightInput{Date: "2025-11-21", Route: "KTEB-KASE"})); *r.Client.History.LastFlightDate != "2025-11-21" {
			t.Errorf("tomorrow: %+v", r.Client.History)
		}
	}, func(o *clientdb.Options) { o.Now = func() time.Time { return today } })
}

// TestSearchByClientID: an exact client_id comes first, whatever its case.
func TestSearchByClientID(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		for _, q := range []string{"CL-003", "cl-003", " CL-003 "} {
			f := must(e.db.Search(ctx, clientdb.Query{Text: q, Limit: 10}))
			if len(f.Clients) == 0 || f.Clients[0].ClientID != "CL-003" {
				t.Errorf("search %q: %+v", q, f)
			}
		}
	})
}
