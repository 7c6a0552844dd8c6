package clientdb

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Fields are client fields to set; a nil field is left as it is, "" (or an
// empty list) empties the cell.
type Fields struct {
	Name               *string
	Email              *string
	Phone              *string
	Company            *string
	AircraftPreference *string
	CateringPreference *string
	SpecialNeeds       *string
	VIPStatus          *string
	PreferredOperators *[]string
}

// MaxText bounds one text value.
const MaxText = 1000

var emailRE = regexp.MustCompile(`^[^\s@,;<>"]+@[^\s@,;<>"]+\.[^\s@,;<>"]+$`)

// validate checks the fields; prefix is put before field names in errors
// ("updates." for update_client).
func (f Fields) validate(prefix string) error {
	texts := []struct {
		name string
		v    *string
	}{{"name", f.Name}, {"email", f.Email}, {"phone", f.Phone}, {"company", f.Company},
		{"aircraft_preference", f.AircraftPreference}, {"catering_preference", f.CateringPreference},
		{"special_needs", f.SpecialNeeds}, {"vip_status", f.VIPStatus}}
	for _, t := range texts {
		if t.v == nil {
			continue
		}
		if err := checkText(prefix+t.name, *t.v); err != nil {
			return err
		}
	}
	if f.Name != nil && strings.TrimSpace(*f.Name) == "" {
		return mcperr.Invalid(prefix+"name", *f.Name, "a name", "a client needs a name")
	}
	if f.Email != nil && !emailRE.MatchString(strings.TrimSpace(*f.Email)) {
		return mcperr.Invalid(prefix+"email", *f.Email, "an e-mail address such as name@example.com", "%q is not an e-mail address", *f.Email)
	}
	if f.VIPStatus != nil && !slices.Contains(VIPStatuses, strings.ToLower(strings.TrimSpace(*f.VIPStatus))) {
		return mcperr.Invalid(prefix+"vip_status", *f.VIPStatus, strings.Join(VIPStatuses, ", "), "unknown vip_status %q", *f.VIPStatus)
	}
	if f.AircraftPreference != nil && *f.AircraftPreference != "" && !slices.Contains(AircraftCategories, strings.ToLower(strings.TrimSpace(*f.AircraftPreference))) {
		return mcperr.Invalid(prefix+"aircraft_preference", *f.AircraftPreference, strings.Join(AircraftCategories, ", "), "unknown aircraft_preference %q", *f.AircraftPreference)
	}
	if f.PreferredOperators != nil {
		for _, op := range *f.PreferredOperators {
			if err := checkText(prefix+"preferred_operators", op); err != nil {
				return err
			}
			if strings.Contains(op, ",") || strings.TrimSpace(op) == "" {
				return mcperr.Invalid(prefix+"preferred_operators", op, "operator ids without commas", "operator %q cannot be stored in a comma-separated cell", op)
			}
		}
	}
	return nil
}

func checkText(field, s string) error {
	if len(s) > MaxText {
		return mcperr.Invalid(field, len(s), fmt.Sprintf("at most %d characters", MaxText), "%s is %d bytes long, over %d", field, len(s), MaxText)
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return mcperr.Invalid(field, s, "text without control characters", "%s holds a control character", field)
		}
	}
	return nil
}

// cells turns the set fields into column values, normalised.
func (f Fields) cells() map[string]any {
	out := map[string]any{}
	put := func(col string, v *string, lower bool) {
		if v == nil {
			return
		}
		s := strings.TrimSpace(*v)
		if lower {
			s = strings.ToLower(s)
		}
		out[col] = s
	}
	put("name", f.Name, false)
	put("email", f.Email, false)
	put("phone", f.Phone, false)
	put("company", f.Company, false)
	put("aircraft_preference", f.AircraftPreference, true)
	put("catering_preference", f.CateringPreference, false)
	put("special_needs", f.SpecialNeeds, false)
	put("vip_status", f.VIPStatus, true)
	if f.PreferredOperators != nil {
		ops := make([]string, 0, len(*f.PreferredOperators))
		for _, op := range *f.PreferredOperators {
			ops = append(ops, strings.TrimSpace(op))
		}
		out["preferred_operators"] = strings.Join(ops, ", ")
	}
	return out
}

// emailOwner finds another row (not except) with this e-mail address,
// compared without regard to case, and describes it: "client CL-004", or
// "row 14 (a row without client_id)".
func (c *clients) emailOwner(email string, except int) (string, bool) {
	for i := range c.rows {
		if i != except && strings.EqualFold(c.text(i, "email"), strings.TrimSpace(email)) && c.text(i, "email") != "" {
			if id := c.text(i, "client_id"); id != "" {
				return "client " + id, true
			}
			return fmt.Sprintf("row %d of tab %s (a row without client_id: a person must give it one, or delete it, before a client with this email can be created)", sheetRow(i), c.tab), true
		}
	}
	return "", false
}

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

// Changed is the result of a write to one client.
type Changed struct {
	Client Client `json:"client"`
	// Changed names the columns whose value changed (empty when the client
	// already held the values).
	Changed []string `json:"changed"`
	Notes   []string `json:"notes,omitempty"`
}

// Expect is what a writer read of a client; a write that carries it is
// refused with CONFLICT when the client no longer matches it.
type Expect struct {
	// UpdatedAt is the updated_at read. It only moves when this server
	// writes the client: a person typing into the sheet leaves it as it is.
	UpdatedAt string
	// Version is the version read: any change to the row's cells, by
	// anyone, gives another.
	Version string
}

// Update sets fields of client id. With expectedUpdatedAt, the write is
// refused with CONFLICT unless the row's updated_at is still that time.
func (db *DB) Update(ctx context.Context, id string, f Fields, expectedUpdatedAt string) (Changed, error) {
	return db.UpdateIf(ctx, id, f, Expect{UpdatedAt: expectedUpdatedAt})
}

// UpdateIf sets fields of client id, refusing with CONFLICT when the row
// no longer matches what exp says was read.
func (db *DB) UpdateIf(ctx context.Context, id string, f Fields, exp Expect) (Changed, error) {
	if err := f.validate("updates."); err != nil {
		return Changed{}, err
	}
	expectedUpdatedAt := exp.UpdatedAt
	var expected time.Time
	if expectedUpdatedAt != "" {
		t, ok := asTime(expectedUpdatedAt)
		if !ok {
			return Changed{}, mcperr.Invalid("expected_updated_at", expectedUpdatedAt, "the updated_at the client had when you read it (RFC 3339)", "%q is not a timestamp", expectedUpdatedAt)
		}
		expected = t
	}
	exp.Version = strings.TrimSpace(exp.Version)
	if exp.Version != "" && (!versionRE.MatchString(exp.Version) || len(exp.Version) != len(versionPrefix)+17+2*len(Columns)) {
		return Changed{}, mcperr.Invalid("expected_version", exp.Version, "the version the client had when you read it (get_client, search_clients, list_clients)", "%q is not a client version", exp.Version)
	}
	want := f.cells()
	if len(want) == 0 {
		return Changed{}, mcperr.Invalid("updates", nil, "at least one field", "updates names no field to change")
	}
	unlock, err := db.lock(ctx)
	if err != nil {
		return Changed{}, err
	}
	defer unlock()
	var changed []string
	w, err := db.writeClient(ctx, id, func(c *clients, i int) (map[string]any, error) {
		if exp.Version != "" {
			if now := c.version(i); now != exp.Version {
				what := "its cells"
				if cols := changedColumns(exp.Version, now); len(cols) > 0 {
					what = strings.Join(cols, ", ")
				}
				e := mcperr.New(mcperr.Conflict, "client %s changed since it was read (%s; someone may have edited the sheet); nothing was written. Read it again (get_client) and decide on the current values", id, what)
				e.Field, e.Value = "expected_version", now
				return nil, e
			}
		}
		if expectedUpdatedAt != "" {
			cur, ok := asTime(c.cell(i, "updated_at"))
			if !ok || !cur.Equal(expected) {
				now := c.text(i, "updated_at")
				if ok {
					now = formatTime(cur)
				}
				e := mcperr.New(mcperr.Conflict, "client %s changed since it was read: its updated_at is now %s, not %s; read it again (get_client) and decide on the current values", id, now, expectedUpdatedAt)
				e.Field, e.Value = "expected_updated_at", now
				return nil, e
			}
		}
		if email, ok := want["email"].(string); ok {
			if owner, taken := c.emailOwner(email, i); taken {
				e := mcperr.New(mcperr.Conflict, "%s already has the email %s", owner, email)
				e.Field, e.Value = "updates.email", email
				return nil, e
			}
		}
		out := map[string]any{}
		changed = changed[:0]
		for col, v := range want {
			if c.text(i, col) != valueText(v) {
				out[col] = v
				changed = append(changed, col)
			}
		}
		slices.Sort(changed)
		return out, nil
	}, 0)
	if err != nil {
		return Changed{Notes: w.notes}, withNotes(err, w.notes)
	}
	if !w.wrote {
		changed = nil
	}
	return Changed{Client: w.client, Changed: append([]string{}, changed...), Notes: w.notes}, nil
}

// withNotes adds what else happened during a failed write to its message.
func withNotes(err error, notes []string) error {
	if len(notes) == 0 {
		return err
	}
	e := annotate(err, "%s", strings.Join(notes, "; "))
	return e
}

var idRE = regexp.MustCompile(`(?i)^CL-(\d+)$`)

// nextID is one more than the highest CL-<n> id in the tab.
func (c *clients) nextID() string {
	n := 0
	for key := range c.byID {
		if m := idRE.FindStringSubmatch(key); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				n = max(n, v)
			}
		}
	}
	return fmt.Sprintf("CL-%03d", n+1)
}

// Created is the result of Create.
type Created struct {
	Client Client   `json:"client"`
	Notes  []string `json:"notes,omitempty"`
}

// Create adds a client with a new client_id (CL-<n>, one more than the
// highest). An e-mail address already in the tab is a CONFLICT, which also
// makes a repeated call safe: it cannot create the client twice.
func (db *DB) Create(ctx context.Context, f Fields) (Created, error) {
	if f.Name == nil || f.Email == nil {
		return Created{}, mcperr.Invalid("name", nil, "name and email", "a new client needs a name and an email")
	}
	if err := f.validate(""); err != nil {
		return Created{}, err
	}
	unlock, err := db.lock(ctx)
	if err != nil {
		return Created{}, err
	}
	defer unlock()
	var notes []string
	for attempt := 1; attempt <= maxWriteAttempts; attempt++ {
		before, err := db.readClients(ctx)
		if err != nil {
			return Created{}, err
		}
		if owner, taken := before.emailOwner(*f.Email, -1); taken {
			e := mcperr.New(mcperr.Conflict, "%s already has the email %s; get_client shows a client (a client is created once)", owner, strings.TrimSpace(*f.Email))
			e.Field, e.Value = "email", strings.TrimPrefix(owner, "client ")
			return Created{}, e
		}
		id := before.nextID()
		stamp := db.stamp()
		set := f.cells()
		set["client_id"], set["created_at"], set["updated_at"], set["total_flights"] = id, stamp, stamp, 0
		if _, ok := set["vip_status"]; !ok {
			set["vip_status"] = "standard"
		}
		landed, aerr := db.wb.Append(ctx, before.tab, before.rowValues(set))
		if aerr == nil && landed.StartCol != 1 {
			return Created{}, db.misplaced(ctx, landed, before.tab)
		}
		after, rerr := db.readClients(ctx)
		if rerr != nil {
			if aerr != nil {
				return Created{}, settled(annotate(aerr, "the client may or may not have been created as %s (reading the tab back to check failed: %s); get_client with the email tells, and create_client again is safe: it never creates a second client with this email", id, mcperr.Wrap(rerr).Message))
			}
			return Created{}, annotate(rerr, "client %s was added, but reading it back failed; get_client %s shows it", id, id)
		}
		rows := after.rowsWith("updated_at", stamp)
		if len(rows) == 0 {
			if aerr != nil {
				return Created{}, settled(annotate(aerr, "the client was not created"))
			}
			return Created{}, mcperr.New(mcperr.Upstream, "the row appended for client %s cannot be found in tab %s; check the sheet", id, before.tab)
		}
		if aerr != nil {
			notes = append(notes, "the answer to the append was lost, but reading the tab back shows the row")
		}
		if after.dups[strings.ToUpper(id)] != nil {
			// Someone added the same id meanwhile: take ours back, pick another.
			if err := db.clearRows(ctx, after.table, rows); err != nil {
				return Created{}, annotate(err, "client_id %s was taken by another row while the client was being added; removing the new row failed, so the tab holds %s twice", id, id)
			}
			notes = append(notes, fmt.Sprintf("client_id %s was taken meanwhile; another id was chosen", id))
			continue
		}
		db.changed(id)
		return Created{Client: after.client(rows[0]), Notes: notes}, nil
	}
	return Created{}, mcperr.New(mcperr.Conflict, "new client ids kept being taken by other rows; the client was not created").WithRetryable(true)
}

// clearRows empties rows of t (the cells of every header column).
func (db *DB) clearRows(ctx context.Context, t *table, rows []int) error {
	set := map[string]any{}
	for col := range t.col {
		set[col] = ""
	}
	var cells []workbook.Cell
	for _, r := range rows {
		cells = append(cells, t.cellsAt(sheetRow(r), set)...)
	}
	return db.wb.Write(ctx, t.tab, cells)
}

// misplaced undoes an append that landed outside the table's columns (the
// tab has other data below or beside the table) and says what to fix.
func (db *DB) misplaced(ctx context.Context, landed a1.Range, tab string) error {
	if err := db.wb.Clear(ctx, landed); err != nil {
		return annotate(err, "the new row landed at %s, outside the table of tab %s, and removing it failed; delete it by hand", landed, tab)
	}
	return mcperr.New(mcperr.Conflict, "tab %s has other data below or beside its table, so the new row landed at %s; it was removed again. Move that data so the table is the last block of the tab, then retry",
		tab, landed).WithRetryable(false)
}

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
