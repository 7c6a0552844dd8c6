package clientdb_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/clientdb"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sample"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

const sid = "client-db"

var ctx = context.Background()

// env is a client database on one backend, and what people sharing the
// sheet can do to it.
type env struct {
	name string
	db   *clientdb.DB
	wb   workbook.Workbook
	// sortBy reorders the Clients rows below the header by a column
	// (1-based), as a person sorting the sheet does.
	sortBy func(col int, desc bool)
	// shuffle puts the Clients rows in a random order.
	shuffle func(seed uint64)
	// setCell types text into a cell as a person would.
	setCell func(tab string, row, col int, text string)
	fake    *sheetsfake.Server // google only
	dir     string             // local only
	changed *changes
}

type changes struct {
	mu  sync.Mutex
	ids []string
}

func (c *changes) add(id string) { c.mu.Lock(); c.ids = append(c.ids, id); c.mu.Unlock() }
func (c *changes) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

// sampleRows reads a sample tab as a person would have typed it.
func sampleRows(t testing.TB, name string) [][]string {
	t.Helper()
	b, err := fs.ReadFile(sample.Files(), name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

var fastRetry = retry.Policy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func googleEnv(t testing.TB, opts ...func(*clientdb.Options)) *env {
	t.Helper()
	f := sheetsfake.New(t)
	f.AddToken("tok")
	f.AddSpreadsheet(sid, "Clients", "Flight_History")
	for _, tab := range []string{"Clients", "Flight_History"} {
		for r, row := range sampleRows(t, tab+".csv") {
			for c, text := range row {
				if text != "" {
					f.SetCell(sid, tab, r+1, c+1, text)
				}
			}
		}
	}
	wb, err := workbook.NewGoogle(ctx, workbook.GoogleConfig{SpreadsheetID: sid, Endpoint: f.URL,
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"}), Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{name: "google", wb: wb, fake: f, changed: &changes{}}
	e.sortBy = func(col int, desc bool) { f.Sort(sid, "Clients", col, desc) }
	e.shuffle = func(seed uint64) { f.Shuffle(sid, "Clients", seed) }
	e.setCell = func(tab string, row, col int, text string) { f.SetCell(sid, tab, row, col, text) }
	e.db = newDB(wb, e, opts)
	return e
}

func newDB(wb workbook.Workbook, e *env, opts []func(*clientdb.Options)) *clientdb.DB {
	o := clientdb.Options{Changed: e.changed.add}
	for _, f := range opts {
		f(&o)
	}
	return clientdb.New(wb, o)
}

func localEnv(t testing.TB, opts ...func(*clientdb.Options)) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "workbook")
	wb, err := workbook.OpenLocal(workbook.LocalConfig{Dir: dir, Seed: sample.Files()})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{name: "local", wb: wb, dir: dir, changed: &changes{}}
	e.sortBy = func(col int, desc bool) {
		editCSV(t, dir, "Clients", func(rows [][]string) {
			body := rows[1:]
			slices.SortStableFunc(body, func(a, b []string) int {
				x, y := at(a, col-1), at(b, col-1)
				if desc {
					x, y = y, x
				}
				return strings.Compare(x, y)
			})
		})
	}
	e.shuffle = func(seed uint64) {
		editCSV(t, dir, "Clients", func(rows [][]string) {
			body := rows[1:]
			r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			r.Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
		})
	}
	e.setCell = func(tab string, row, col int, text string) {
		editCSV(t, dir, tab, func(rows [][]string) {
			for len(rows[row-1]) < col {
				rows[row-1] = append(rows[row-1], "")
			}
			rows[row-1][col-1] = text
		})
	}
	e.db = newDB(wb, e, opts)
	return e
}

func at(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// editCSV changes a tab's file the way another program would: read it,
// change it, write it back in place.
func editCSV(t testing.TB, dir, tab string, change func(rows [][]string)) {
	t.Helper()
	p := filepath.Join(dir, tab+".csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Error(err)
		return
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Error(err)
		return
	}
	for len(rows) < 40 {
		rows = append(rows, []string{""})
	}
	change(rows)
	for len(rows) > 0 && strings.Join(rows[len(rows)-1], "") == "" {
		rows = rows[:len(rows)-1]
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	if err := w.WriteAll(rows); err != nil {
		t.Error(err)
		return
	}
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Error(err)
	}
}

func envs() map[string]func(testing.TB, ...func(*clientdb.Options)) *env {
	return map[string]func(testing.TB, ...func(*clientdb.Options)) *env{"google": googleEnv, "local": localEnv}
}

// inEveryWorkbook runs test once per workbook, each in a subtest with a
// fresh database (made with opts) whose must failures fail the subtest.
func inEveryWorkbook(t *testing.T, test func(t *testing.T, e *env), opts ...func(*clientdb.Options)) {
	t.Helper()
	for name, mk := range envs() {
		t.Run(name, func(t *testing.T) {
			defer catch(t)
			test(t, mk(t, opts...))
		})
	}
}

func code(err error) mcperr.Code {
	var e *mcperr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func mcpErr(err error) *mcperr.Error {
	var e *mcperr.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

func str(s string) *string { return &s }

// must returns v, or stops the test (through catch) with err and the
// line that called it.
func must[T any](v T, err error) T {
	if err != nil {
		_, file, line, _ := runtime.Caller(1)
		panic(mustFailure{err: err, at: fmt.Sprintf("%s:%d", filepath.Base(file), line)})
	}
	return v
}

type mustFailure struct {
	err error
	at  string
}

// catch turns a must failure into a test failure; deferred by every test
// that calls must.
func catch(t testing.TB) {
	if r := recover(); r != nil {
		if f, ok := r.(mustFailure); ok {
			t.Fatalf("%s: %v", f.at, f.err)
		}
		panic(r)
	}
}

// byID returns every client of the database, by client_id.
func byID(t testing.TB, db *clientdb.DB) map[string]clientdb.Client {
	out := map[string]clientdb.Client{}
	after := ""
	for {
		p := must(db.List(ctx, after, 100))
		for _, s := range p.Clients {
			out[s.ClientID] = must(db.Get(ctx, s.ClientID, "client_id"))
		}
		if p.NextCursor == "" {
			return out
		}
		after = p.NextCursor
	}
}

// sameExceptStamp compares two records but their updated_at (and so
// their version).
func sameExceptStamp(a, b clientdb.Client) bool {
	a.UpdatedAt, b.UpdatedAt = nil, nil
	a.Version, b.Version = "", ""
	return reflect.DeepEqual(a, b)
}
