// Package clientdb is the client database kept in a spreadsheet: a Clients
// tab with one row per client and a Flight_History tab with one row per
// flight (see Columns and HistoryColumns). It reads typed records out of
// the cells and writes agents' values RAW, and it never loses an update:
//
//   - Rows move when people sort or insert rows, so every write finds its row
//     by the immutable client_id immediately before writing, writes only that
//     row's cells, and then reads the tab back to check where the write
//     landed: each write carries a fresh updated_at stamp, so the row holding
//     the stamp is the row written. If a reordering in between sent the
//     cells to another client's row, that row is restored and the write is
//     made again on the right one.
//   - Writes to one spreadsheet are serialised in this process (and, for the
//     local workbook, across processes by a lock file).
//   - A write may carry the version the caller read (a hash of the row's
//     cells, so a person's edit in the sheet changes it too) or the
//     updated_at it read; if the row no longer matches, the write is
//     refused with CONFLICT.
//   - A flight is recorded in two steps — the history row first, then the
//     client's totals — and every history row carries the client's flight
//     count it brings (client_flight_number), so a failure between the steps
//     is reported as such and repaired by the next call for that client:
//     retrying records the flight once and brings the totals up to date.
package clientdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Default names of the two tabs.
const (
	DefaultClientsTab = "Clients"
	DefaultHistoryTab = "Flight_History"
)

// DefaultMaxRows bounds the rows of a tab the database works on.
const DefaultMaxRows = 50_000

// Columns of the Clients tab, in the template's order. Their order in a
// sheet does not matter: columns are found by their header in row 1.
var Columns = []string{"client_id", "name", "email", "phone", "company", "aircraft_preference",
	"catering_preference", "special_needs", "vip_status", "total_flights", "last_flight_date",
	"preferred_operators", "created_at", "updated_at"}

// HistoryColumns of the Flight_History tab.
var HistoryColumns = []string{"flight_id", "client_id", "date", "route", "aircraft", "operator", "price",
	"client_flight_number", "recorded_at"}

// Options configure a DB.
type Options struct {
	ClientsTab string
	HistoryTab string
	// MaxRows bounds the rows of a tab (DefaultMaxRows when 0): a larger tab
	// is refused rather than read without bound.
	MaxRows int
	// Changed is told the client_id of every client row this server changed.
	Changed func(clientID string)
	// Now replaces the clock (tests).
	Now func() time.Time
	// Log receives notes on repairs; nil logs nothing.
	Log *zerolog.Logger
}

// DB is the client database on one workbook. Safe for concurrent use.
type DB struct {
	wb     workbook.Workbook
	opt    Options
	writes chan struct{}
	mu     sync.Mutex
	last   time.Time
}

// New returns a DB on wb.
func New(wb workbook.Workbook, opt Options) *DB {
	if opt.ClientsTab == "" {
		opt.ClientsTab = DefaultClientsTab
	}
	if opt.HistoryTab == "" {
		opt.HistoryTab = DefaultHistoryTab
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = DefaultMaxRows
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		nop := zerolog.Nop()
		opt.Log = &nop
	}
	return &DB{wb: wb, opt: opt, writes: make(chan struct{}, 1)}
}

// Workbook returns the workbook under the database.
func (db *DB) Workbook() workbook.Workbook { return db.wb }

// Tabs returns the names of the clients and history tabs.
func (db *DB) Tabs() (clients, history string) { return db.opt.ClientsTab, db.opt.HistoryTab }

// lock serialises writers of this spreadsheet, waiting at most until ctx
// ends.
func (db *DB) lock(ctx context.Context) (func(), error) {
	select {
	case db.writes <- struct{}{}:
	case <-ctx.Done():
		return nil, mcperr.New(mcperr.Timeout, "waited too long for other writes to the spreadsheet to finish").WithCause(ctx.Err())
	}
	release := func() { <-db.writes }
	if l, ok := db.wb.(workbook.Locker); ok {
		unlock, err := l.Lock(ctx)
		if err != nil {
			release()
			return nil, err
		}
		return func() { unlock(); release() }, nil
	}
	return release, nil
}

// stamp returns a new updated_at value, later than every one this DB gave
// before, so that it marks exactly one write.
func (db *DB) stamp() string {
	db.mu.Lock()
	defer db.mu.Unlock()
	now := db.opt.Now().UTC().Truncate(time.Millisecond)
	if !now.After(db.last) {
		now = db.last.Add(time.Millisecond)
	}
	db.last = now
	return now.Format(stampLayout)
}

const stampLayout = "2006-01-02T15:04:05.000Z07:00"

func (db *DB) changed(id string) {
	if db.opt.Changed != nil {
		db.opt.Changed(id)
	}
}

// table is one tab read whole: its header and its rows.
type table struct {
	tab    string
	names  []string       // normalised header names, by column (0-based)
	col    map[string]int // header name → column (1-based)
	rows   [][]any        // rows[0] is sheet row 2
	header []any
}

// normalise turns a header as people write it ("Client ID", "client-id")
// into its column name.
func normalise(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, h)
}

// parseTable checks the header row of values (a tab read from A1) for the
// required columns.
func (db *DB) parseTable(tab string, values [][]any, required []string) (*table, error) {
	t := &table{tab: tab, col: map[string]int{}}
	if len(values) > 0 {
		t.header = values[0]
		t.rows = values[1:]
	}
	if len(t.rows) > db.opt.MaxRows {
		return nil, mcperr.New(mcperr.Upstream, "tab %s has %d rows, more than the limit of %d this server reads (--max-rows)", tab, len(t.rows), db.opt.MaxRows).WithRetryable(false)
	}
	var dup []string
	for i, h := range t.header {
		name := normalise(workbook.Text(h))
		t.names = append(t.names, name)
		if name == "" {
			continue
		}
		if _, seen := t.col[name]; seen {
			dup = append(dup, name)
			continue
		}
		t.col[name] = i + 1
	}
	var missing []string
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			missing = append(missing, c)
		}
	}
	switch {
	case len(t.header) == 0:
		return nil, mcperr.New(mcperr.Upstream, "tab %s has no header row; run `sheets-mcp init` on the spreadsheet, or copy the header row of the template (configs/sheets/template/%s.csv) into row 1",
			tab, templateName(tab, db)).WithRetryable(false)
	case len(missing) > 0:
		return nil, mcperr.New(mcperr.Upstream, "tab %s lacks the column(s) %s in its header row (row 1); add them, in any order (the template in configs/sheets/template/ has them all)",
			tab, strings.Join(missing, ", ")).WithRetryable(false)
	case len(dup) > 0:
		return nil, mcperr.New(mcperr.Upstream, "tab %s names the column(s) %s twice in its header row; keep one of each", tab, strings.Join(dup, ", ")).WithRetryable(false)
	}
	return t, nil
}

func templateName(tab string, db *DB) string {
	if tab == db.opt.HistoryTab {
		return DefaultHistoryTab
	}
	return DefaultClientsTab
}

// cell returns the value of column name in rows[i].
func (t *table) cell(i int, name string) any {
	c := t.col[name]
	if c == 0 || c > len(t.rows[i]) {
		return nil
	}
	return t.rows[i][c-1]
}

// text is cell as text, trimmed.
func (t *table) text(i int, name string) string {
	return strings.TrimSpace(workbook.Text(t.cell(i, name)))
}

// sheetRow is the sheet row number of rows[i].
func sheetRow(i int) int { return i + 2 }

// clients is the Clients tab read whole.
type clients struct {
	*table
	byID map[string]int   // client_id (upper case) → index into rows (the first)
	dups map[string][]int // client_ids on more than one row → every index
}

func (db *DB) readClients(ctx context.Context) (*clients, error) {
	v, err := db.wb.Read(ctx, []a1.Range{a1.Tab(db.opt.ClientsTab)}, workbook.DatesSerial)
	if err != nil {
		return nil, err
	}
	return db.parseClients(v[0])
}

func (db *DB) parseClients(values [][]any) (*clients, error) {
	t, err := db.parseTable(db.opt.ClientsTab, values, Columns)
	if err != nil {
		return nil, err
	}
	c := &clients{table: t, byID: make(map[string]int, len(t.rows)), dups: map[string][]int{}}
	for i := range t.rows {
		if id := t.text(i, "client_id"); id != "" {
			key := strings.ToUpper(id)
			if first, seen := c.byID[key]; seen {
				if c.dups[key] == nil {
					c.dups[key] = []int{first}
				}
				c.dups[key] = append(c.dups[key], i)
				continue
			}
			c.byID[key] = i
		}
	}
	return c, nil
}

// locate finds the one row of client id.
func (c *clients) locate(id string) (int, error) {
	key := strings.ToUpper(strings.TrimSpace(id))
	i, ok := c.byID[key]
	switch {
	case !ok:
		return 0, notFound("client_id", id, "no client with client_id %q in tab %s", id, c.tab)
	case c.dups[key] != nil:
		return 0, c.duplicateError(id, c.dups[key])
	}
	return i, nil
}

func (c *clients) duplicateError(id string, idx []int) error {
	rows := make([]string, len(idx))
	for i, x := range idx {
		rows[i] = fmt.Sprint(sheetRow(x))
	}
	return mcperr.New(mcperr.Conflict, "client_id %s appears on rows %s of tab %s; client ids must be unique, so fix the sheet before changing this client",
		id, strings.Join(rows, ", "), c.tab)
}

// warnings lists the duplicate client ids of the tab.
func (c *clients) warnings() []string {
	var out []string
	for _, idx := range c.dups {
		out = append(out, c.duplicateError(c.text(idx[0], "client_id"), idx).(*mcperr.Error).Message)
	}
	slices.Sort(out)
	return out
}

// history is the Flight_History tab read whole.
type history struct {
	*table
}

func (db *DB) parseHistory(values [][]any) (*history, error) {
	t, err := db.parseTable(db.opt.HistoryTab, values, HistoryColumns)
	if err != nil {
		return nil, err
	}
	return &history{t}, nil
}

// notFound is NOT_FOUND naming the argument that named nothing.
func notFound(field, value, format string, args ...any) *mcperr.Error {
	e := mcperr.New(mcperr.NotFound, format, args...)
	e.Field, e.Value = field, value
	return e
}
