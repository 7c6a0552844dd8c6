package workbook_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/workbook"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

const sid = "spreadsheet-1"

var ctx = context.Background()

// fastRetry keeps the tests' backoff short.
var fastRetry = retry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

// backend is a workbook with two tabs, Clients and History, plus a way to
// put rows into a tab from outside (a person editing).
type backend struct {
	wb  workbook.Workbook
	set func(tab string, rows [][]any)
}

func newGoogle(t *testing.T) (*sheetsfake.Server, *workbook.Google) {
	t.Helper()
	f := sheetsfake.New(t)
	f.AddToken("tok")
	f.AddSpreadsheet(sid, "Clients", "History")
	g, err := workbook.NewGoogle(ctx, workbook.GoogleConfig{SpreadsheetID: sid, Endpoint: f.URL,
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"}), Account: "agent@p.iam.gserviceaccount.com",
		Version: "test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return f, g
}

func newLocal(t *testing.T) *workbook.Local {
	t.Helper()
	l, err := workbook.OpenLocal(workbook.LocalConfig{Dir: filepath.Join(t.TempDir(), "wb"),
		Seed: fstest.MapFS{"Clients.csv": {Data: nil}, "History.csv": {Data: nil}, "notes.txt": {Data: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func backends(t *testing.T) map[string]func(t *testing.T) backend {
	return map[string]func(t *testing.T) backend{
		"google": func(t *testing.T) backend {
			f, g := newGoogle(t)
			return backend{wb: g, set: func(tab string, rows [][]any) { f.SetRows(sid, tab, rows) }}
		},
		"local": func(t *testing.T) backend {
			l := newLocal(t)
			return backend{wb: l, set: func(tab string, rows [][]any) {
				var cells []workbook.Cell
				for r, row := range rows {
					for c, v := range row {
						if v != nil {
							cells = append(cells, workbook.Cell{Row: r + 1, Col: c + 1, Value: v})
						}
					}
				}
				if err := os.WriteFile(filepath.Join(l.Dir(), tab+".csv"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := l.Write(ctx, tab, cells); err != nil {
					t.Fatal(err)
				}
			}}
		},
	}
}

func code(err error) mcperr.Code {
	var e *mcperr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func readTab(t *testing.T, wb workbook.Workbook, tab string) [][]any {
	t.Helper()
	v, err := wb.Read(ctx, []a1.Range{a1.Tab(tab)}, workbook.DatesSerial)
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// TestSameSemantics runs one suite on the Google workbook (the real client
// against the fake API) and on the local workbook.
func TestSameSemantics(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			b := mk(t)
			wb := b.wb
			if wb.Kind() != name || wb.Describe() == "" {
				t.Errorf("Kind %q Describe %q", wb.Kind(), wb.Describe())
			}
			tabs, err := wb.Tabs(ctx)
			if err != nil || len(tabs) != 2 || tabs[0] != (workbook.Tab{Title: "Clients", Rows: 1000, Cols: 26}) {
				t.Fatalf("tabs %+v %v", tabs, err)
			}
			b.set("Clients", [][]any{{"client_id", "name", "total"}, {"CL-001", "Ann", 12}, {"CL-002", "Bo", 3.5}, nil, {"CL-9", nil, 0}})

			got := readTab(t, wb, "Clients")
			if len(got) != 5 || got[1][0] != "CL-001" || got[1][2] != 12.0 || got[2][2] != 3.5 || len(got[3]) != 0 || got[4][1] != "" || got[4][2] != 0.0 {
				t.Errorf("whole tab: %#v", got)
			}
			multi, err := wb.Read(ctx, []a1.Range{a1.Rect("Clients", 2, 2, 3, 3), a1.Cell("clients", 1, 1), a1.Rect("Clients", 10, 1, 12, 2)}, workbook.DatesSerial)
			if err != nil || len(multi) != 3 || multi[0][0][0] != "Ann" || multi[0][1][1] != 3.5 || multi[1][0][0] != "client_id" || len(multi[2]) != 0 {
				t.Errorf("ranges: %#v %v", multi, err)
			}

			// RAW: text stays text, whatever it looks like.
			cells := []workbook.Cell{{Row: 2, Col: 2, Value: "=1+1"}, {Row: 2, Col: 3, Value: 13}, {Row: 3, Col: 2, Value: "'quoted"},
				{Row: 3, Col: 3, Value: "007"}, {Row: 6, Col: 1, Value: "+1-555-0100"}, {Row: 6, Col: 2, Value: -2.5}, {Row: 6, Col: 3, Value: true}}
			if err := wb.Write(ctx, "Clients", cells); err != nil {
				t.Fatal(err)
			}
			got = readTab(t, wb, "Clients")
			if got[1][1] != "=1+1" || got[1][2] != 13.0 || got[2][1] != "'quoted" || got[2][2] != "007" || got[5][0] != "+1-555-0100" || got[5][1] != -2.5 {
				t.Errorf("after the write: %#v", got)
			}
			if workbook.Text(got[5][2]) != "TRUE" {
				t.Errorf("bool cell reads %#v", got[5][2])
			}
			// "" empties a cell; a write is all or nothing.
			if err := wb.Write(ctx, "Clients", []workbook.Cell{{Row: 6, Col: 1, Value: ""}}); err != nil {
				t.Fatal(err)
			}
			err = wb.Write(ctx, "Clients", []workbook.Cell{{Row: 2, Col: 1, Value: "changed"}, {Row: 1001, Col: 1, Value: "x"}})
			if code(err) == "" || readTab(t, wb, "Clients")[1][0] != "CL-001" {
				t.Errorf("write outside the grid: %v; row 2 %v", err, readTab(t, wb, "Clients")[1])
			}

			// Append goes below the table the tab's data forms.
			b.set("History", [][]any{{"id", "x"}, {"H1", "a"}, {"H2", "b"}, nil, {nil, nil, nil, "note"}})
			landed, err := wb.Append(ctx, "History", []any{"H3", "=SUM(1)", 4})
			if err != nil || landed.String() != "History!D6:F6" {
				t.Errorf("append below the last block (a note in D5): %v %v", landed, err)
			}
			b.set("History", [][]any{{"id", "x"}, {"H1", "a"}, {"H2", "b"}})
			landed, err = wb.Append(ctx, "History", []any{"H3", "=SUM(1)", 4})
			if err != nil || landed.String() != "History!A4:C4" {
				t.Errorf("append: %v %v", landed, err)
			}
			hist := readTab(t, wb, "History")
			if len(hist) != 4 || hist[3][0] != "H3" || hist[3][1] != "=SUM(1)" || hist[3][2] != 4.0 {
				t.Errorf("after append: %#v", hist)
			}

			if err := wb.Clear(ctx, a1.Rect("History", 4, 2, 4, 3)); err != nil {
				t.Fatal(err)
			}
			if hist := readTab(t, wb, "History"); len(hist[3]) != 1 {
				t.Errorf("after clear: %#v", hist)
			}

			// Ranges that are not in the workbook.
			for _, bad := range []a1.Range{a1.Tab("Nope"), a1.Rect("Clients", 1, 1, 1001, 1), a1.Cell("Clients", 1, 27)} {
				_, err := wb.Read(ctx, []a1.Range{bad}, workbook.DatesSerial)
				var e *mcperr.Error
				if !errors.As(err, &e) || e.Code != mcperr.Validation {
					t.Errorf("read %s: %v", bad, err)
				}
			}

			if err := wb.AddTabs(ctx, []string{"Preferences"}); err != nil {
				t.Fatal(err)
			}
			if err := wb.AddTabs(ctx, []string{"preferences"}); code(err) == "" {
				t.Errorf("duplicate tab: %v", err)
			}
			tabs, _ = wb.Tabs(ctx)
			if len(tabs) != 3 {
				t.Errorf("tabs after AddTabs: %+v", tabs)
			}
			if err := wb.Write(ctx, "Clients", nil); err != nil {
				t.Error(err)
			}
			if v, err := wb.Read(ctx, nil, workbook.DatesSerial); len(v) != 0 || err != nil {
				t.Error(v, err)
			}
		})
	}
}

func TestGoogleRequests(t *testing.T) {
	f, g := newGoogle(t)
	f.SetRows(sid, "Clients", [][]any{{"a", "b", "c"}})
	if err := g.Write(ctx, "Clients", []workbook.Cell{{Row: 2, Col: 1, Value: "x"}, {Row: 2, Col: 2, Value: "y"}, {Row: 2, Col: 3, Value: "z"}, {Row: 3, Col: 2, Value: "w"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Append(ctx, "Clients", []any{"n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Read(ctx, []a1.Range{a1.Tab("Clients")}, workbook.DatesFormatted); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests %+v", reqs)
	}
	if r := reqs[0]; r.Op != sheetsfake.OpBatchUpdate || r.ValueInputOption != "RAW" || strings.Join(r.Ranges, " ") != "Clients!A2:C2 Clients!B3" {
		t.Errorf("write request %+v", r)
	}
	if r := reqs[1]; r.Op != sheetsfake.OpAppend || r.ValueInputOption != "RAW" || r.InsertDataOption != "INSERT_ROWS" || r.Range != "Clients" {
		t.Errorf("append request %+v", r)
	}
	if r := reqs[2]; r.ValueRenderOption != "UNFORMATTED_VALUE" || r.DateTimeRenderOption != "FORMATTED_STRING" {
		t.Errorf("read request %+v", r)
	}
}

func TestGoogleRetriesAndErrors(t *testing.T) {
	f, g := newGoogle(t)
	f.SetRows(sid, "Clients", [][]any{{"a"}})

	// Reads and writes ride out 429, 5xx and Google's 403 rate limits.
	f.Fail(sheetsfake.OpGet, 429, 1, sheetsfake.RetryAfter("0"))
	f.Fail(sheetsfake.OpGet, 503, 1)
	f.Fail(sheetsfake.OpBatchUpdate, 403, 2, sheetsfake.Reason("rateLimitExceeded"))
	if _, err := g.Read(ctx, []a1.Range{a1.Tab("Clients")}, workbook.DatesSerial); err != nil {
		t.Errorf("read after 429+503: %v", err)
	}
	if err := g.Write(ctx, "Clients", []workbook.Cell{{Row: 1, Col: 2, Value: "b"}}); err != nil {
		t.Errorf("write after two 403 rate limits: %v", err)
	}

	// An append is never resent: a 503 after it landed is reported, and the
	// row is there once.
	f.ResetRequests()
	f.Fail(sheetsfake.OpAppend, 503, 1, sheetsfake.AfterApply())
	_, err := g.Append(ctx, "Clients", []any{"once"})
	if code(err) != mcperr.Upstream || len(f.Requests()) != 1 || len(f.Rows(sid, "Clients")) != 2 {
		t.Errorf("append after a lost answer: %v, %d requests, rows %v", err, len(f.Requests()), f.Rows(sid, "Clients"))
	}

	// Rate limits that outlast the retries say so.
	f.Fail(sheetsfake.OpGet, 429, 10, sheetsfake.RetryAfter("0"))
	_, err = g.Read(ctx, []a1.Range{a1.Tab("Clients")}, workbook.DatesSerial)
	if code(err) != mcperr.RateLimit {
		t.Errorf("persistent 429: %v", err)
	}
	for range 10 {
		if _, err := g.Read(ctx, []a1.Range{a1.Tab("Clients")}, workbook.DatesSerial); err == nil {
			break
		}
	}

	f.Deny(sid, true)
	_, err = g.Tabs(ctx)
	if code(err) != mcperr.PermissionDeny || !strings.Contains(err.Error(), "share the spreadsheet with agent@p.iam.gserviceaccount.com") {
		t.Errorf("denied: %v", err)
	}
	f.Deny(sid, false)

	f.Fail(sheetsfake.OpSpreadsheetUpdate, 400, 1)
	if err := g.AddTabs(ctx, []string{"X"}); code(err) != mcperr.Validation {
		t.Errorf("400 on addSheet: %v", err)
	}
	f.Fail(sheetsfake.OpClear, 500, 10)
	if err := g.Clear(ctx, a1.Cell("Clients", 1, 1)); code(err) != mcperr.Upstream {
		t.Errorf("clear on 500s: %v", err)
	}
}

func TestGoogleMissingAndAuth(t *testing.T) {
	f := sheetsfake.New(t)
	f.AddToken("tok")
	mk := func(id string, ts oauth2.TokenSource) *workbook.Google {
		g, err := workbook.NewGoogle(ctx, workbook.GoogleConfig{SpreadsheetID: id, Endpoint: f.URL + "/", TokenSource: ts, Retry: fastRetry})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	_, err := mk("missing", oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})).Tabs(ctx)
	if code(err) != mcperr.NotFound || !strings.Contains(err.Error(), "GOOGLE_SHEETS_CLIENT_DATABASE_ID") {
		t.Errorf("missing spreadsheet: %v", err)
	}
	_, err = mk("missing", oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "wrong"})).Tabs(ctx)
	if code(err) != mcperr.Authentication {
		t.Errorf("rejected token: %v", err)
	}
	_, err = mk("missing", failingSource{}).Tabs(ctx)
	if code(err) != mcperr.Authentication || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "Sheets API") {
		t.Errorf("token source failure: %v", err)
	}
	// A service account Google refuses is explained as gmail explains it.
	_, err = mk("missing", refusedSource{}).Tabs(ctx)
	if code(err) != mcperr.Authentication || !strings.Contains(err.Error(), "domain-wide delegation") {
		t.Errorf("refused service account: %v", err)
	}
	for _, cfg := range []workbook.GoogleConfig{{}, {SpreadsheetID: "x"}} {
		if _, err := workbook.NewGoogle(ctx, cfg); err == nil {
			t.Errorf("NewGoogle(%+v) accepted", cfg)
		}
	}
	// The default endpoint is Google's; nothing is sent until a call.
	g, err := workbook.NewGoogle(ctx, workbook.GoogleConfig{SpreadsheetID: "x", TokenSource: failingSource{}})
	if err != nil || g.Upstream() == nil {
		t.Fatal(err)
	}
}

type failingSource struct{}

type refusedSource struct{}

func (refusedSource) Token() (*oauth2.Token, error) {
	return nil, &oauth2.RetrieveError{ErrorCode: "unauthorized_client"}
}

func (failingSource) Token() (*oauth2.Token, error) {
	return nil, errors.New("oauth2: cannot fetch token: invalid_grant s3cret")
}

func TestLocalFiles(t *testing.T) {
	l := newLocal(t)
	if err := l.Write(ctx, "Clients", []workbook.Cell{{Row: 1, Col: 1, Value: "=HYPERLINK(\"http://evil\")"}, {Row: 1, Col: 2, Value: "plain, with comma"}, {Row: 1, Col: 3, Value: -3}}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(l.Dir(), "Clients.csv")
	b, _ := os.ReadFile(p)
	if got := string(b); got != "\"'=HYPERLINK(\"\"http://evil\"\")\",\"plain, with comma\",'-3\n" {
		t.Errorf("file: %q", got)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if st, _ := os.Stat(l.Dir()); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", st.Mode())
	}
	if got := readTab(t, l, "Clients"); got[0][0] != "=HYPERLINK(\"http://evil\")" || got[0][2] != -3.0 {
		t.Errorf("read back %#v", got)
	}
	entries, _ := os.ReadDir(l.Dir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(l.Dir(), "notes.txt")); err == nil {
		t.Error("a seed file that is not CSV was copied")
	}

	// A person's edit between our read and our rename is kept: the write
	// starts over on the new contents.
	edited := false
	l.SetBeforeCheck(func() {
		if !edited {
			edited = true
			if err := os.WriteFile(p, []byte("someone,else\n"), 0o600); err != nil {
				t.Error(err)
			}
		}
	})
	if err := l.Write(ctx, "Clients", []workbook.Cell{{Row: 2, Col: 1, Value: "ours"}}); err != nil {
		t.Fatal(err)
	}
	l.SetBeforeCheck(nil)
	if got := readTab(t, l, "Clients"); len(got) != 2 || got[0][0] != "someone" || got[1][0] != "ours" {
		t.Errorf("after a concurrent edit: %#v", got)
	}

	// A program that rewrites the file before every one of our writes wins:
	// after a few attempts the write gives up, and says so.
	n := 0
	l.SetBeforeCheck(func() {
		n++
		if err := os.WriteFile(p, []byte(fmt.Sprintf("edit,%d\n", n)), 0o600); err != nil {
			t.Error(err)
		}
	})
	err := l.Write(ctx, "Clients", []workbook.Cell{{Row: 3, Col: 1, Value: "lost?"}})
	l.SetBeforeCheck(nil)
	if code(err) != mcperr.Conflict || !strings.Contains(err.Error(), "kept being changed") {
		t.Errorf("write against a busy editor: %v", err)
	}
	if got := readTab(t, l, "Clients"); len(got) != 1 || got[0][0] != "edit" {
		t.Errorf("the editor's last version is not kept: %#v", got)
	}

	// A file a person saved with a BOM, CRLF and ragged rows.
	if err := os.WriteFile(p, []byte("\ufeffa,b\r\n1\r\n,,\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readTab(t, l, "Clients"); len(got) != 2 || got[0][0] != "a" || got[1][0] != 1.0 {
		t.Errorf("BOM/CRLF: %#v", got)
	}
	if err := os.WriteFile(p, []byte("a,\"b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(ctx, []a1.Range{a1.Tab("Clients")}, workbook.DatesSerial); code(err) != mcperr.Validation {
		t.Errorf("broken CSV: %v", err)
	}
	for _, bad := range []string{"../x", ".hidden", ""} {
		if err := l.AddTabs(ctx, []string{bad}); code(err) != mcperr.Validation {
			t.Errorf("AddTabs(%q): %v", bad, err)
		}
	}
}

func TestLocalSeedAndReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wb")
	seed := fstest.MapFS{"Clients.csv": {Data: []byte("client_id\nCL-001\n")}}
	l, err := workbook.OpenLocal(workbook.LocalConfig{Dir: dir, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(ctx, "Clients", []workbook.Cell{{Row: 2, Col: 1, Value: "CL-002"}}); err != nil {
		t.Fatal(err)
	}
	l2, err := workbook.OpenLocal(workbook.LocalConfig{Dir: dir, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if got := readTab(t, l2, "Clients"); got[1][0] != "CL-002" {
		t.Errorf("reopening seeded again: %#v", got)
	}
	if _, err := workbook.OpenLocal(workbook.LocalConfig{}); err == nil {
		t.Error("no directory accepted")
	}
	file := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(file, nil, 0o600)
	if _, err := workbook.OpenLocal(workbook.LocalConfig{Dir: filepath.Join(file, "sub")}); err == nil {
		t.Error("a directory under a file accepted")
	}
}

func TestLocalLock(t *testing.T) {
	l := newLocal(t)
	unlock, err := l.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A second holder (another process would do the same) waits.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(short); code(err) != mcperr.Timeout {
		t.Errorf("second lock while held: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := l.Lock(ctx)
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Errorf("lock after unlock: %v", err)
	}
}

func TestText(t *testing.T) {
	for v, want := range map[any]string{nil: "", "x": "x", true: "TRUE", false: "FALSE", 12.0: "12", 2.5: "2.5", 7: "7", 1e20: "100000000000000000000", struct{}{}: ""} {
		if got := workbook.Text(v); got != want {
			t.Errorf("Text(%#v) = %q, want %q", v, got, want)
		}
	}
}

// TestGoogleFailureAdvice: what a failed request tells an agent about
// repeating it. An append that failed while Google handled it is not
// retryable (a second one may add the row twice); a rate limit, or a 503
// that says when to come back, is, with the wait; a read's 500 is, and so
// is a write of values, which sets them rather than adding.
func TestGoogleFailureAdvice(t *testing.T) {
	for _, tc := range []struct {
		name       string
		op         string
		status     int
		opts       []sheetsfake.FaultOption
		write      bool
		code       mcperr.Code
		retryable  bool
		retryAfter int
		words      string
	}{
		{name: "append 429 with Retry-After", op: sheetsfake.OpAppend, status: 429, opts: []sheetsfake.FaultOption{sheetsfake.RetryAfter("7")},
			code: mcperr.RateLimit, retryable: true, retryAfter: 7, words: "retry after 7s"},
		{name: "append 500", op: sheetsfake.OpAppend, status: 500, code: mcperr.Upstream, words: "POST request before failing, so the outcome is unknown"},
		{name: "append 503", op: sheetsfake.OpAppend, status: 503, code: mcperr.Upstream, words: "the outcome is unknown"},
		{name: "append 503 with Retry-After", op: sheetsfake.OpAppend, status: 503, opts: []sheetsfake.FaultOption{sheetsfake.RetryAfter("7")},
			code: mcperr.Upstream, retryable: true, retryAfter: 7, words: "retry after 7s"},
		{name: "read 500", op: sheetsfake.OpGet, status: 500, code: mcperr.Upstream, retryable: true, words: "HTTP 500"},
		{name: "write 500", op: sheetsfake.OpBatchUpdate, status: 500, write: true, code: mcperr.Upstream, retryable: true, words: "HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, g := newGoogle(t)
			f.SetRows(sid, "Clients", [][]any{{"a"}})
			// More failures than attempts: the last answer is what is told.
			f.Fail(tc.op, tc.status, 10, tc.opts...)
			var err error
			switch {
			case tc.op == sheetsfake.OpAppend:
				_, err = g.Append(ctx, "Clients", []any{"x"})
			case tc.write:
				err = g.Write(ctx, "Clients", []workbook.Cell{{Row: 1, Col: 2, Value: "b"}})
			default:
				_, err = g.Read(ctx, []a1.Range{a1.Tab("Clients")}, workbook.DatesSerial)
			}
			b := mcperr.Wrap(err).Body()
			if b.Code != tc.code || b.Data.Retryable != tc.retryable || !strings.Contains(b.Message, tc.words) {
				t.Fatalf("%s retryable=%v %q, want %s retryable=%v with %q", b.Code, b.Data.Retryable, b.Message, tc.code, tc.retryable, tc.words)
			}
			if got := b.Data.RetryAfterSeconds; (got == nil) != (tc.retryAfter == 0) || (got != nil && *got != tc.retryAfter) {
				t.Errorf("retry_after_seconds %v, want %d", got, tc.retryAfter)
			}
		})
	}
}
