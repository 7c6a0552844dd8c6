package clientdb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
)

// Client is one client's record, typed.
type Client struct {
	ClientID    string      `json:"client_id"`
	Name        string      `json:"name"`
	Email       string      `json:"email"`
	Phone       string      `json:"phone"`
	Company     string      `json:"company"`
	Preferences Preferences `json:"preferences"`
	History     History     `json:"history"`
	// VIPStatus is standard, silver, gold or platinum; an empty cell is
	// standard.
	VIPStatus string `json:"vip_status"`
	// CreatedAt and UpdatedAt are RFC 3339 timestamps in UTC; null when the
	// cell is empty or not a time.
	CreatedAt *string `json:"created_at"`
	UpdatedAt *string `json:"updated_at"`
	// Version identifies the row's cells as read: any change to any of
	// them, by this server or by a person in the sheet, gives another.
	Version string `json:"version"`
	// Problems lists cells that could not be read as their column's type.
	Problems []Problem `json:"problems,omitempty"`
}

// Preferences of a client. aircraft_category is the sheet's
// aircraft_preference column, catering its catering_preference column.
type Preferences struct {
	AircraftCategory string `json:"aircraft_category"`
	Catering         string `json:"catering"`
	SpecialNeeds     string `json:"special_needs"`
}

// History is the client's flying record.
type History struct {
	TotalFlights int `json:"total_flights"`
	// LastFlightDate is YYYY-MM-DD, or null.
	LastFlightDate     *string  `json:"last_flight_date"`
	PreferredOperators []string `json:"preferred_operators"`
}

// Summary is a client in a list: enough to choose, not the whole record.
type Summary struct {
	ClientID       string  `json:"client_id"`
	Name           string  `json:"name"`
	Email          string  `json:"email"`
	Company        string  `json:"company"`
	VIPStatus      string  `json:"vip_status"`
	TotalFlights   int     `json:"total_flights"`
	LastFlightDate *string `json:"last_flight_date"`
	Version        string  `json:"version"`
}

// Problem is a cell whose text does not fit its column.
type Problem struct {
	Column  string `json:"column"`
	Value   string `json:"value"`
	Problem string `json:"problem"`
}

// VIPStatuses are the tiers, lowest first.
var VIPStatuses = []string{"standard", "silver", "gold", "platinum"}

// AircraftCategories are the aircraft_preference values agents may write.
var AircraftCategories = []string{"light", "midsize", "heavy", "ultra-long-range"}

// serialEpoch is day 0 of spreadsheet serial dates.
var serialEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

func fromSerial(n float64) time.Time {
	return serialEpoch.Add(time.Duration(math.Round(n*24*float64(time.Hour)/float64(time.Millisecond))) * time.Millisecond)
}

// asInt reads a count: a whole number, or text that is one; empty is 0.
func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case nil:
		return 0, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e9 {
			return int(x), true
		}
		return 0, false
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0, true
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1e9 {
			return 0, false
		}
		return int(f), true
	}
	return 0, false
}

// dateLayouts are the date forms read from text cells.
var dateLayouts = []string{"2006-01-02", "2006/01/02", time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// asDate reads a date: a date cell (serial number) or YYYY-MM-DD text.
func asDate(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case float64:
		return fromSerial(x).Format("2006-01-02"), true
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return "", true
		}
		for _, l := range dateLayouts {
			if t, err := time.Parse(l, s); err == nil {
				return t.Format("2006-01-02"), true
			}
		}
	}
	return "", false
}

// asTime reads a timestamp: a date-time cell or RFC 3339 text.
func asTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case float64:
		return fromSerial(x), true
	case string:
		s := strings.TrimSpace(x)
		for _, l := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
			if t, err := time.Parse(l, s); err == nil {
				return t.UTC(), true
			}
		}
	}
	return time.Time{}, false
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// splitList reads a comma-separated cell.
func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// client types row i of the Clients tab.
func (c *clients) client(i int) Client {
	t := c.table
	var probs []Problem
	bad := func(col, problem string) {
		probs = append(probs, Problem{Column: col, Value: workbook.Text(t.cell(i, col)), Problem: problem})
	}
	r := Client{
		ClientID: t.text(i, "client_id"),
		Name:     t.text(i, "name"),
		Email:    t.text(i, "email"),
		Phone:    t.text(i, "phone"),
		Company:  t.text(i, "company"),
		Preferences: Preferences{
			AircraftCategory: t.text(i, "aircraft_preference"),
			Catering:         t.text(i, "catering_preference"),
			SpecialNeeds:     t.text(i, "special_needs"),
		},
		VIPStatus: strings.ToLower(t.text(i, "vip_status")),
	}
	if r.VIPStatus == "" {
		r.VIPStatus = "standard"
	}
	if n, ok := asInt(t.cell(i, "total_flights")); ok {
		r.History.TotalFlights = n
	} else {
		bad("total_flights", "not a whole number")
	}
	if d, ok := asDate(t.cell(i, "last_flight_date")); !ok {
		bad("last_flight_date", "not a date (YYYY-MM-DD)")
	} else if d != "" {
		r.History.LastFlightDate = &d
	}
	r.History.PreferredOperators = splitList(t.text(i, "preferred_operators"))
	for _, col := range []string{"created_at", "updated_at"} {
		v := t.cell(i, col)
		if workbook.Text(v) == "" {
			continue
		}
		tm, ok := asTime(v)
		if !ok {
			bad(col, "not a timestamp (RFC 3339)")
			continue
		}
		s := formatTime(tm)
		if col == "created_at" {
			r.CreatedAt = &s
		} else {
			r.UpdatedAt = &s
		}
	}
	r.Problems = probs
	r.Version = c.version(i)
	return r
}

// versionPrefix marks a version token, so that a timestamp or some other
// value passed in its place is told apart.
const versionPrefix = "v1:"

// version identifies the cells of row i in the record's columns, by column
// name, so that moving the row or the columns leaves it as it is and a
// change to any cell does not. It is a hash of them all, then one byte of
// a hash of each column: the first decides whether the row changed, the
// others tell (nearly always) which columns did.
func (c *clients) version(i int) string {
	all := sha256.New()
	per := make([]byte, len(Columns))
	for k, col := range Columns {
		v := workbook.Text(c.cell(i, col))
		fmt.Fprintf(all, "%s=%s\x1e", col, v)
		one := sha256.Sum256([]byte(col + "=" + v))
		per[k] = one[0]
	}
	return versionPrefix + hex.EncodeToString(all.Sum(nil)[:8]) + "." + hex.EncodeToString(per)
}

var versionRE = regexp.MustCompile(`^v1:[0-9a-f]{16}\.[0-9a-f]+$`)

// changedColumns names the columns whose part of two versions differs.
func changedColumns(was, now string) []string {
	a, _ := hex.DecodeString(was[strings.IndexByte(was, '.')+1:])
	b, _ := hex.DecodeString(now[strings.IndexByte(now, '.')+1:])
	var out []string
	for k, col := range Columns {
		if k < len(a) && k < len(b) && a[k] != b[k] {
			out = append(out, col)
		}
	}
	return out
}

func (r Client) summary() Summary {
	return Summary{ClientID: r.ClientID, Name: r.Name, Email: r.Email, Company: r.Company, VIPStatus: r.VIPStatus,
		TotalFlights: r.History.TotalFlights, LastFlightDate: r.History.LastFlightDate, Version: r.Version}
}

// Flight is one row of the flight history.
type Flight struct {
	FlightID string   `json:"flight_id"`
	ClientID string   `json:"client_id"`
	Date     string   `json:"date"`
	Route    string   `json:"route"`
	Aircraft string   `json:"aircraft"`
	Operator string   `json:"operator"`
	Price    *float64 `json:"price"`
	// ClientFlightNumber is the client's total_flights including this
	// flight, when it was recorded.
	ClientFlightNumber int    `json:"client_flight_number"`
	RecordedAt         string `json:"recorded_at"`
	row                int
}

func (h *history) flight(i int) Flight {
	f := Flight{FlightID: h.text(i, "flight_id"), ClientID: h.text(i, "client_id"), Route: h.text(i, "route"),
		Aircraft: h.text(i, "aircraft"), Operator: h.text(i, "operator"), row: sheetRow(i)}
	f.Date, _ = asDate(h.cell(i, "date"))
	if p, ok := h.cell(i, "price").(float64); ok {
		f.Price = &p
	} else if p, err := strconv.ParseFloat(strings.ReplaceAll(h.text(i, "price"), ",", ""), 64); err == nil {
		f.Price = &p
	}
	f.ClientFlightNumber, _ = asInt(h.cell(i, "client_flight_number"))
	if t, ok := asTime(h.cell(i, "recorded_at")); ok {
		f.RecordedAt = formatTime(t)
	}
	return f
}
