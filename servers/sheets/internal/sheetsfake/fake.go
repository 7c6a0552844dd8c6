// Package sheetsfake is an in-memory Google Sheets API (v4) on an httptest
// server, for tests that drive the real google.golang.org/api/sheets/v4
// client. It keeps a real grid per tab and checks what the service checks:
// bearer tokens (issued by its own OAuth token endpoint to a service
// account's signed JWT, or registered by the test), spreadsheet access, A1
// ranges against each tab's grid, values.append's table detection and
// insertDataOption, and valueInputOption — RAW stores "=1+1" as text while
// USER_ENTERED makes it a formula, so a test can prove which one a client
// sent. Tests act as the people sharing the sheet (Sort, Shuffle,
// InsertRow, SetRows), run code between requests (OnRequest), and make
// requests fail with 429/5xx before or after they take effect (Fail).
package sheetsfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
)

// Default grid of a new tab, as in Google Sheets.
const (
	DefaultRows = 1000
	DefaultCols = 26
)

// Operation names, as used by Fail, OnRequest and Requests.
const (
	OpSpreadsheetGet    = "spreadsheets.get"
	OpSpreadsheetUpdate = "spreadsheets.batchUpdate"
	OpGet               = "values.get"
	OpBatchGet          = "values.batchGet"
	OpUpdate            = "values.update"
	OpAppend            = "values.append"
	OpBatchUpdate       = "values.batchUpdate"
	OpClear             = "values.clear"
	OpToken             = "token"
)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's base URL; point a client at it with
	// option.WithEndpoint(URL + "/").
	URL string
	ts  *httptest.Server

	mu       sync.Mutex
	books    map[string]*book
	tokens   map[string]bool
	denied   map[string]bool
	accounts googleauthtest.ServiceAccounts
	faults   []*fault
	hook     func(op string)
	requests []Request
	issued   int
	now      func() time.Time
}

// Request is what the fake saw of one API request.
type Request struct {
	Op                   string
	Spreadsheet          string
	Range                string   // values.get/update/append/clear
	Ranges               []string // values.batchGet, and the data ranges of values.batchUpdate
	ValueInputOption     string
	InsertDataOption     string
	ValueRenderOption    string
	DateTimeRenderOption string
	Status               int
}

type book struct {
	id     string
	title  string
	sheets []*sheet
	nextID int64
}

type sheet struct {
	id         int64
	title      string
	rows, cols int
	cells      [][]cell // row-major, only as far as data was ever written
}

type kind int

const (
	empty kind = iota
	text
	number
	boolean
	formula
)

type cell struct {
	kind    kind
	s       string  // text, or the formula
	n       float64 // number (a date's serial number when date is set)
	b       bool
	date    bool
	display any // a formula's value
}

// New starts a fake with no spreadsheets; it stops with the test.
func New(t testing.TB) *Server {
	s := &Server{books: map[string]*book{}, tokens: map[string]bool{}, denied: map[string]bool{}, now: time.Now}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.ts.URL
	t.Cleanup(s.ts.Close)
	return s
}

// AddToken makes tok a valid bearer token.
func (s *Server) AddToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[tok] = true
}

// AddSpreadsheet creates a spreadsheet with the given tabs (each of the
// default grid) and returns nothing; SetRows fills them.
func (s *Server) AddSpreadsheet(id string, tabs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &book{id: id, title: "Spreadsheet " + id, nextID: 1}
	for _, t := range tabs {
		b.add(t)
	}
	s.books[id] = b
}

// Deny makes every request to spreadsheet id fail with 403, as when the
// sheet is not shared with the caller.
func (s *Server) Deny(id string, denied bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied[id] = denied
}

func (b *book) add(title string) *sheet {
	sh := &sheet{id: b.nextID * 1000003 % 2147483647, title: title, rows: DefaultRows, cols: DefaultCols}
	if b.nextID == 1 {
		sh.id = 0
	}
	b.nextID++
	b.sheets = append(b.sheets, sh)
	return sh
}

func (b *book) sheet(title string) *sheet {
	for _, sh := range b.sheets {
		if sh.title == title {
			return sh
		}
	}
	// Google matches tab names without regard to case.
	for _, sh := range b.sheets {
		if strings.EqualFold(sh.title, title) {
			return sh
		}
	}
	return nil
}

// SetRows replaces a tab's contents from row 1, as a person typing would
// (strings, float64/int numbers, bools; nil leaves a cell empty). Strings
// are stored as text, never parsed.
func (s *Server) SetRows(id, tab string, rows [][]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.mustSheet(id, tab)
	sh.cells = nil
	for r, row := range rows {
		for c, v := range row {
			sh.set(r+1, c+1, rawCell(v))
		}
	}
	sh.rows = max(sh.rows, len(rows))
}

// SetCell sets one cell as a person typing into the sheet would
// (USER_ENTERED: "=…" becomes a formula, "12" a number).
func (s *Server) SetCell(id, tab string, row, col int, input string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustSheet(id, tab).set(row, col, userEntered(input))
}

// SetDate stores a date cell (a serial number formatted as a date), as the
// Sheets UI does when a person types a date.
func (s *Server) SetDate(id, tab string, row, col int, d time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustSheet(id, tab).set(row, col, cell{kind: number, n: serial(d), date: true})
}

func (s *Server) mustSheet(id, tab string) *sheet {
	b := s.books[id]
	if b == nil {
		panic("sheetsfake: no spreadsheet " + id)
	}
	sh := b.sheet(tab)
	if sh == nil {
		panic("sheetsfake: no tab " + tab)
	}
	return sh
}

// Rows returns a tab's values (numbers as float64, text as string, formulas
// as their value, empty cells as nil), trailing empties trimmed.
func (s *Server) Rows(id, tab string) [][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.mustSheet(id, tab)
	var out [][]any
	for r := 1; r <= len(sh.cells); r++ {
		var row []any
		for c := 1; c <= len(sh.cells[r-1]); c++ {
			cl := sh.get(r, c)
			if cl.kind == empty {
				row = append(row, nil)
				continue
			}
			row = append(row, cl.value(renderUnformatted, "SERIAL_NUMBER"))
		}
		out = append(out, row)
	}
	return out
}

// CellInfo describes one stored cell.
type CellInfo struct {
	// Kind is "empty", "text", "number", "bool" or "formula".
	Kind    string
	Value   any // text, number or bool; a formula's computed value
	Formula string
	Date    bool
}

// Cell inspects one cell.
func (s *Server) Cell(id, tab string, row, col int) CellInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl := s.mustSheet(id, tab).get(row, col)
	info := CellInfo{Kind: [...]string{"empty", "text", "number", "bool", "formula"}[cl.kind], Date: cl.date}
	if cl.kind == formula {
		info.Formula = cl.s
		info.Value = cl.display
	} else if cl.kind != empty {
		info.Value = cl.value(renderUnformatted, "SERIAL_NUMBER")
	}
	return info
}

// Grid returns a tab's grid size.
func (s *Server) Grid(id, tab string) (rows, cols int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.mustSheet(id, tab)
	return sh.rows, sh.cols
}

// Sort reorders a tab's rows below the header (row 2 to the last row with
// data) by the text of column col, as a person sorting the sheet does.
func (s *Server) Sort(id, tab string, col int, descending bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.mustSheet(id, tab)
	if len(sh.cells) < 3 {
		return
	}
	body := sh.cells[1:]
	slices.SortStableFunc(body, func(a, b []cell) int {
		x, y := sortKey(a, col), sortKey(b, col)
		if descending {
			return cmp.Compare(y, x)
		}
		return cmp.Compare(x, y)
	})
}

func sortKey(row []cell, col int) string {
	if col-1 >= len(row) {
		return ""
	}
	v := row[col-1].value(renderFormatted, "")
	str, _ := v.(string)
	return str
}

// Shuffle puts a tab's rows below the header in a random order drawn from
// seed, so a test can reorder the sheet reproducibly.
func (s *Server) Shuffle(id, tab string, seed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.mustSheet(id, tab)
	if len(sh.cells) < 3 {
		return
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	body := sh.cells[1:]
	r.Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
}

// InsertRow inserts an empty row before row at, shifting the rows below
// down, as a person inserting a row does.
func (s *Server) InsertRow(id, tab string, at int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustSheet(id, tab).insertRows(at, 1)
}

// OnRequest sets a function run before each API request is applied (nil
// removes it). It runs outside the fake's lock, so it may call the fake.
func (s *Server) OnRequest(f func(op string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = f
}

// runHook runs the OnRequest function before op, outside the lock.
func (s *Server) runHook(op string) {
	s.mu.Lock()
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook(op)
	}
}

// Requests returns the requests served so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ResetRequests forgets the requests served so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

type fault struct {
	op         string
	status     int
	times      int
	after      bool // apply the request, then fail
	retryAfter string
	reason     string
}

// FaultOption adjusts a fault.
type FaultOption func(*fault)

// AfterApply makes the request take effect before it fails, as when the
// response is lost on the way back.
func AfterApply() FaultOption { return func(f *fault) { f.after = true } }

// RetryAfter sets the Retry-After header of the failure.
func RetryAfter(v string) FaultOption { return func(f *fault) { f.retryAfter = v } }

// Reason sets the reason in the error document, e.g. "rateLimitExceeded"
// for Google's 403 rate limits.
func Reason(r string) FaultOption { return func(f *fault) { f.reason = r } }

// Fail makes the next `times` requests of operation op fail with status.
func (s *Server) Fail(op string, status, times int, opts ...FaultOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &fault{op: op, status: status, times: times}
	for _, o := range opts {
		o(f)
	}
	s.faults = append(s.faults, f)
}

// takeFault returns the fault that applies to op before (after=false) or
// after the request takes effect, consuming one use.
func (s *Server) takeFault(op string, after bool) *fault {
	for i, f := range s.faults {
		if f.op == op && f.times > 0 && f.after == after {
			f.times--
			if f.times == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

// apiError is a failure in Google's error document shape.
type apiError struct {
	status  int
	message string
	reason  string
	header  map[string]string
}

func (e *apiError) Error() string { return e.message }

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

var statusNames = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
	404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

var reasons = map[int]string{400: "badRequest", 401: "authError", 403: "forbidden", 404: "notFound",
	429: "rateLimitExceeded", 500: "backendError", 503: "backendError"}

func writeError(w http.ResponseWriter, e *apiError) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	reason := e.reason
	if reason == "" {
		reason = reasons[e.status]
	}
	status := statusNames[e.status]
	if status == "" {
		status = "UNKNOWN"
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": e.status, "message": e.message, "status": status,
		"errors": []map[string]any{{"message": e.message, "domain": "global", "reason": reason}},
	}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		s.serveToken(w, r)
		return
	}
	op, id, rng, err := route(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.runHook(op)
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	req := Request{Op: op, Spreadsheet: id, Range: rng, ValueInputOption: q.Get("valueInputOption"),
		InsertDataOption: q.Get("insertDataOption"), ValueRenderOption: q.Get("valueRenderOption"),
		DateTimeRenderOption: q.Get("dateTimeRenderOption"), Ranges: q["ranges"]}
	status, body, aerr := s.handle(r, &req, op, id, rng)
	if aerr == nil {
		if f := s.takeFault(op, true); f != nil {
			aerr = &apiError{status: f.status, message: "injected failure after the request was applied", reason: f.reason,
				header: retryHeader(f)}
		}
	}
	if aerr != nil {
		req.Status = aerr.status
		s.requests = append(s.requests, req)
		writeError(w, aerr)
		return
	}
	req.Status = status
	s.requests = append(s.requests, req)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func retryHeader(f *fault) map[string]string {
	if f.retryAfter == "" {
		return nil
	}
	return map[string]string{"Retry-After": f.retryAfter}
}

// handle checks the request and applies it; faults that strike before the
// request takes effect are taken here.
func (s *Server) handle(r *http.Request, req *Request, op, id, rng string) (int, any, *apiError) {
	if err := s.checkAuth(r); err != nil {
		return 0, nil, err
	}
	if q := r.URL.Query(); q.Get("alt") != "json" || q.Get("prettyPrint") != "false" {
		return 0, nil, errorf(400, "the Google API client always sends alt=json&prettyPrint=false; got %q", r.URL.RawQuery)
	}
	if f := s.takeFault(op, false); f != nil {
		msg := "injected failure"
		if f.status == 429 || f.reason == "rateLimitExceeded" || f.reason == "userRateLimitExceeded" {
			msg = "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user'"
		}
		return 0, nil, &apiError{status: f.status, message: msg, reason: f.reason, header: retryHeader(f)}
	}
	b := s.books[id]
	if b == nil {
		return 0, nil, errorf(404, "Requested entity was not found.")
	}
	if s.denied[id] {
		return 0, nil, errorf(403, "The caller does not have permission")
	}
	wantMethod := map[string]string{OpSpreadsheetGet: "GET", OpSpreadsheetUpdate: "POST", OpGet: "GET", OpBatchGet: "GET",
		OpUpdate: "PUT", OpAppend: "POST", OpBatchUpdate: "POST", OpClear: "POST"}[op]
	if r.Method != wantMethod {
		return 0, nil, errorf(404, "%s is not served by %s", op, r.Method)
	}
	if r.Method != "GET" && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return 0, nil, errorf(400, "request body must be JSON, got Content-Type %q", r.Header.Get("Content-Type"))
	}
	switch op {
	case OpSpreadsheetGet:
		return 200, b.describe(), nil
	case OpSpreadsheetUpdate:
		return b.batchUpdate(r)
	case OpGet:
		vr, err := b.read(rng, r.URL.Query())
		if err != nil {
			return 0, nil, err
		}
		return 200, vr, nil
	case OpBatchGet:
		q := r.URL.Query()
		if len(q["ranges"]) == 0 {
			return 0, nil, errorf(400, "ranges is required")
		}
		var out []any
		for _, one := range q["ranges"] {
			vr, err := b.read(one, q)
			if err != nil {
				return 0, nil, err
			}
			out = append(out, vr)
		}
		return 200, map[string]any{"spreadsheetId": id, "valueRanges": out}, nil
	case OpUpdate:
		return b.update(r, rng)
	case OpAppend:
		return b.append(r, rng)
	case OpBatchUpdate:
		return b.batchValues(r, req)
	case OpClear:
		return b.clear(rng)
	}
	return 0, nil, errorf(404, "unknown operation")
}

func (s *Server) checkAuth(r *http.Request) *apiError {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || !s.tokens[tok] {
		return &apiError{status: 401, message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."}
	}
	return nil
}

// route reads the operation, spreadsheet id and range from the path.
func route(r *http.Request) (op, id, rng string, err *apiError) {
	p, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v4/spreadsheets/")
	if !ok || p == "" {
		return "", "", "", errorf(404, "not a Sheets API v4 path: %s", r.URL.Path)
	}
	head, rest, hasRest := strings.Cut(p, "/")
	if !hasRest {
		if sid, ok := strings.CutSuffix(head, ":batchUpdate"); ok {
			return OpSpreadsheetUpdate, unescape(sid), "", nil
		}
		return OpSpreadsheetGet, unescape(head), "", nil
	}
	id = unescape(head)
	switch {
	case rest == "values:batchGet":
		return OpBatchGet, id, "", nil
	case rest == "values:batchUpdate":
		return OpBatchUpdate, id, "", nil
	case strings.HasPrefix(rest, "values/"):
		seg := strings.TrimPrefix(rest, "values/")
		if x, ok := strings.CutSuffix(seg, ":append"); ok {
			return OpAppend, id, unescape(x), nil
		}
		if x, ok := strings.CutSuffix(seg, ":clear"); ok {
			return OpClear, id, unescape(x), nil
		}
		if r.Method == http.MethodPut {
			return OpUpdate, id, unescape(seg), nil
		}
		return OpGet, id, unescape(seg), nil
	}
	return "", "", "", errorf(404, "the fake does not serve %s", r.URL.Path)
}

func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// parseRange resolves an A1 range to its tab, as the API does; a range
// without a tab name means the first tab.
func (b *book) parseRange(s string) (*sheet, a1.Range, *apiError) {
	if s == "" {
		return nil, a1.Range{}, errorf(400, "Unable to parse range: ")
	}
	r, err := a1.Parse(s)
	if err != nil {
		// "A1:B2" without a tab: the first tab.
		if len(b.sheets) > 0 && !strings.Contains(s, "!") {
			if r2, err2 := a1.Parse(a1.QuoteSheet(b.sheets[0].title) + "!" + s); err2 == nil {
				return b.sheets[0], r2, nil
			}
		}
		return nil, a1.Range{}, errorf(400, "Unable to parse range: %s", s)
	}
	sh := b.sheet(r.Sheet)
	if sh == nil {
		if !strings.Contains(s, "!") && len(b.sheets) > 0 {
			if r2, err2 := a1.Parse(a1.QuoteSheet(b.sheets[0].title) + "!" + s); err2 == nil {
				return b.sheets[0], r2, nil
			}
		}
		return nil, a1.Range{}, errorf(400, "Unable to parse range: %s", s)
	}
	r.Sheet = sh.title
	return sh, r, nil
}

func gridError(r a1.Range, sh *sheet) *apiError {
	return errorf(400, "Range (%s) exceeds grid limits. Max rows: %d, max columns: %d", r, sh.rows, sh.cols)
}

func (b *book) describe() map[string]any {
	var sheets []any
	for i, sh := range b.sheets {
		sheets = append(sheets, map[string]any{"properties": sh.properties(i)})
	}
	return map[string]any{"spreadsheetId": b.id, "properties": map[string]any{"title": b.title, "locale": "en_US", "timeZone": "Etc/GMT"},
		"sheets": sheets}
}

func (sh *sheet) properties(index int) map[string]any {
	return map[string]any{"sheetId": sh.id, "title": sh.title, "index": index, "sheetType": "GRID",
		"gridProperties": map[string]any{"rowCount": sh.rows, "columnCount": sh.cols}}
}

func (b *book) batchUpdate(r *http.Request) (int, any, *apiError) {
	var body struct {
		Requests []map[string]json.RawMessage `json:"requests"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return 0, nil, errorf(400, "Invalid JSON payload received. %v", err)
	}
	var titles []string
	for i, req := range body.Requests {
		raw, ok := req["addSheet"]
		if !ok || len(req) != 1 {
			return 0, nil, errorf(400, "the fake serves addSheet requests only (request %d)", i)
		}
		var add struct {
			Properties struct {
				Title string `json:"title"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &add); err != nil {
			return 0, nil, errorf(400, "Invalid addSheet: %v", err)
		}
		t := add.Properties.Title
		if t == "" {
			return 0, nil, errorf(400, "Invalid requests[%d].addSheet: the sheet needs a title", i)
		}
		if b.sheet(t) != nil || slices.ContainsFunc(titles, func(x string) bool { return strings.EqualFold(x, t) }) {
			return 0, nil, errorf(400, "Invalid requests[%d].addSheet: A sheet with the name \"%s\" already exists. Please enter another name.", i, t)
		}
		titles = append(titles, t)
	}
	var replies []any
	for _, t := range titles {
		sh := b.add(t)
		replies = append(replies, map[string]any{"addSheet": map[string]any{"properties": sh.properties(len(b.sheets) - 1)}})
	}
	return 200, map[string]any{"spreadsheetId": b.id, "replies": replies}, nil
}

const (
	renderFormatted   = "FORMATTED_VALUE"
	renderUnformatted = "UNFORMATTED_VALUE"
	renderFormula     = "FORMULA"
)

// read answers values.get for one range.
func (b *book) read(rng string, q url.Values) (map[string]any, *apiError) {
	sh, r, err := b.parseRange(rng)
	if err != nil {
		return nil, err
	}
	render := cmp.Or(q.Get("valueRenderOption"), renderFormatted)
	dates := cmp.Or(q.Get("dateTimeRenderOption"), "SERIAL_NUMBER")
	if !slices.Contains([]string{renderFormatted, renderUnformatted, renderFormula}, render) {
		return nil, errorf(400, "Invalid value at 'value_render_option' (%s)", render)
	}
	if !slices.Contains([]string{"SERIAL_NUMBER", "FORMATTED_STRING"}, dates) {
		return nil, errorf(400, "Invalid value at 'date_time_render_option' (%s)", dates)
	}
	if dim := q.Get("majorDimension"); dim != "" && dim != "ROWS" {
		return nil, errorf(400, "the fake serves majorDimension ROWS only")
	}
	res, gerr := r.Resolve(sh.rows, sh.cols)
	if gerr != nil {
		return nil, gridError(r, sh)
	}
	var values [][]any
	lastRow := 0
	for row := res.StartRow; row <= res.EndRow && row <= len(sh.cells); row++ {
		var vals []any
		last := 0
		for col := res.StartCol; col <= res.EndCol && col <= len(sh.cells[row-1]); col++ {
			cl := sh.get(row, col)
			if cl.kind == empty {
				vals = append(vals, "")
				continue
			}
			vals = append(vals, cl.value(render, dates))
			last = len(vals)
		}
		vals = vals[:last]
		values = append(values, vals)
		if last > 0 {
			lastRow = len(values)
		}
	}
	values = values[:lastRow]
	out := map[string]any{"range": res.String(), "majorDimension": "ROWS"}
	if len(values) > 0 {
		// Empty rows inside the data are sent as [].
		for i := range values {
			if values[i] == nil {
				values[i] = []any{}
			}
		}
		out["values"] = values
	}
	return out, nil
}

// valueRange is a ValueRange in a request body.
type valueRange struct {
	Range          string              `json:"range"`
	MajorDimension string              `json:"majorDimension"`
	Values         [][]json.RawMessage `json:"values"`
}

func decodeInput(r *http.Request, v any) *apiError {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return errorf(400, "Invalid JSON payload received. %v", err)
	}
	return nil
}

func inputOption(opt string) *apiError {
	switch opt {
	case "RAW", "USER_ENTERED":
		return nil
	case "":
		return errorf(400, "'valueInputOption' is required but not specified")
	}
	return errorf(400, "Invalid value at 'value_input_option' (%s)", opt)
}

// write checks and applies one ValueRange: the values must fit in the
// range, which must fit in the grid. apply=false only checks.
func (b *book) write(vr valueRange, rng string, opt string, apply bool) (map[string]any, *apiError) {
	sh, r, err := b.parseRange(rng)
	if err != nil {
		return nil, err
	}
	if vr.Range != "" {
		_, vr2, err := b.parseRange(vr.Range)
		if err != nil {
			return nil, err
		}
		if vr2 != r {
			return nil, errorf(400, "Requested writing within range [%s], but the body names [%s]", r, vr.Range)
		}
	}
	if vr.MajorDimension != "" && vr.MajorDimension != "ROWS" {
		return nil, errorf(400, "the fake serves majorDimension ROWS only")
	}
	res, gerr := r.Resolve(sh.rows, sh.cols)
	if gerr != nil {
		return nil, gridError(r, sh)
	}
	cells := 0
	width := 0
	for i, row := range vr.Values {
		if res.StartRow+i > res.EndRow {
			return nil, errorf(400, "Requested writing within range [%s], but tried writing to row [%d]", r, res.StartRow+i)
		}
		if res.StartCol+len(row)-1 > res.EndCol {
			return nil, errorf(400, "Requested writing within range [%s], but tried writing to column [%s]", r, a1.ColumnLetters(res.StartCol+len(row)-1))
		}
		for j, raw := range row {
			c, skip, err := parseInput(raw, opt)
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			cells++
			width = max(width, j+1)
			if apply {
				sh.set(res.StartRow+i, res.StartCol+j, c)
			}
		}
	}
	updated := a1.Rect(sh.title, res.StartRow, res.StartCol, res.StartRow+max(len(vr.Values), 1)-1, res.StartCol+max(width, 1)-1)
	return map[string]any{"spreadsheetId": b.id, "updatedRange": updated.String(), "updatedRows": len(vr.Values),
		"updatedColumns": width, "updatedCells": cells}, nil
}

func (b *book) update(r *http.Request, rng string) (int, any, *apiError) {
	opt := r.URL.Query().Get("valueInputOption")
	if err := inputOption(opt); err != nil {
		return 0, nil, err
	}
	var vr valueRange
	if err := decodeInput(r, &vr); err != nil {
		return 0, nil, err
	}
	if _, err := b.write(vr, rng, opt, false); err != nil {
		return 0, nil, err
	}
	res, _ := b.write(vr, rng, opt, true)
	return 200, res, nil
}

func (b *book) batchValues(r *http.Request, req *Request) (int, any, *apiError) {
	var body struct {
		ValueInputOption string       `json:"valueInputOption"`
		Data             []valueRange `json:"data"`
	}
	if err := decodeInput(r, &body); err != nil {
		return 0, nil, err
	}
	req.ValueInputOption = body.ValueInputOption
	if err := inputOption(body.ValueInputOption); err != nil {
		return 0, nil, err
	}
	if len(body.Data) == 0 {
		return 0, nil, errorf(400, "data is required")
	}
	for _, vr := range body.Data {
		req.Ranges = append(req.Ranges, vr.Range)
		if _, err := b.write(vr, vr.Range, body.ValueInputOption, false); err != nil {
			return 0, nil, err
		}
	}
	var responses []any
	total := 0
	for _, vr := range body.Data {
		res, _ := b.write(vr, vr.Range, body.ValueInputOption, true)
		total += res["updatedCells"].(int)
		responses = append(responses, res)
	}
	return 200, map[string]any{"spreadsheetId": b.id, "totalUpdatedCells": total, "responses": responses}, nil
}

func (b *book) append(r *http.Request, rng string) (int, any, *apiError) {
	q := r.URL.Query()
	opt := q.Get("valueInputOption")
	if err := inputOption(opt); err != nil {
		return 0, nil, err
	}
	insert := cmp.Or(q.Get("insertDataOption"), "OVERWRITE")
	if insert != "OVERWRITE" && insert != "INSERT_ROWS" {
		return 0, nil, errorf(400, "Invalid value at 'insert_data_option' (%s)", insert)
	}
	var vr valueRange
	if err := decodeInput(r, &vr); err != nil {
		return 0, nil, err
	}
	sh, rg, err := b.parseRange(rng)
	if err != nil {
		return 0, nil, err
	}
	if len(vr.Values) == 0 {
		return 0, nil, errorf(400, "values are required")
	}
	width := 0
	for _, row := range vr.Values {
		width = max(width, len(row))
	}
	var parsed [][]cell
	var skips [][]bool
	for _, row := range vr.Values {
		var cs []cell
		var sk []bool
		for _, raw := range row {
			c, skip, err := parseInput(raw, opt)
			if err != nil {
				return 0, nil, err
			}
			cs = append(cs, c)
			sk = append(sk, skip)
		}
		parsed = append(parsed, cs)
		skips = append(skips, sk)
	}
	if _, gerr := (a1.Range{Sheet: rg.Sheet, StartRow: rg.StartRow, StartCol: rg.StartCol, EndRow: rg.StartRow, EndCol: rg.StartCol}).Resolve(sh.rows, sh.cols); gerr != nil {
		return 0, nil, gridError(rg, sh)
	}
	row, col, table, found := a1.AppendTarget(sh.filled(), rg)
	if col+width-1 > sh.cols {
		sh.cols = col + width - 1
	}
	if insert == "INSERT_ROWS" {
		sh.insertRows(row, len(parsed))
	} else if row+len(parsed)-1 > sh.rows {
		sh.rows = row + len(parsed) - 1
	}
	cells := 0
	for i, cs := range parsed {
		for j, c := range cs {
			if skips[i][j] {
				continue
			}
			sh.set(row+i, col+j, c)
			cells++
		}
	}
	out := map[string]any{"spreadsheetId": b.id, "updates": map[string]any{
		"spreadsheetId": b.id, "updatedRange": a1.Rect(sh.title, row, col, row+len(parsed)-1, col+width-1).String(),
		"updatedRows": len(parsed), "updatedColumns": width, "updatedCells": cells}}
	if found {
		table.Sheet = sh.title
		out["tableRange"] = table.String()
	}
	return 200, out, nil
}

func (b *book) clear(rng string) (int, any, *apiError) {
	sh, r, err := b.parseRange(rng)
	if err != nil {
		return 0, nil, err
	}
	res, gerr := r.Resolve(sh.rows, sh.cols)
	if gerr != nil {
		return 0, nil, gridError(r, sh)
	}
	for row := res.StartRow; row <= res.EndRow && row <= len(sh.cells); row++ {
		for col := res.StartCol; col <= res.EndCol && col <= len(sh.cells[row-1]); col++ {
			sh.cells[row-1][col-1] = cell{}
		}
	}
	return 200, map[string]any{"spreadsheetId": b.id, "clearedRange": res.String()}, nil
}

// parseInput turns one JSON input value into a cell by valueInputOption.
// null skips the cell, as in the API.
func parseInput(raw json.RawMessage, opt string) (cell, bool, *apiError) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return cell{}, false, errorf(400, "Invalid value: %v", err)
	}
	switch x := v.(type) {
	case nil:
		return cell{}, true, nil
	case bool:
		return cell{kind: boolean, b: x}, false, nil
	case float64:
		return cell{kind: number, n: x}, false, nil
	case string:
		if opt == "RAW" {
			return rawCell(x), false, nil
		}
		return userEntered(x), false, nil
	}
	return cell{}, false, errorf(400, "Invalid value at 'data.values' (type %T): a cell takes a string, number or boolean", v)
}

func rawCell(v any) cell {
	switch x := v.(type) {
	case nil:
		return cell{}
	case string:
		if x == "" {
			return cell{}
		}
		return cell{kind: text, s: x}
	case bool:
		return cell{kind: boolean, b: x}
	case int:
		return cell{kind: number, n: float64(x)}
	case float64:
		return cell{kind: number, n: x}
	}
	panic(fmt.Sprintf("sheetsfake: cell value of type %T", v))
}

// userEntered parses input as the Sheets UI does: formulas, a leading
// apostrophe forcing text, booleans, numbers and ISO dates.
func userEntered(in string) cell {
	switch {
	case in == "":
		return cell{}
	case strings.HasPrefix(in, "="):
		return cell{kind: formula, s: in, display: evaluate(in[1:])}
	case strings.HasPrefix(in, "'"):
		return cell{kind: text, s: in[1:]}
	case strings.EqualFold(in, "TRUE"), strings.EqualFold(in, "FALSE"):
		return cell{kind: boolean, b: strings.EqualFold(in, "TRUE")}
	}
	if n, err := strconv.ParseFloat(strings.TrimSpace(in), 64); err == nil && !math.IsInf(n, 0) && !math.IsNaN(n) {
		return cell{kind: number, n: n}
	}
	if d, err := time.Parse("2006-01-02", strings.TrimSpace(in)); err == nil {
		return cell{kind: number, n: serial(d), date: true}
	}
	return cell{kind: text, s: in}
}

// evaluate computes a formula of numbers, + - * / and parentheses; any other
// formula (a function call such as IMPORTXML) gives the error value "#NAME?"
// (the fake does not run functions).
func evaluate(expr string) any {
	p := &parser{s: strings.ReplaceAll(expr, " ", "")}
	v, ok := p.sum()
	if !ok || p.i != len(p.s) {
		return "#NAME?"
	}
	return v
}

type parser struct {
	s string
	i int
}

func (p *parser) sum() (float64, bool) { return p.chain("+-", p.product) }

func (p *parser) product() (float64, bool) { return p.chain("*/", p.atom) }

// chain reads operands with operand joined by any of the operators ops,
// left to right.
func (p *parser) chain(ops string, operand func() (float64, bool)) (float64, bool) {
	v, ok := operand()
	for ok && p.i < len(p.s) && strings.IndexByte(ops, p.s[p.i]) >= 0 {
		op := p.s[p.i]
		p.i++
		var w float64
		w, ok = operand()
		switch op {
		case '+':
			v += w
		case '-':
			v -= w
		case '*':
			v *= w
		case '/':
			v /= w
		}
	}
	return v, ok
}

func (p *parser) atom() (float64, bool) {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		v, ok := p.sum()
		if !ok || p.i >= len(p.s) || p.s[p.i] != ')' {
			return 0, false
		}
		p.i++
		return v, true
	}
	j := p.i
	for j < len(p.s) && (p.s[j] == '.' || (p.s[j] >= '0' && p.s[j] <= '9')) {
		j++
	}
	n, err := strconv.ParseFloat(p.s[p.i:j], 64)
	if err != nil {
		return 0, false
	}
	p.i = j
	return n, true
}

var epoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

func serial(d time.Time) float64 {
	return d.Sub(epoch).Hours() / 24
}

// value renders a cell for a read.
func (c cell) value(render, dates string) any {
	switch c.kind {
	case text:
		return c.s
	case boolean:
		if render == renderFormatted {
			return strings.ToUpper(strconv.FormatBool(c.b))
		}
		return c.b
	case formula:
		if render == renderFormula {
			return c.s
		}
		if n, ok := c.display.(float64); ok && render == renderFormatted {
			return strconv.FormatFloat(n, 'f', -1, 64)
		}
		return c.display
	case number:
		if c.date && (render == renderFormatted || dates == "FORMATTED_STRING") {
			return epoch.Add(time.Duration(c.n * 24 * float64(time.Hour))).Format("2006-01-02")
		}
		if render == renderFormatted {
			return strconv.FormatFloat(c.n, 'f', -1, 64)
		}
		return c.n
	}
	return ""
}

func (sh *sheet) get(row, col int) cell {
	if row-1 >= len(sh.cells) || col-1 >= len(sh.cells[row-1]) {
		return cell{}
	}
	return sh.cells[row-1][col-1]
}

func (sh *sheet) set(row, col int, c cell) {
	for len(sh.cells) < row {
		sh.cells = append(sh.cells, nil)
	}
	r := sh.cells[row-1]
	for len(r) < col {
		r = append(r, cell{})
	}
	r[col-1] = c
	sh.cells[row-1] = r
	sh.rows = max(sh.rows, row)
	sh.cols = max(sh.cols, col)
}

func (sh *sheet) insertRows(at, n int) {
	sh.rows += n
	if at-1 >= len(sh.cells) {
		return
	}
	blank := make([][]cell, n)
	sh.cells = slices.Insert(sh.cells, at-1, blank...)
}

// filled maps the cells that hold a value.
func (sh *sheet) filled() [][]bool {
	out := make([][]bool, len(sh.cells))
	for i, row := range sh.cells {
		out[i] = make([]bool, len(row))
		for j, c := range row {
			out[i][j] = c.kind != empty
		}
	}
	return out
}
