package clientdb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// maxWriteAttempts bounds how often a write is made again after the rows
// moved under it.
const maxWriteAttempts = 4

// setter decides the cells to set on rows[i] of the Clients tab as it is
// now (column name → value); an empty map writes nothing.
type setter func(c *clients, i int) (map[string]any, error)

// written is what a write did.
type written struct {
	client Client
	// wrote is false when the row already held the values.
	wrote bool
	// notes say what else happened: rows that were restored.
	notes []string
}

// valueText is the text a value written RAW reads back as.
func valueText(v any) string { return workbook.Text(v) }

// writeClient sets cells of client id's row: it finds the row just before
// writing, writes only the cells set returns plus a fresh updated_at stamp,
// then reads the tab back. The row holding the stamp is the row written; if
// people re-sorted the sheet between the read and the write and it is
// another client's, that row is restored and the write is made again. The
// caller holds the write lock.
func (db *DB) writeClient(ctx context.Context, id string, set setter, depth int) (written, error) {
	var notes []string
	for attempt := 1; attempt <= maxWriteAttempts; attempt++ {
		before, err := db.readClients(ctx)
		if err != nil {
			return written{notes: notes}, err
		}
		i, err := before.locate(id)
		if err != nil {
			return written{notes: notes}, err
		}
		cells, err := set(before, i)
		if err != nil {
			return written{notes: notes}, err
		}
		if len(cells) == 0 {
			return written{client: before.client(i), notes: notes}, nil
		}
		stamp := db.stamp()
		cells["updated_at"] = stamp
		row := sheetRow(i)
		werr := db.wb.Write(ctx, before.tab, before.cellsAt(row, cells))
		if werr != nil && !mayHaveApplied(werr) {
			return written{notes: notes}, annotate(werr, "nothing was written to client %s", id)
		}
		after, rerr := db.readClients(ctx)
		if rerr != nil {
			if werr != nil {
				return written{notes: notes}, annotate(werr, "the change to client %s may or may not have been written, and reading it back failed too (%s); read the client before repeating the change", id, mcperr.Wrap(rerr).Message)
			}
			return written{notes: notes}, annotate(rerr, "the change to client %s was sent, but reading the tab back to check where it landed failed; read the client to see whether it holds the change", id)
		}
		landed := after.rowsWith("updated_at", stamp)
		var ours = -1
		for _, r := range landed {
			if strings.EqualFold(after.text(r, "client_id"), id) {
				ours = r
				continue
			}
			note, err := db.undoStray(ctx, before, after, r, cells, depth)
			if note != "" {
				notes = append(notes, note)
			}
			if err != nil {
				return written{notes: notes}, err
			}
		}
		if ours >= 0 {
			db.changed(after.text(ours, "client_id"))
			return written{client: after.client(ours), wrote: true, notes: notes}, nil
		}
		if len(landed) == 0 && werr != nil {
			return written{notes: notes}, annotate(werr, "nothing was written to client %s", id)
		}
		db.opt.Log.Warn().Str("client_id", id).Int("attempt", attempt).Msg("the rows moved while writing; writing again")
	}
	return written{notes: notes}, mcperr.New(mcperr.Conflict,
		"the rows of tab %s kept moving (sorting or inserting rows) during %d attempts to change client %s; the client was not changed. Try again when the sheet is not being rearranged",
		db.opt.ClientsTab, maxWriteAttempts, id).WithRetryable(true)
}

// undoStray restores row r of after, which received cells meant for
// another client because the rows moved between our read and our write.
func (db *DB) undoStray(ctx context.Context, before, after *clients, r int, cells map[string]any, depth int) (string, error) {
	other := after.text(r, "client_id")
	cols := slices.Sorted(maps.Keys(cells))
	if other == "" {
		// A row without an id (a person inserted a blank row): empty what we
		// wrote, found again by its stamp.
		stamp := valueText(cells["updated_at"])
		now, err := db.readClients(ctx)
		if err != nil {
			return "", annotate(err, "a change landed on row %d, which has no client_id, after the rows moved, and reading the tab to undo it failed; empty its cells %s by hand", sheetRow(r), strings.Join(cols, ", "))
		}
		var clear []workbook.Cell
		for _, i := range now.rowsWith("updated_at", stamp) {
			for _, col := range cols {
				if now.text(i, col) == valueText(cells[col]) {
					clear = append(clear, workbook.Cell{Row: sheetRow(i), Col: now.col[col], Value: ""})
				}
			}
		}
		if err := db.wb.Write(ctx, now.tab, clear); err != nil {
			return "", annotate(err, "a change landed on a row without client_id after the rows moved, and emptying it again failed; empty the cells %s of the row whose updated_at is %s by hand", strings.Join(cols, ", "), stamp)
		}
		return "the rows moved while writing: the change first landed on a row without a client_id, which was emptied again", nil
	}
	if depth >= 1 {
		return "", mcperr.New(mcperr.Conflict, "the rows moved twice while a misdirected change was being undone; client %s may hold values meant for another client in %s — check it", other, strings.Join(cols, ", ")).WithRetryable(false)
	}
	// The other client's values before our write.
	prev := map[string]any{}
	if i, err := before.locate(other); err == nil {
		for _, col := range cols {
			prev[col] = before.cell(i, col)
		}
	}
	restore := func(c *clients, i int) (map[string]any, error) {
		out := map[string]any{}
		for _, col := range cols {
			if col == "updated_at" {
				continue
			}
			if c.text(i, col) == valueText(cells[col]) && c.text(i, col) != workbook.Text(prev[col]) {
				out[col] = restoreValue(prev[col])
			}
		}
		return out, nil
	}
	if _, err := db.writeClient(ctx, other, restore, depth+1); err != nil {
		return "", annotate(err, "the rows moved while writing, so the change first landed on client %s, and restoring that client failed; check its cells %s", other, strings.Join(cols, ", "))
	}
	db.opt.Log.Warn().Str("client_id", other).Msg("a write landed on this client after the rows moved; its cells were restored")
	return fmt.Sprintf("the rows moved while writing: the change first landed on client %s, whose values were restored (its updated_at changed)", other), nil
}

// restoreValue writes back a value as it was read.
func restoreValue(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// mayHaveApplied reports whether a failed write may still have changed the
// sheet: anything but a refusal before it took effect.
func mayHaveApplied(err error) bool {
	switch mcperr.Wrap(err).Code {
	case mcperr.Validation, mcperr.Authentication, mcperr.PermissionDeny, mcperr.NotFound, mcperr.Cancelled:
		return false
	}
	return true
}

// annotate puts context in front of an error's message and keeps its code
// and retry advice.
func annotate(err error, format string, args ...any) *mcperr.Error {
	e := mcperr.Wrap(err)
	out := &mcperr.Error{Code: e.Code, Message: fmt.Sprintf(format, args...) + ": " + e.Message,
		Field: e.Field, Value: e.Value, Expected: e.Expected, RetryAfter: e.RetryAfter}
	return out.WithRetryable(e.Retryable()).WithCause(err)
}

// settled is the advice for an append whose unknown outcome was settled by
// reading the tab back, or that is safe to repeat anyway (the row is
// recorded at most once): the upstream called it not retryable only
// because it might have landed.
func settled(e *mcperr.Error) *mcperr.Error {
	if errors.Is(e, upstream.ErrOutcomeUnknown) {
		e.WithRetryable(true)
	}
	return e
}

// rowsWith lists the rows whose column col reads exactly s.
func (t *table) rowsWith(col, s string) []int {
	var out []int
	for i := range t.rows {
		if t.text(i, col) == s {
			out = append(out, i)
		}
	}
	return out
}

// cellsAt turns column values into cells of sheet row row.
func (t *table) cellsAt(row int, set map[string]any) []workbook.Cell {
	out := make([]workbook.Cell, 0, len(set))
	for col, v := range set {
		out = append(out, workbook.Cell{Row: row, Col: t.col[col], Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Col < out[j].Col })
	return out
}

// rowValues lays out a new row in the header's column order.
func (t *table) rowValues(set map[string]any) []any {
	width := 0
	for _, c := range t.col {
		width = max(width, c)
	}
	row := make([]any, width)
	for i := range row {
		row[i] = ""
	}
	for col, v := range set {
		if c := t.col[col]; c > 0 {
			row[c-1] = v
		}
	}
	return row
}

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
