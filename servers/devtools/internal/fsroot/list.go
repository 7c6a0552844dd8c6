package fsroot

import (
	"context"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Entry is one item found by List or Search.
type Entry struct {
	// Path is slash-separated and relative to the listed (or searched)
	// directory, so "a/b.go" under List("src") is src/a/b.go. Join it with
	// the result's Path to address the entry again.
	Path    string
	Name    string
	Type    string // TypeFile, TypeDir, TypeSymlink or TypeOther
	Size    int64
	Mode    string
	ModTime time.Time
}

func newEntry(p, name string, fi fs.FileInfo) Entry {
	return Entry{Path: p, Name: name, Type: entryType(fi.Mode()), Size: fi.Size(), Mode: fi.Mode().String(), ModTime: fi.ModTime()}
}

// ListOptions controls List.
type ListOptions struct {
	// Recursive descends into subdirectories, never through symlinks.
	Recursive bool
	// MaxDepth bounds a recursive listing (1 = direct children only); 0 or
	// more than the configured limit means the limit.
	MaxDepth int
	// IncludeHidden lists dotfiles and descends into dot-directories.
	IncludeHidden bool
}

// ListResult is a directory listing in tree order: each directory's entries
// sorted by name, a subdirectory's contents right after it.
type ListResult struct {
	Path    string // the listed directory, slash-separated, relative to Root
	Root    string
	Entries []Entry
	// Truncated means more entries exist than the entry limit allowed.
	Truncated bool
}

// List lists a directory; the root itself ("", ".") may be listed. Symlinks
// are reported as such and never followed while descending; a symlink given
// as the path itself is followed if it stays inside the root.
func (f *FS) List(p string, opt ListOptions) (*ListResult, error) {
	const op = "list"
	if opt.MaxDepth < 0 {
		return nil, invalid(op, p, "max_depth", "max_depth must not be negative")
	}
	t, err := f.resolve(op, p)
	if err != nil {
		return nil, err
	}
	depth := 1
	if opt.Recursive {
		depth = clampLimit(opt.MaxDepth, f.lim.MaxDepth)
	}
	res := &ListResult{Path: t.slash(), Root: t.root.name, Entries: []Entry{}}
	w := &walker{maxDepth: depth, hidden: opt.IncludeHidden, visit: func(e Entry) bool {
		if len(res.Entries) >= f.lim.MaxListEntries {
			res.Truncated = true
			return true
		}
		res.Entries = append(res.Entries, e)
		return false
	}}
	if err := w.walkPath(t); err != nil {
		return nil, wrap(op, p, err)
	}
	return res, nil
}

// clampLimit applies a per-call value under a configured limit.
func clampLimit(v, limit int) int {
	if v <= 0 || v > limit {
		return limit
	}
	return v
}

// SearchOptions controls Search.
type SearchOptions struct {
	// IncludeHidden matches dotfiles and descends into dot-directories.
	IncludeHidden bool
	// MaxResults and MaxDepth lower the configured limits for this call.
	MaxResults int
	MaxDepth   int
}

// SearchResult holds the matches in tree order (see [ListResult]).
type SearchResult struct {
	Path    string // the searched directory, relative to Root
	Root    string
	Pattern string
	Matches []Entry
	// Truncated means more matches exist than the result limit allowed.
	Truncated bool
	// Scanned counts the entries examined.
	Scanned int
}

// Search finds entries under a directory whose path matches a glob.
//
// A pattern without "/" is matched against each entry's name at any depth
// ("*.go" finds every Go file), as in .gitignore. A pattern with "/" ("./"
// to anchor a single name) is matched against the whole path relative to
// the searched directory, one
// path.Match per segment, where a "**" segment matches any number of
// segments ("cmd/**/main.go"). Symlinks are matched but never followed.
func (f *FS) Search(p, pattern string, opt SearchOptions) (*SearchResult, error) {
	return f.SearchContext(context.Background(), p, pattern, opt)
}

// SearchContext is Search that stops when ctx is done, since the walk over a
// large tree is bounded by depth, not by time.
func (f *FS) SearchContext(ctx context.Context, p, pattern string, opt SearchOptions) (*SearchResult, error) {
	const op = "search"
	if opt.MaxDepth < 0 {
		return nil, invalid(op, p, "max_depth", "max_depth must not be negative")
	}
	if opt.MaxResults < 0 {
		return nil, invalid(op, p, "max_results", "max_results must not be negative")
	}
	match, patDepth, err := compilePattern(pattern)
	if err != nil {
		err.Op, err.Path = op, p
		return nil, err
	}
	t, rerr := f.resolve(op, p)
	if rerr != nil {
		return nil, rerr
	}
	depth := clampLimit(opt.MaxDepth, f.lim.MaxDepth)
	if patDepth > 0 {
		depth = min(depth, patDepth)
	}
	maxResults := clampLimit(opt.MaxResults, f.lim.MaxSearchResults)
	res := &SearchResult{Path: t.slash(), Root: t.root.name, Pattern: pattern, Matches: []Entry{}}
	w := &walker{ctx: ctx, maxDepth: depth, hidden: opt.IncludeHidden, visit: func(e Entry) bool {
		if !match(e.Path, e.Name) {
			return false
		}
		if len(res.Matches) >= maxResults {
			res.Truncated = true
			return true
		}
		res.Matches = append(res.Matches, e)
		return false
	}}
	werr := w.walkPath(t)
	res.Scanned = w.scanned
	if werr != nil {
		return nil, wrap(op, p, werr)
	}
	return res, nil
}

// compilePattern validates a glob and returns its matcher and, when the
// pattern cannot match below a fixed depth, that depth (0: unbounded).
func compilePattern(pattern string) (func(rel, name string) bool, int, *Error) {
	bad := func(msg string) (func(string, string) bool, int, *Error) {
		return nil, 0, &Error{Code: mcperr.Validation, Field: "pattern", Msg: msg}
	}
	pat := strings.TrimPrefix(pattern, "./")
	if pat == "" {
		return bad("pattern must not be empty")
	}
	if strings.HasPrefix(pat, "/") {
		return bad("pattern " + quote(pattern) + " must be relative to the searched directory")
	}
	var segs []string
	for s := range strings.SplitSeq(pat, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return bad("pattern " + quote(pattern) + " must not contain \"..\"")
		}
		if s != "**" {
			if _, err := path.Match(s, ""); err != nil {
				return bad("pattern " + quote(pattern) + " has a malformed glob segment " + quote(s))
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return bad("pattern " + quote(pattern) + " must name something to match")
	}
	if len(segs) == 1 && !strings.Contains(pattern, "/") {
		return func(_, name string) bool {
			ok, _ := path.Match(segs[0], name)
			return ok
		}, 0, nil
	}
	depth := len(segs)
	if slices.Contains(segs, "**") {
		depth = 0
	}
	return func(rel, _ string) bool { return matchSegs(segs, strings.Split(rel, "/")) }, depth, nil
}

// matchSegs matches path segments against glob segments, "**" standing for
// zero or more segments. Dynamic programming keeps patterns with many "**"
// linear in the path length instead of exponential.
func matchSegs(pat, name []string) bool {
	dp := make([]bool, len(name)+1)
	next := make([]bool, len(name)+1)
	dp[0] = true
	for _, p := range pat {
		clear(next)
		if p == "**" {
			seen := false
			for j := range dp {
				seen = seen || dp[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(name); j++ {
				if dp[j-1] {
					next[j], _ = path.Match(p, name[j-1])
				}
			}
		}
		dp, next = next, dp
	}
	return dp[len(name)]
}

// walker visits a directory tree in tree order. Each directory is opened as
// its own os.Root from its parent's, so every lookup is a single component
// relative to an open handle: nothing outside the tree is reachable, even
// if directories are swapped for symlinks mid-walk.
type walker struct {
	ctx      context.Context // nil: never cancelled
	maxDepth int             // < 0: unbounded
	hidden   bool
	visit    func(Entry) (stop bool)
	scanned  int
	stopped  bool
}

// walkPath walks the directory t names (following t itself if it is an
// in-root symlink).
func (w *walker) walkPath(t target) error {
	fi, err := t.root.r.Stat(t.rel)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &Error{Code: mcperr.Validation, Field: "path", Msg: quote(t.given) + " is not a directory"}
	}
	dir, err := t.root.r.OpenRoot(t.rel)
	if err != nil {
		return err
	}
	defer dir.Close()
	return w.walk(dir, "", 1)
}

func (w *walker) walk(dir *os.Root, rel string, depth int) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, name := range names {
		if w.ctx != nil {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		if !w.hidden && hidden(name) {
			continue
		}
		fi, err := dir.Lstat(name)
		if err != nil {
			// Removed since the listing, or unreadable: not worth failing
			// the whole walk over.
			continue
		}
		w.scanned++
		p := path.Join(rel, name)
		if w.visit(newEntry(p, name, fi)) {
			w.stopped = true
			return nil
		}
		if fi.IsDir() && (w.maxDepth < 0 || depth < w.maxDepth) {
			if err := w.descend(dir, name, p, depth+1, fi); err != nil {
				return err
			}
			if w.stopped {
				return nil
			}
		}
	}
	return nil
}

func (w *walker) descend(dir *os.Root, name, p string, depth int, fi fs.FileInfo) error {
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil // unreadable subdirectory: skip it
	}
	defer sub.Close()
	// OpenRoot follows symlinks; if name was swapped for one since Lstat,
	// do not walk wherever it leads.
	if si, err := sub.Stat("."); err != nil || !os.SameFile(fi, si) {
		return nil
	}
	return w.walk(sub, p, depth)
}
