package workbook

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"
	"github.com/mcp-fleet/mcp-fleet/shared/atomicfile"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Grid of a tab of the local workbook: at least what a new Google tab has,
// and as much as its data needs.
const (
	LocalMinRows = 1000
	LocalMinCols = 26
)

// maxLocalFile bounds the CSV file of one tab (read whole on every call).
const maxLocalFile = 64 << 20

// LocalConfig configures a local workbook.
type LocalConfig struct {
	// Dir holds one <tab>.csv file per tab.
	Dir string
	// Seed, when set, fills a new workbook: if Dir has no CSV file yet, the
	// .csv files at Seed's top level are copied into it.
	Seed fs.FS
}

// Local is a workbook in a directory of CSV files, one per tab, named
// <tab>.csv, with the same semantics as a Google spreadsheet: cells by
// position, the same grid limits, append's table detection with inserted
// rows, RAW text. Every write rewrites its file atomically (a temporary
// file, fsync, rename), so a reader — or a person's spreadsheet program —
// sees the old or the new file, never half of one. A write also re-reads
// the file first and starts over if someone else replaced it meanwhile.
//
// CSV has no cell types: a cell that reads as a plain number is a number,
// anything else text. Text that a spreadsheet program would run as a
// formula when it opens the file (starting with = + - @ or a tab) is stored
// with a leading apostrophe, as is text that itself starts with one; reads
// remove it, so the value round-trips exactly.
type Local struct {
	dir   string
	mu    sync.Mutex // this process's writers; other processes: the lock file
	cache map[string]*cached
	// beforeCheck runs between preparing a write and checking that the
	// file is unchanged (tests).
	beforeCheck func()
}

type cached struct {
	raw  []byte
	rows [][]string
	vals [][]any // rows as read values, built on first read
}

// OpenLocal opens (and creates, 0700) the workbook directory, seeding it
// when it holds no tab yet.
func OpenLocal(cfg LocalConfig) (*Local, error) {
	if cfg.Dir == "" {
		return nil, errors.New("workbook: no directory for the local workbook")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("workbook: create %s: %w", cfg.Dir, err)
	}
	l := &Local{dir: cfg.Dir, cache: map[string]*cached{}}
	tabs, err := l.tabFiles()
	if err != nil {
		return nil, err
	}
	if len(tabs) == 0 && cfg.Seed != nil {
		if err := l.seed(cfg.Seed); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *Local) seed(seed fs.FS) error {
	entries, err := fs.ReadDir(seed, ".")
	if err != nil {
		return fmt.Errorf("workbook: read the sample workbook: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		b, err := fs.ReadFile(seed, e.Name())
		if err != nil {
			return fmt.Errorf("workbook: read the sample %s: %w", e.Name(), err)
		}
		if err := atomicfile.Write(filepath.Join(l.dir, e.Name()), b); err != nil {
			return internal(err, "write "+e.Name())
		}
	}
	return nil
}

// Kind implements Workbook.
func (l *Local) Kind() string { return "local" }

// Describe implements Workbook.
func (l *Local) Describe() string { return "local workbook " + l.dir }

// Dir returns the workbook's directory.
func (l *Local) Dir() string { return l.dir }

// tabFiles lists the tab titles, in name order.
func (l *Local) tabFiles() ([]string, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("workbook: list %s: %w", l.dir, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(name, ".csv") && !strings.HasPrefix(name, ".") {
			out = append(out, strings.TrimSuffix(name, ".csv"))
		}
	}
	return out, nil
}

func (l *Local) path(tab string) string { return filepath.Join(l.dir, tab+".csv") }

func internal(err error, what string) *mcperr.Error {
	return mcperr.New(mcperr.Internal, "the local workbook could not %s", what).WithCause(err)
}

// load reads a tab's cells as text (apostrophe escapes removed). The file
// is read every time — someone may have edited it — but parsed again only
// when its bytes changed. The caller holds l.mu.
func (l *Local) load(tab string) ([][]string, os.FileInfo, error) {
	c, info, err := l.loadCached(tab)
	if err != nil {
		return nil, nil, err
	}
	return c.rows, info, nil
}

// loadCached is load returning the cache entry.
func (l *Local) loadCached(tab string) (*cached, os.FileInfo, error) {
	title, err := l.title(tab)
	if err != nil {
		return nil, nil, err
	}
	p := l.path(title)
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, internal(err, "read tab "+title)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, internal(err, "read tab "+title)
	}
	if info.Size() > maxLocalFile {
		return nil, nil, mcperr.New(mcperr.Validation, "tab %s of the local workbook is %d bytes, over the limit of %d", title, info.Size(), maxLocalFile)
	}
	// Read into a buffer of the file's size (plus room to notice growth).
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+512))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxLocalFile+1)); err != nil {
		return nil, nil, internal(err, "read tab "+title)
	}
	b := buf.Bytes()
	if c := l.cache[title]; c != nil && bytes.Equal(c.raw, b) {
		return c, info, nil
	}
	rows, err := parseCSV(b)
	if err != nil {
		return nil, nil, mcperr.New(mcperr.Validation, "tab %s of the local workbook (%s) is not valid CSV: %v", title, p, err).WithCause(err)
	}
	c := &cached{raw: b, rows: rows}
	l.cache[title] = c
	return c, info, nil
}

// title finds the tab's file, matching names without regard to case as
// Google does; an unknown tab is an invalid range.
func (l *Local) title(tab string) (string, error) {
	if !validTitle(tab) {
		return "", mcperr.Invalid("range", tab, "an existing tab", "there is no tab %q in the local workbook", tab)
	}
	if _, err := os.Stat(l.path(tab)); err == nil {
		return tab, nil
	}
	tabs, err := l.tabFiles()
	if err != nil {
		return "", internal(err, "list its tabs")
	}
	for _, t := range tabs {
		if strings.EqualFold(t, tab) {
			return t, nil
		}
	}
	return "", mcperr.Invalid("range", tab, "an existing tab ("+strings.Join(tabs, ", ")+")", "there is no tab %q in the local workbook (tabs: %s)", tab, strings.Join(tabs, ", "))
}

func validTitle(t string) bool {
	return t != "" && len(t) <= 100 && !strings.ContainsAny(t, "/\\\x00") && !strings.HasPrefix(t, ".") && t == strings.TrimSpace(t)
}

func parseCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for i, f := range rec {
			rec[i] = unescapeText(f)
		}
		rows = append(rows, rec)
	}
	// A row of empty fields is an empty row; trailing ones are dropped.
	for len(rows) > 0 && allEmpty(rows[len(rows)-1]) {
		rows = rows[:len(rows)-1]
	}
	return rows, nil
}

func allEmpty(row []string) bool {
	for _, f := range row {
		if f != "" {
			return false
		}
	}
	return true
}

// formulaLead: text starting with these is run as a formula by spreadsheet
// programs that open a CSV file.
const formulaLead = "=+-@\t\r'"

func escapeText(s string) string {
	if s != "" && strings.IndexByte(formulaLead, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func unescapeText(s string) string {
	if strings.HasPrefix(s, "'") {
		return s[1:]
	}
	return s
}

func gridOf(rows [][]string) (int, int) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	return max(LocalMinRows, len(rows)), max(LocalMinCols, cols)
}

// Tabs implements Workbook.
func (l *Local) Tabs(ctx context.Context) ([]Tab, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	titles, err := l.tabFiles()
	if err != nil {
		return nil, internal(err, "list its tabs")
	}
	out := make([]Tab, 0, len(titles))
	for _, t := range titles {
		rows, _, err := l.load(t)
		if err != nil {
			return nil, err
		}
		r, c := gridOf(rows)
		out = append(out, Tab{Title: t, Rows: r, Cols: c})
	}
	return out, nil
}

// value converts stored text to a read value: a plain number is a number.
func value(s string) any {
	if s == "" {
		return nil
	}
	if n, ok := plainNumber(s); ok {
		return n
	}
	return s
}

// plainNumber accepts a number written the way this package writes one, so
// that "007", "1e3" and "+1" stay text.
func plainNumber(s string) (float64, bool) {
	c := s[0]
	if c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(n, 0) || math.IsNaN(n) || formatFloat(n) != s {
		return 0, false
	}
	return n, true
}

func formatFloat(n float64) string {
	if n == math.Trunc(n) && math.Abs(n) < 1e15 {
		return strconv.FormatInt(int64(n), 10)
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}

// Read implements Workbook. Dates are text in CSV files, so both Dates
// settings read the same. The rows returned are shared with later reads of
// the unchanged file: callers must not modify them.
func (l *Local) Read(ctx context.Context, ranges []a1.Range, _ Dates) ([][][]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][][]any, len(ranges))
	for i, rg := range ranges {
		c, _, err := l.loadCached(rg.Sheet)
		if err != nil {
			return nil, err
		}
		rows := c.rows
		gr, gc := gridOf(rows)
		res, gerr := rg.Resolve(gr, gc)
		if gerr != nil {
			return nil, mcperr.Invalid("range", rg.String(), "an A1 range inside the tab's grid", "%v", gerr)
		}
		if c.vals == nil {
			c.vals = make([][]any, len(rows))
			for r, row := range rows {
				vals := make([]any, len(row))
				for j, s := range row {
					if v := value(s); v != nil {
						vals[j] = v
					} else {
						vals[j] = ""
					}
				}
				c.vals[r] = trimEmpty(vals)
			}
		}
		var vals [][]any
		lastRow := 0
		for r := res.StartRow; r <= res.EndRow && r <= len(c.vals); r++ {
			row := c.vals[r-1]
			lo, hi := min(res.StartCol-1, len(row)), min(res.EndCol, len(row))
			cut := trimEmpty(row[lo:hi:hi])
			vals = append(vals, cut)
			if len(cut) > 0 {
				lastRow = len(vals)
			}
		}
		out[i] = vals[:lastRow]
	}
	return out, nil
}

// trimEmpty drops a row's trailing empty cells.
func trimEmpty(row []any) []any {
	n := len(row)
	for n > 0 && row[n-1] == "" {
		n--
	}
	return row[:n:n]
}

// rawText renders a value to write as the text the tab holds (escaped only
// in the file).
func rawText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", fmt.Errorf("the number %v cannot be stored", x)
		}
		return formatFloat(x), nil
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	}
	return "", fmt.Errorf("a cell takes a string, number or boolean, not %T", v)
}

// modify applies change to a tab's rows and writes the file, starting over
// when the file was replaced between the read and the rename (someone
// else's edit, which is then kept). The caller holds l.mu.
func (l *Local) modify(tab string, change func(rows [][]string) ([][]string, error)) error {
	title, err := l.title(tab)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		rows, info, err := l.load(title) // read afresh: someone may have changed it
		if err != nil {
			return err
		}
		work := make([][]string, len(rows))
		for i, r := range rows {
			work[i] = slices.Clone(r)
		}
		work, err = change(work)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		for _, r := range work {
			out := make([]string, len(r))
			for i, f := range r {
				out[i] = escapeText(f)
			}
			if len(out) < 2 && (len(out) == 0 || out[0] == "") {
				// CSV readers skip blank lines; "," keeps an empty row.
				out = []string{"", ""}
			}
			if err := w.Write(out); err != nil {
				return internal(err, "encode tab "+title)
			}
		}
		w.Flush()
		p := l.path(title)
		tmp, err := atomicfile.WriteTemp(p, buf.Bytes())
		if err != nil {
			return internal(err, "write tab "+title)
		}
		if l.beforeCheck != nil {
			l.beforeCheck()
		}
		now, err := os.Stat(p)
		if err == nil && !(os.SameFile(now, info) && now.ModTime().Equal(info.ModTime()) && now.Size() == info.Size()) {
			_ = os.Remove(tmp)
			if attempt < 3 {
				continue
			}
			return mcperr.New(mcperr.Conflict, "tab %s of the local workbook kept being changed by another program; nothing was written", title).WithRetryable(true)
		}
		if err := atomicfile.Commit(tmp, p); err != nil {
			return internal(err, "write tab "+title)
		}
		return nil
	}
}

// Write implements Workbook.
func (l *Local) Write(ctx context.Context, tab string, cells []Cell) error {
	if len(cells) == 0 {
		return nil
	}
	texts := make([]string, len(cells))
	for i, c := range cells {
		t, err := rawText(c.Value)
		if err != nil {
			return mcperr.New(mcperr.Internal, "cell %s: %v", a1.Cell(tab, c.Row, c.Col), err)
		}
		texts[i] = t
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.modify(tab, func(rows [][]string) ([][]string, error) {
		gr, gc := gridOf(rows)
		for _, c := range cells {
			if c.Row < 1 || c.Col < 1 || c.Row > gr || c.Col > gc {
				return nil, mcperr.Invalid("range", a1.Cell(tab, c.Row, c.Col).String(), "a cell inside the tab's grid",
					"cell %s is outside the grid of tab %q (%d rows × %d columns)", a1.Cell(tab, c.Row, c.Col), tab, gr, gc)
			}
		}
		for i, c := range cells {
			rows = setText(rows, c.Row, c.Col, texts[i])
		}
		return trimRows(rows), nil
	})
}

func setText(rows [][]string, row, col int, s string) [][]string {
	for len(rows) < row {
		rows = append(rows, nil)
	}
	for len(rows[row-1]) < col {
		rows[row-1] = append(rows[row-1], "")
	}
	rows[row-1][col-1] = s
	return rows
}

func trimRows(rows [][]string) [][]string {
	for i, r := range rows {
		n := len(r)
		for n > 0 && r[n-1] == "" {
			n--
		}
		rows[i] = r[:n]
	}
	for len(rows) > 0 && len(rows[len(rows)-1]) == 0 {
		rows = rows[:len(rows)-1]
	}
	return rows
}

// Append implements Workbook, with the Sheets API's table detection on the
// whole tab and an inserted row.
func (l *Local) Append(ctx context.Context, tab string, row []any) (a1.Range, error) {
	texts := make([]string, len(row))
	for i, v := range row {
		t, err := rawText(v)
		if err != nil {
			return a1.Range{}, mcperr.New(mcperr.Internal, "appended cell %d: %v", i+1, err)
		}
		texts[i] = t
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var landed a1.Range
	err := l.modify(tab, func(rows [][]string) ([][]string, error) {
		filled := make([][]bool, len(rows))
		for i, r := range rows {
			filled[i] = make([]bool, len(r))
			for j, f := range r {
				filled[i][j] = f != ""
			}
		}
		title, _ := l.title(tab)
		at, col, _, _ := a1.AppendTarget(filled, a1.Tab(title))
		if at-1 < len(rows) {
			rows = slices.Insert(rows, at-1, []string(nil))
		}
		for i, s := range texts {
			rows = setText(rows, at, col+i, s)
		}
		landed = a1.Rect(title, at, col, at, col+max(len(texts), 1)-1)
		return trimRows(rows), nil
	})
	return landed, err
}

// Clear implements Workbook.
func (l *Local) Clear(ctx context.Context, r a1.Range) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.modify(r.Sheet, func(rows [][]string) ([][]string, error) {
		gr, gc := gridOf(rows)
		res, gerr := r.Resolve(gr, gc)
		if gerr != nil {
			return nil, mcperr.Invalid("range", r.String(), "an A1 range inside the tab's grid", "%v", gerr)
		}
		for row := res.StartRow; row <= res.EndRow && row <= len(rows); row++ {
			for col := res.StartCol; col <= res.EndCol && col <= len(rows[row-1]); col++ {
				rows[row-1][col-1] = ""
			}
		}
		return trimRows(rows), nil
	})
}

// AddTabs implements Workbook: an empty file per tab.
func (l *Local) AddTabs(ctx context.Context, titles []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	existing, err := l.tabFiles()
	if err != nil {
		return internal(err, "list its tabs")
	}
	for _, t := range titles {
		if !validTitle(t) {
			return mcperr.Invalid("tab", t, "a tab name without / \\ or a leading dot", "%q cannot name a tab of the local workbook", t)
		}
		if slices.ContainsFunc(existing, func(e string) bool { return strings.EqualFold(e, t) }) {
			return mcperr.New(mcperr.Conflict, "a tab named %q already exists", t)
		}
	}
	for _, t := range titles {
		if err := atomicfile.Write(l.path(t), nil); err != nil {
			return internal(err, "write "+filepath.Base(l.path(t)))
		}
	}
	return nil
}

// Lock implements Locker with an exclusive lock on <dir>/.lock, which other
// sheets-mcp processes using the same workbook also take, waiting until ctx
// ends.
func (l *Local) Lock(ctx context.Context) (func(), error) {
	f, err := os.OpenFile(filepath.Join(l.dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, internal(err, "open its lock file")
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, internal(err, "take its lock")
		}
		if ok {
			return func() { unlock(f); f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, mcperr.New(mcperr.Timeout, "another process kept the local workbook locked").WithCause(ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func sortCells(cells []Cell) {
	sort.SliceStable(cells, func(i, j int) bool {
		if cells[i].Row != cells[j].Row {
			return cells[i].Row < cells[j].Row
		}
		return cells[i].Col < cells[j].Col
	})
}
