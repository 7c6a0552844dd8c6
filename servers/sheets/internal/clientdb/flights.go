package clientdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// FlightInput is a completed flight to record.
type FlightInput struct {
	// FlightID identifies the flight (a booking or trip reference). Empty:
	// derived from the other fields, so the same details give the same id.
	FlightID string
	Date     string // YYYY-MM-DD
	Route    string
	Aircraft string
	Operator string
	Price    *float64
}

var flightIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$`)

// futureSkew is how far past today (UTC) a flight's date may be: it is
// already tomorrow in places east of UTC.
const futureSkew = 24 * time.Hour

func (in *FlightInput) validate(now time.Time) error {
	in.FlightID, in.Date, in.Route = strings.TrimSpace(in.FlightID), strings.TrimSpace(in.Date), strings.TrimSpace(in.Route)
	in.Aircraft, in.Operator = strings.TrimSpace(in.Aircraft), strings.TrimSpace(in.Operator)
	if in.FlightID != "" && !flightIDRE.MatchString(in.FlightID) {
		return mcperr.Invalid("flight_details.flight_id", in.FlightID, "1–64 letters, digits and . _ : / -", "flight_id %q is not a usable reference", in.FlightID)
	}
	d, err := time.Parse("2006-01-02", in.Date)
	if err != nil {
		return mcperr.Invalid("flight_details.date", in.Date, "a date YYYY-MM-DD", "%q is not a date", in.Date)
	}
	if latest := now.UTC().Add(futureSkew).Format("2006-01-02"); in.Date > latest {
		return mcperr.Invalid("flight_details.date", in.Date, "the date of a completed flight: "+latest+" or earlier",
			"flight_details.date %s is in the future; only completed flights are recorded (a planned flight would count in total_flights and last_flight_date before it happened)", d.Format("2006-01-02"))
	}
	if in.Route == "" {
		return mcperr.Invalid("flight_details.route", in.Route, "a route such as KTEB-KVNY", "the flight needs a route")
	}
	for name, v := range map[string]string{"route": in.Route, "aircraft": in.Aircraft, "operator": in.Operator} {
		if err := checkText("flight_details."+name, v); err != nil {
			return err
		}
	}
	if in.Price != nil && (*in.Price < 0 || math.IsInf(*in.Price, 0) || math.IsNaN(*in.Price)) {
		return mcperr.Invalid("flight_details.price", *in.Price, "a price of 0 or more", "the price cannot be negative")
	}
	return nil
}

// derivedID names a flight by its details: the same client, date, route,
// aircraft, operator and price give the same id.
func derivedID(clientID string, in FlightInput) string {
	price := ""
	if in.Price != nil {
		price = strconv.FormatFloat(*in.Price, 'f', -1, 64)
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{strings.ToUpper(clientID), in.Date, strings.ToUpper(in.Route),
		in.Aircraft, in.Operator, price}, "\x1f")))
	return "FL-" + strings.ToUpper(hex.EncodeToString(sum[:6]))
}

// Recorded is the result of AddFlight.
type Recorded struct {
	Flight Flight `json:"flight"`
	Client Client `json:"client"`
	// AlreadyRecorded: the flight was in the history before this call (a
	// repeated call); it was not added again.
	AlreadyRecorded bool `json:"already_recorded"`
	// TotalsUpdated: this call changed total_flights/last_flight_date.
	TotalsUpdated bool     `json:"totals_updated"`
	Notes         []string `json:"notes,omitempty"`
}

// AddFlight records a completed flight of client id as one logical
// operation in two writes: the flight is appended to the history tab, then
// the client's total_flights and last_flight_date are brought up to date.
// If the second write fails, the error says the flight is recorded and the
// totals are not; calling again with the same flight records nothing new
// and completes the totals (as does any later flight of the client).
func (db *DB) AddFlight(ctx context.Context, id string, in FlightInput) (Recorded, error) {
	if err := in.validate(db.opt.Now()); err != nil {
		return Recorded{}, err
	}
	unlock, err := db.lock(ctx)
	if err != nil {
		return Recorded{}, err
	}
	defer unlock()
	v, err := db.wb.Read(ctx, []a1.Range{a1.Tab(db.opt.ClientsTab), a1.Tab(db.opt.HistoryTab)}, workbook.DatesSerial)
	if err != nil {
		return Recorded{}, err
	}
	cl, err := db.parseClients(v[0])
	if err != nil {
		return Recorded{}, err
	}
	hist, err := db.parseHistory(v[1])
	if err != nil {
		return Recorded{}, err
	}
	ci, err := cl.locate(id)
	if err != nil {
		return Recorded{}, err
	}
	id = cl.text(ci, "client_id")
	total, ok := asInt(cl.cell(ci, "total_flights"))
	if !ok {
		return Recorded{}, mcperr.New(mcperr.Conflict, "client %s's total_flights cell holds %q, not a whole number; correct it in the sheet first",
			id, cl.text(ci, "total_flights")).WithRetryable(false)
	}
	if in.FlightID == "" {
		in.FlightID = derivedID(id, in)
	}
	res := Recorded{}
	flight, recordedMax, err := hist.find(id, in.FlightID)
	if err != nil {
		return Recorded{}, err
	}
	if flight != nil {
		if diff := flight.differsFrom(in); len(diff) > 0 {
			e := mcperr.New(mcperr.Conflict, "flight_id %s is already recorded for client %s (tab %s, row %d) with another %s; nothing was written. "+
				"If this is another flight, give it its own flight_id; if the record is wrong, a person must correct row %d",
				in.FlightID, id, hist.tab, flight.row, strings.Join(diff, ", "), flight.row)
			e.Field, e.Value = "flight_details.flight_id", in.FlightID
			return Recorded{}, e
		}
		res.AlreadyRecorded = true
	} else {
		f, note, err := db.appendFlight(ctx, hist, id, in, max(total, recordedMax)+1)
		if err != nil {
			return Recorded{}, err
		}
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		flight = f
	}
	res.Flight = *flight

	// The totals: at least every recorded flight's number; the latest date.
	target, lastDate := max(total, flight.ClientFlightNumber), flight.Date
	for j := range hist.rows {
		if strings.EqualFold(hist.text(j, "client_id"), id) {
			f := hist.flight(j)
			target = max(target, f.ClientFlightNumber)
			lastDate = max(lastDate, f.Date)
		}
	}
	w, err := db.writeClient(ctx, id, func(c *clients, i int) (map[string]any, error) {
		out := map[string]any{}
		if n, ok := asInt(c.cell(i, "total_flights")); !ok || n < target {
			out["total_flights"] = target
		}
		if d, ok := asDate(c.cell(i, "last_flight_date")); !ok || d < lastDate {
			out["last_flight_date"] = lastDate
		}
		return out, nil
	}, 0)
	res.Notes = append(res.Notes, w.notes...)
	if err != nil {
		e := annotate(err, "flight %s is recorded in tab %s (row %d), but client %s's totals were NOT updated (total_flights should become %d, last_flight_date %s). "+
			"Call add_flight_history again with the same flight: it will not record the flight twice and will update the totals",
			flight.FlightID, db.opt.HistoryTab, flight.row, id, target, lastDate)
		e.Value = map[string]any{"flight_id": flight.FlightID, "written": []string{a1.Row(db.opt.HistoryTab, flight.row).String()},
			"not_written": []string{"total_flights", "last_flight_date", "updated_at"}}
		return Recorded{}, e
	}
	res.Client, res.TotalsUpdated = w.client, w.wrote
	return res, nil
}

// differsFrom names the details in which the recorded flight f and in
// differ (as the sheet holds them: a route in any case is the same route).
func (f *Flight) differsFrom(in FlightInput) []string {
	var out []string
	if f.Date != in.Date {
		out = append(out, fmt.Sprintf("date (recorded %s, given %s)", f.Date, in.Date))
	}
	if !strings.EqualFold(f.Route, in.Route) {
		out = append(out, fmt.Sprintf("route (recorded %q, given %q)", f.Route, in.Route))
	}
	if f.Aircraft != in.Aircraft {
		out = append(out, fmt.Sprintf("aircraft (recorded %q, given %q)", f.Aircraft, in.Aircraft))
	}
	if f.Operator != in.Operator {
		out = append(out, fmt.Sprintf("operator (recorded %q, given %q)", f.Operator, in.Operator))
	}
	price := func(p *float64) string {
		if p == nil {
			return "none"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	if price(f.Price) != price(in.Price) {
		out = append(out, fmt.Sprintf("price (recorded %s, given %s)", price(f.Price), price(in.Price)))
	}
	return out
}

// find returns client id's flight fid if the history has it, and the
// highest client_flight_number of the client's flights. A flight id that
// belongs to another client is a CONFLICT.
func (h *history) find(id, fid string) (*Flight, int, error) {
	var found *Flight
	highest := 0
	for j := range h.rows {
		sameClient := strings.EqualFold(h.text(j, "client_id"), id)
		if sameClient {
			n, _ := asInt(h.cell(j, "client_flight_number"))
			highest = max(highest, n)
		}
		if h.text(j, "flight_id") != fid {
			continue
		}
		if !sameClient {
			e := mcperr.New(mcperr.Conflict, "flight_id %s is already recorded for client %s (tab %s, row %d)", fid, h.text(j, "client_id"), h.tab, sheetRow(j))
			e.Field, e.Value = "flight_details.flight_id", fid
			return nil, 0, e
		}
		f := h.flight(j)
		found = &f
	}
	return found, highest, nil
}

// appendFlight appends the flight's row. When the append fails, the history
// is read again to learn whether it landed all the same.
func (db *DB) appendFlight(ctx context.Context, hist *history, id string, in FlightInput, number int) (*Flight, string, error) {
	f := Flight{FlightID: in.FlightID, ClientID: id, Date: in.Date, Route: in.Route, Aircraft: in.Aircraft,
		Operator: in.Operator, Price: in.Price, ClientFlightNumber: number, RecordedAt: db.stamp()}
	set := map[string]any{"flight_id": f.FlightID, "client_id": id, "date": f.Date, "route": f.Route,
		"aircraft": f.Aircraft, "operator": f.Operator, "client_flight_number": number, "recorded_at": f.RecordedAt, "price": ""}
	if f.Price != nil {
		set["price"] = *f.Price
	}
	landed, err := db.wb.Append(ctx, hist.tab, hist.rowValues(set))
	if err == nil {
		if landed.StartCol != 1 {
			return nil, "", db.misplaced(ctx, landed, hist.tab)
		}
		f.row = landed.StartRow
		return &f, "", nil
	}
	report := func(e *mcperr.Error, written string) *mcperr.Error {
		e.Value = map[string]any{"flight_id": f.FlightID, "written": written, "not_written": []string{"total_flights", "last_flight_date", "updated_at"}}
		return e
	}
	v, rerr := db.wb.Read(ctx, []a1.Range{a1.Tab(hist.tab)}, workbook.DatesSerial)
	var again *history
	if rerr == nil {
		again, rerr = db.parseHistory(v[0])
	}
	if rerr != nil {
		return nil, "", report(settled(annotate(err, "whether flight %s was recorded is unknown: the append failed and reading tab %s to check failed too (%s); client %s's totals were not changed. "+
			"Calling add_flight_history again with the same flight is safe: it records the flight at most once, then updates the totals",
			f.FlightID, hist.tab, mcperr.Wrap(rerr).Message, id)), "unknown")
	}
	got, _, ferr := again.find(id, f.FlightID)
	if ferr != nil || got == nil {
		return nil, "", report(settled(annotate(err, "nothing was written: flight %s was not recorded and client %s's totals are unchanged", f.FlightID, id)), "nothing")
	}
	return got, "the answer to the append was lost, but the history shows the flight", nil
}
