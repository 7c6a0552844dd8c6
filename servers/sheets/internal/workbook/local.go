package workbook

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

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
