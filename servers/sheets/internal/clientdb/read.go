package clientdb

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// MaxText bounds one text value.
const MaxText = 1000

var emailRE = regexp.MustCompile(`^[^\s@,;<>"]+@[^\s@,;<>"]+\.[^\s@,;<>"]+$`)

// Get returns the client whose field (email or client_id) is identifier;
// with field "" an identifier with @ is an e-mail address.
func (db *DB) Get(ctx context.Context, identifier, field string) (Client, error) {
	identifier = strings.TrimSpace(identifier)
	if field == "" {
		field = "client_id"
		if strings.Contains(identifier, "@") {
			field = "email"
		}
	}
	c, err := db.readClients(ctx)
	if err != nil {
		return Client{}, err
	}
	if field == "client_id" {
		i, err := c.locate(identifier)
		if err != nil {
			if e := mcperr.Wrap(err); e.Code == mcperr.NotFound {
				e.Field = "identifier"
			}
			return Client{}, err
		}
		return c.client(i), nil
	}
	var idx []int
	for i := range c.rows {
		if strings.EqualFold(c.text(i, "email"), identifier) {
			idx = append(idx, i)
		}
	}
	switch len(idx) {
	case 0:
		hint := ""
		if !strings.Contains(identifier, "@") {
			hint = "; to look up a client_id, set search_field to client_id"
		}
		return Client{}, notFound("identifier", identifier, "no client with email %q%s", identifier, hint)
	case 1:
		return c.client(idx[0]), nil
	}
	ids := make([]string, len(idx))
	for i, x := range idx {
		ids[i] = c.text(x, "client_id")
	}
	return Client{}, mcperr.New(mcperr.Conflict, "%d clients share the email %s (%s); look one up by client_id", len(idx), identifier, strings.Join(ids, ", "))
}

// Page is one page of clients.
type Page struct {
	Clients    []Summary `json:"clients"`
	Total      int       `json:"total"`
	NextCursor string    `json:"next_cursor,omitempty"`
	// Truncated: the page was ended before its limit to fit a result
	// budget (see Cut).
	Truncated bool     `json:"truncated"`
	Warnings  []string `json:"warnings,omitempty"`
	// RowsWithoutID are rows holding client data but no client_id; every
	// page lists them.
	RowsWithoutID []Unidentified `json:"rows_without_client_id,omitempty"`
}

// Cut keeps the first n clients of the page, for a caller whose result
// must fit a budget; NextCursor then goes on after the last one kept.
func (p *Page) Cut(n int) {
	if n >= len(p.Clients) || n < 1 {
		return
	}
	p.Clients, p.Truncated = p.Clients[:n], true
	p.NextCursor = p.Clients[n-1].ClientID
}

// Cut keeps the first n clients found, for a caller whose result must fit
// a budget; NextOffset then goes on after the last one kept.
func (f *Found) Cut(n, offset int) {
	if n >= len(f.Clients) {
		return
	}
	next := offset + n
	f.Clients, f.Truncated, f.NextOffset = f.Clients[:n], true, &next
}

// Unidentified is a row of the Clients tab with data but no client_id (a
// person added it by hand): no tool can read or change it by id until a
// person gives it one.
type Unidentified struct {
	Row     int    `json:"row"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Company string `json:"company"`
	Warning string `json:"warning"`
}

// maxUnidentified bounds the rows without client_id a result lists.
const maxUnidentified = 20

// unidentified describes rows i.
func (c *clients) unidentified(rows []int) []Unidentified {
	var out []Unidentified
	for _, i := range rows[:min(len(rows), maxUnidentified)] {
		out = append(out, Unidentified{Row: sheetRow(i), Name: c.text(i, "name"), Email: c.text(i, "email"), Company: c.text(i, "company"),
			Warning: fmt.Sprintf("row %d of tab %s has client data but no client_id, so it cannot be read or changed by id; a person should give it a client_id (or delete it)", sheetRow(i), c.tab)})
	}
	return out
}

// withoutID lists the rows with a value in a client column but no
// client_id.
func (c *clients) withoutID() []int {
	var out []int
	for i := range c.rows {
		if c.text(i, "client_id") != "" {
			continue
		}
		for _, col := range Columns {
			if c.text(i, col) != "" {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// List returns up to limit clients in client_id order after the client_id
// cursor; the order does not depend on how the sheet is sorted.
func (db *DB) List(ctx context.Context, after string, limit int) (Page, error) {
	c, err := db.readClients(ctx)
	if err != nil {
		return Page{}, err
	}
	all := c.withID()
	slices.SortStableFunc(all, func(a, b int) int { return naturalCompare(c.text(a, "client_id"), c.text(b, "client_id")) })
	p := Page{Clients: []Summary{}, Total: len(all), Warnings: c.warnings()}
	if no := c.withoutID(); len(no) > 0 {
		p.RowsWithoutID = c.unidentified(no)
		rows := make([]string, len(no))
		for k, i := range no {
			rows[k] = fmt.Sprint(sheetRow(i))
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d row(s) of tab %s have client data but no client_id and are not listed as clients: row %s (see rows_without_client_id)",
			len(no), c.tab, strings.Join(rows, ", row ")))
	}
	start := 0
	if after != "" {
		start = len(all)
		for i, r := range all {
			if naturalCompare(c.text(r, "client_id"), after) > 0 {
				start = i
				break
			}
		}
	}
	for i := start; i < len(all) && len(p.Clients) < limit; i++ {
		p.Clients = append(p.Clients, c.client(all[i]).summary())
	}
	if end := start + len(p.Clients); end < len(all) && len(p.Clients) > 0 {
		p.NextCursor = p.Clients[len(p.Clients)-1].ClientID
	}
	return p, nil
}

// withID lists the rows that have a client_id.
func (c *clients) withID() []int {
	out := make([]int, 0, len(c.rows))
	for i := range c.rows {
		if c.text(i, "client_id") != "" {
			out = append(out, i)
		}
	}
	return out
}

// naturalCompare orders CL-2 before CL-10.
func naturalCompare(a, b string) int {
	a, b = strings.ToUpper(a), strings.ToUpper(b)
	for a != "" && b != "" {
		ca, cb := a[0], b[0]
		if isDigit(ca) && isDigit(cb) {
			na, ra := leadingDigits(a)
			nb, rb := leadingDigits(b)
			da, db := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if c := cmp.Compare(len(da), len(db)); c != 0 {
				return c
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func leadingDigits(s string) (string, string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// Query is a search of the clients.
type Query struct {
	// Text is matched, word by word and without regard to case, against
	// name, email and company: every word must appear in one of them.
	Text string
	// Filters; empty/nil filters match all.
	VIPStatus          string
	MinFlights         *int
	AircraftPreference string
	// Offset is how many matches, in order, to skip.
	Offset int
	Limit  int
}

// Found is the result of a search.
type Found struct {
	Clients []Summary `json:"clients"`
	Matches int       `json:"total_matches"`
	// Truncated: more clients match than are returned; NextOffset is the
	// offset of the next one.
	Truncated  bool `json:"truncated"`
	NextOffset *int `json:"next_offset,omitempty"`
	// RowsWithoutID are matching rows that have no client_id.
	RowsWithoutID []Unidentified `json:"rows_without_client_id,omitempty"`
}

// Search finds clients; exact e-mail and client_id matches come first, then
// names that start with the text, then the rest in client_id order. A text
// that is a client_id (in any case) finds that client although the id is
// in none of the words' columns. Matching rows without client_id are
// listed apart.
func (db *DB) Search(ctx context.Context, q Query) (Found, error) {
	c, err := db.readClients(ctx)
	if err != nil {
		return Found{}, err
	}
	words := strings.Fields(strings.ToLower(q.Text))
	whole := strings.ToLower(strings.TrimSpace(q.Text))
	type hit struct {
		row  int
		id   string
		rank int
	}
	vip := strings.ToLower(strings.TrimSpace(q.VIPStatus))
	match := func(i int) bool {
		if vip != "" {
			v := strings.ToLower(c.text(i, "vip_status"))
			if v == "" {
				v = "standard"
			}
			if v != vip {
				return false
			}
		}
		if q.MinFlights != nil {
			if n, ok := asInt(c.cell(i, "total_flights")); !ok || n < *q.MinFlights {
				return false
			}
		}
		if q.AircraftPreference != "" && !strings.EqualFold(c.text(i, "aircraft_preference"), q.AircraftPreference) {
			return false
		}
		if whole != "" && strings.EqualFold(c.text(i, "client_id"), whole) {
			return true
		}
		name, email, company := strings.ToLower(c.text(i, "name")), strings.ToLower(c.text(i, "email")), strings.ToLower(c.text(i, "company"))
		for _, w := range words {
			if !strings.Contains(name, w) && !strings.Contains(email, w) && !strings.Contains(company, w) {
				return false
			}
		}
		return true
	}
	var hits []hit
	for _, i := range c.withID() {
		if !match(i) {
			continue
		}
		name, email := strings.ToLower(c.text(i, "name")), strings.ToLower(c.text(i, "email"))
		id := c.text(i, "client_id")
		rank := 2
		switch {
		case whole != "" && (email == whole || strings.EqualFold(id, whole)):
			rank = 0
		case whole != "" && strings.HasPrefix(name, whole):
			rank = 1
		}
		hits = append(hits, hit{i, id, rank})
	}
	var lost []int
	for _, i := range c.withoutID() {
		if match(i) {
			lost = append(lost, i)
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return naturalCompare(a.id, b.id)
	})
	out := Found{Clients: []Summary{}, Matches: len(hits), RowsWithoutID: c.unidentified(lost)}
	for i, h := range hits[min(q.Offset, len(hits)):] {
		if len(out.Clients) == q.Limit {
			next := q.Offset + i
			out.Truncated, out.NextOffset = true, &next
			break
		}
		out.Clients = append(out.Clients, c.client(h.row).summary())
	}
	return out, nil
}

var idRE = regexp.MustCompile(`(?i)^CL-(\d+)$`)

// Recent returns the n clients updated last, newest first.
func (db *DB) Recent(ctx context.Context, n int) ([]Client, error) {
	c, err := db.readClients(ctx)
	if err != nil {
		return nil, err
	}
	type stamped struct {
		row int
		at  time.Time
	}
	rows := c.withID()
	list := make([]stamped, len(rows))
	for k, i := range rows {
		t, _ := asTime(c.cell(i, "updated_at"))
		list[k] = stamped{i, t}
	}
	slices.SortStableFunc(list, func(a, b stamped) int { return b.at.Compare(a.at) })
	out := make([]Client, 0, min(n, len(list)))
	for _, s := range list[:min(n, len(list))] {
		out = append(out, c.client(s.row))
	}
	return out, nil
}
