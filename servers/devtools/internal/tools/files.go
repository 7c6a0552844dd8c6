package tools

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/filewatch"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// FileTools returns the file tools, each call confined to the roots r gives
// it. w, when set, is the watcher of the file resources: file_write and
// file_delete tell subscribers of what they changed at once, without
// waiting for the kernel's event.
func FileTools(r *Roots, w *filewatch.Watcher) []kit.Tool {
	return []kit.Tool{fileRead(r), fileWrite(r, w), fileList(r), fileDelete(r, w), fileInfo(r), fileSearch(r)}
}

// changed tells the subscribers of the file at the absolute path p, and of
// every watched file below it, that it changed.
func changed(c *kit.Call, w *filewatch.Watcher, p string) {
	n := c.Notifier()
	uri := FileURI(p)
	n.Updated(uri)
	if w == nil {
		return
	}
	for _, u := range w.Under(p) {
		if u != uri {
			n.Updated(u)
		}
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

type lines struct {
	Start int `json:"start" jsonschema:"first line of content (1-based; negative when counted back from the end)"`
	End   int `json:"end" jsonschema:"last line of content"`
	Total int `json:"total" jsonschema:"lines in the file, or -1 when not counted"`
}

type readResult struct {
	Path     string `json:"path"`
	Root     string `json:"root"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
	Size     int64  `json:"size" jsonschema:"the whole file's size in bytes"`
	Lines    *lines `json:"lines,omitempty" jsonschema:"the lines content holds (utf-8 line reads only)"`
	// ByteStart and ByteEnd locate content in the file, before encoding.
	ByteStart int64 `json:"byte_start" jsonschema:"file offset of content's first byte"`
	ByteEnd   int64 `json:"byte_end" jsonschema:"file offset just after content's last byte"`
	Truncated bool  `json:"truncated" jsonschema:"the read cap or the result budget cut the requested part short"`
	// NextOffset and NextByteOffset are set when truncated: the argument
	// that reads on from where content stopped.
	NextOffset     *int   `json:"next_offset,omitempty" jsonschema:"pass as offset to read the next lines"`
	NextByteOffset *int64 `json:"next_byte_offset,omitempty" jsonschema:"pass as byte_offset to read on from the next byte"`
	Rest           string `json:"rest,omitempty" jsonschema:"how to get what was left out, when truncated"`
	Modified       string `json:"modified"`
}

type fileReadArgs struct {
	Path       string `json:"path" jsonschema:"file path, relative to the first root or absolute inside a root" mcp:"minLength=1"`
	Encoding   string `json:"encoding,omitempty" jsonschema:"how to return the content" mcp:"enum=utf-8|base64|hex,default=utf-8"`
	Offset     int    `json:"offset,omitempty" jsonschema:"first line to return (1-based; utf-8 only); after a truncated read, next_offset" mcp:"min=1"`
	Limit      int    `json:"limit,omitempty" jsonschema:"number of lines to return from offset (utf-8 only)" mcp:"min=1"`
	Head       int    `json:"head,omitempty" jsonschema:"return the first N lines (utf-8 only; not with tail, offset or limit)" mcp:"min=1"`
	Tail       int    `json:"tail,omitempty" jsonschema:"return the last N lines (utf-8 only; not with head, offset or limit)" mcp:"min=1"`
	ByteOffset *int64 `json:"byte_offset,omitempty" jsonschema:"read bytes from this 0-based file offset instead of lines (any encoding; not with offset, limit, head or tail); after a truncated read, next_byte_offset" mcp:"min=0"`
	MaxBytes   int64  `json:"max_bytes,omitempty" jsonschema:"lower the read cap for this call" mcp:"min=1,max={maxReadBytes}"`
}

// Validate holds the rules between file_read's windows.
func (a *fileReadArgs) Validate() error {
	window := a.Offset > 0 || a.Limit > 0
	switch {
	case a.Head > 0 && a.Tail > 0:
		return mcperr.Invalid("tail", a.Tail, "only one of head, tail, offset/limit, byte_offset", "head and tail cannot be combined")
	case (a.Head > 0 || a.Tail > 0) && window:
		return mcperr.Invalid("offset", a.Offset, "only one of head, tail, offset/limit, byte_offset", "head/tail cannot be combined with offset/limit")
	case a.ByteOffset != nil && (window || a.Head > 0 || a.Tail > 0):
		return mcperr.Invalid("byte_offset", *a.ByteOffset, "only one of head, tail, offset/limit, byte_offset", "byte_offset cannot be combined with line windows")
	case a.Encoding != "" && a.Encoding != fsroot.EncodingUTF8 && (window || a.Head > 0 || a.Tail > 0):
		return mcperr.Invalid("encoding", a.Encoding, "utf-8 for a line window", "line windows (offset, limit, head, tail) need encoding utf-8; use byte_offset for base64 or hex")
	}
	return nil
}

// maxByteCost bounds kit.Cost per byte: a control character is \u00XX in
// JSON (6 bytes) and \\u00XX once more in the text (7). Content under
// room/maxByteCost fits without counting.
const maxByteCost = 13

// readRoom is how many file bytes fit in room once encoded and escaped
// twice (kit.Cost): at least 2 a byte in utf-8 (more for quotes, newlines
// and control characters, which fitText then cuts), 8 for 3 in base64, 4
// in hex.
func readRoom(enc string, room int) int64 {
	switch enc {
	case fsroot.EncodingBase64:
		return int64(room/8) * 3
	case fsroot.EncodingHex:
		return int64(room / 4)
	}
	return int64(room / 2)
}

func fileRead(roots *Roots) kit.Tool {
	lim := roots.Base().Limits()
	return kit.NewTool(kit.Tool{
		Name:  "file_read",
		Title: "Read a file",
		Description: "Read a regular file inside the configured roots. Encodings: utf-8 (default), base64, hex. " +
			"Without a window, utf-8 is read as whole lines from the first and base64/hex as bytes from the first. " +
			"A window is offset+limit, head or tail (lines, utf-8), or byte_offset (bytes, any encoding). " +
			"Each result holds at most the read cap (" + bytesize.Format(lim.MaxReadBytes) + ") and what fits the result budget: when truncated is true, " +
			"call again with offset = next_offset (lines) or byte_offset = next_byte_offset, as rest says. " +
			"Result: content, size, encoding, the line range and byte range returned, truncated.",
		Vars:   schema.Vars{"maxReadBytes": lim.MaxReadBytes},
		Paging: "read a window with offset and limit, or byte_offset and max_bytes",
		Effect: kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, a fileReadArgs) (readResult, error) {
		scope, err := roots.For(ctx, c)
		if err != nil {
			return readResult{}, err
		}
		defer scope.Release()
		room := c.Room()
		enc := a.Encoding
		if enc == "" {
			enc = fsroot.EncodingUTF8
		}
		capBytes := min(lim.MaxReadBytes, readRoom(enc, room))
		if a.MaxBytes > 0 {
			capBytes = min(capBytes, a.MaxBytes)
		}
		opt := fsroot.ReadOptions{Encoding: a.Encoding, Offset: a.Offset, Limit: a.Limit, Head: a.Head, Tail: a.Tail, MaxBytes: capBytes}
		if a.ByteOffset != nil {
			opt.Bytes, opt.ByteOffset = true, *a.ByteOffset
		}
		r, err := scope.FS.Read(a.Path, opt)
		if err != nil {
			return readResult{}, err
		}
		if r.Encoding == fsroot.EncodingUTF8 && maxByteCost*len(r.Content) > room && kit.Cost(r.Content) > room {
			fitText(r, room, a.Tail > 0)
		}
		out := readResult{Path: r.Path, Root: r.Root, Content: r.Content, Encoding: r.Encoding, Size: r.Size,
			ByteStart: r.ByteStart, ByteEnd: r.ByteEnd, Truncated: r.Truncated, Modified: stamp(r.ModTime)}
		if r.Lines != nil {
			out.Lines = &lines{Start: r.Lines.Start, End: r.Lines.End, Total: r.Lines.Total}
		}
		if out.Truncated {
			setNextRead(&out, a.Tail > 0)
		}
		return out, nil
	})
}

// fitText cuts a utf-8 read down to room: a forward read keeps its first
// whole lines (or the head of a line longer than room), a tail its last.
func fitText(r *fsroot.ReadResult, room int, tail bool) {
	r.Truncated = true
	if tail {
		s := clipTail(r.Content, room)
		if cut := len(r.Content) - len(s); cut > 0 && r.Content[cut-1] != '\n' {
			if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
				s = s[i+1:]
			}
		}
		dropped := r.Content[:len(r.Content)-len(s)]
		r.Content, r.ByteStart = s, r.ByteEnd-int64(len(s))
		if r.Lines != nil && len(s) > 0 {
			r.Lines.Start += strings.Count(dropped, "\n")
		}
		return
	}
	s, _ := kit.Clip(r.Content, room)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i+1]
	}
	r.Content, r.ByteEnd = s, r.ByteStart+int64(len(s))
	if r.Lines != nil && r.Lines.Start > 0 {
		if n := strings.Count(s, "\n"); n > 0 {
			r.Lines.End = r.Lines.Start + n - 1
		} else {
			r.Lines.End = r.Lines.Start
		}
	}
}

// clipTail is kit.Clip from the end: the longest suffix of s, starting on
// a character, that costs at most room.
func clipTail(s string, room int) string {
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		n += kit.Cost(s[i : i+1])
		if n > room {
			j := i + 1
			for j < len(s) && !utf8.RuneStart(s[j]) {
				j++
			}
			return s[j:]
		}
	}
	return s
}

// setNextRead says how to read on after a truncated read.
func setNextRead(out *readResult, tail bool) {
	if tail {
		if out.Lines != nil && out.Lines.Start > 1 {
			out.Rest = "the first lines of the tail did not fit: read the lines before line " + itoa(int64(out.Lines.Start)) +
				" with offset and limit"
		} else {
			out.Rest = "the first lines of the tail did not fit: ask for fewer lines"
		}
		return
	}
	next := out.ByteEnd
	out.NextByteOffset = &next
	if out.Lines != nil && out.Lines.End > 0 && strings.HasSuffix(out.Content, "\n") {
		line := out.Lines.End + 1
		out.NextOffset = &line
		out.Rest = "the file goes on: call file_read again with offset " + itoa(int64(line)) + " for the next lines"
		return
	}
	out.Rest = "the file goes on: call file_read again with byte_offset " + itoa(next) + " (and the same encoding) for the next bytes"
}

type fileInfoResult struct {
	Path     string `json:"path"`
	Root     string `json:"root"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Mode     string `json:"mode"`
	Modified string `json:"modified"`
	Target   string `json:"symlink_target,omitempty"`
}

func infoOf(fi *fsroot.FileInfo) fileInfoResult {
	return fileInfoResult{Path: fi.Path, Root: fi.Root, Name: fi.Name, Type: fi.Type, Size: fi.Size, Mode: fi.Mode,
		Modified: stamp(fi.ModTime), Target: fi.Target}
}

type fileWriteArgs struct {
	Path       string `json:"path" jsonschema:"file path, relative to the first root or absolute inside a root" mcp:"minLength=1"`
	Content    string `json:"content" jsonschema:"the data to write, in the given encoding"`
	Encoding   string `json:"encoding,omitempty" jsonschema:"how content is encoded" mcp:"enum=utf-8|base64|hex,default=utf-8"`
	CreateDirs *bool  `json:"create_dirs,omitempty" jsonschema:"create missing parent directories" mcp:"default=true"`
	// Overwrite has no default in the schema: true unless append, so its
	// absence must be seen.
	Overwrite *bool `json:"overwrite,omitempty" jsonschema:"replace an existing file (default true, false with append); false refuses with CONFLICT"`
	Append    bool  `json:"append,omitempty" jsonschema:"append to the file instead of replacing it" mcp:"default=false"`
}

type fileWriteResult struct {
	Written int            `json:"written" jsonschema:"bytes written"`
	File    fileInfoResult `json:"file"`
}

// Validate: append adds to the end, overwrite replaces; asking for both
// is a contradiction.
func (a *fileWriteArgs) Validate() error {
	if a.Append && a.Overwrite != nil && *a.Overwrite {
		return mcperr.Invalid("append", true, "append or overwrite, not both", "append and overwrite exclude each other")
	}
	return nil
}

func fileWrite(roots *Roots, w *filewatch.Watcher) kit.Tool {
	lim := roots.Base().Limits()
	return kit.NewTool(kit.Tool{
		Name:  "file_write",
		Title: "Write a file",
		Description: "Write a file inside the configured roots, atomically: readers see the old or the new content, never a mix, and a failed write changes nothing. " +
			"Creates missing parent directories unless create_dirs is false. Replaces an existing file unless overwrite is false; append adds to the end. " +
			"content is text (utf-8) or, with encoding base64/hex, binary. Size cap: " + bytesize.Format(lim.MaxWriteBytes) + ". Returns the file's metadata after the write.",
		Effect:    kit.Destructive,
		AuditOmit: []string{"content"},
	}, func(ctx context.Context, c *kit.Call, a fileWriteArgs) (fileWriteResult, error) {
		scope, err := roots.For(ctx, c)
		if err != nil {
			return fileWriteResult{}, err
		}
		defer scope.Release()
		data, err := decodeContent(a.Content, a.Encoding)
		if err != nil {
			return fileWriteResult{}, err
		}
		opt := fsroot.WriteOptions{CreateDirs: a.CreateDirs == nil || *a.CreateDirs,
			Overwrite: !a.Append && (a.Overwrite == nil || *a.Overwrite), Append: a.Append}
		fi, err := scope.FS.Write(a.Path, data, opt)
		if err != nil {
			return fileWriteResult{}, err
		}
		changed(c, w, filepath.Join(fi.Root, filepath.FromSlash(fi.Path)))
		return fileWriteResult{Written: len(data), File: infoOf(fi)}, nil
	})
}

func decodeContent(s, enc string) ([]byte, error) {
	switch enc {
	case "", "utf-8":
		return []byte(s), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, mcperr.Invalid("content", nil, "standard base64", "content is not valid base64")
		}
		return b, nil
	case "hex":
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, mcperr.Invalid("content", nil, "hexadecimal digits", "content is not valid hex")
		}
		return b, nil
	}
	return nil, mcperr.Invalid("encoding", enc, "utf-8, base64 or hex", "unknown encoding")
}

type entry struct {
	Path     string `json:"path"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Mode     string `json:"mode"`
	Modified string `json:"modified"`
}

func entries(es []fsroot.Entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		out[i] = entry{Path: e.Path, Name: e.Name, Type: e.Type, Size: e.Size, Mode: e.Mode, Modified: stamp(e.ModTime)}
	}
	return out
}

// fitEntries keeps the entries that fit in room; cut says some did not.
func fitEntries(es []entry, room int) (kept []entry, cut bool, err error) {
	n, err := kit.FitItems(es, room)
	if err != nil {
		return nil, false, err
	}
	return es[:n], n < len(es), nil
}

type fileListArgs struct {
	Path          string `json:"path,omitempty" jsonschema:"directory, relative to the first root or absolute inside a root" mcp:"default=."`
	Recursive     bool   `json:"recursive,omitempty" jsonschema:"descend into subdirectories" mcp:"default=false"`
	MaxDepth      int    `json:"max_depth,omitempty" jsonschema:"levels to descend when recursive (1 = direct children)" mcp:"min=1,max={maxDepth}"`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"include dotfiles and dot-directories" mcp:"default=false"`
}

type fileListResult struct {
	Path      string  `json:"path"`
	Root      string  `json:"root"`
	Entries   []entry `json:"entries"`
	Count     int     `json:"count"`
	Truncated bool    `json:"truncated" jsonschema:"more entries exist than were returned"`
	Rest      string  `json:"rest,omitempty" jsonschema:"how to see the entries left out, when truncated"`
}

// listRest is how to see the entries a truncated listing left out.
const listRest = "more entries exist: list a subdirectory, lower max_depth, or find them with file_search and a pattern"

func fileList(roots *Roots) kit.Tool {
	lim := roots.Base().Limits()
	return kit.NewTool(kit.Tool{
		Name:  "file_list",
		Title: "List a directory",
		Description: "List a directory inside the configured roots (default: the first root). Each entry has path (relative to the listed directory), name, type (file, dir, symlink, other), size, mode and modified time. " +
			"recursive descends up to max_depth levels (cap " + itoa(int64(lim.MaxDepth)) + ") and never follows symlinks; hidden (dot) files are skipped unless include_hidden. " +
			"At most " + itoa(int64(lim.MaxListEntries)) + " entries and what fits the result budget; truncated says when more exist and rest how to see them.",
		Vars:   schema.Vars{"maxDepth": lim.MaxDepth},
		Paging: "list a subdirectory, lower max_depth, or use file_search with a pattern",
		Effect: kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, a fileListArgs) (fileListResult, error) {
		scope, err := roots.For(ctx, c)
		if err != nil {
			return fileListResult{}, err
		}
		defer scope.Release()
		r, err := scope.FS.List(a.Path, fsroot.ListOptions{Recursive: a.Recursive, MaxDepth: a.MaxDepth, IncludeHidden: a.IncludeHidden})
		if err != nil {
			return fileListResult{}, err
		}
		es, cut, err := fitEntries(entries(r.Entries), c.Room())
		if err != nil {
			return fileListResult{}, err
		}
		out := fileListResult{Path: r.Path, Root: r.Root, Entries: es, Count: len(es), Truncated: r.Truncated || cut}
		if out.Truncated {
			out.Rest = listRest
		}
		return out, nil
	})
}

type fileDeleteArgs struct {
	Path      string `json:"path" jsonschema:"path to delete, relative to the first root or absolute inside a root" mcp:"minLength=1"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a non-empty directory and everything in it" mcp:"default=false"`
}

type fileDeleteResult struct {
	Deleted bool   `json:"deleted"`
	Path    string `json:"path"`
	Root    string `json:"root"`
	Type    string `json:"type" jsonschema:"what the path was: file, dir, symlink or other"`
	Removed int    `json:"removed" jsonschema:"entries removed, the path itself included"`
}

func fileDelete(roots *Roots, w *filewatch.Watcher) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "file_delete",
		Title: "Delete a file or directory",
		Description: "Delete a file or symlink (never what it points to) inside the configured roots. An empty directory is deleted as is; " +
			"a non-empty directory only with recursive=true. A root directory itself can never be deleted. Returns what was deleted and how many entries were removed.",
		Effect:     kit.Destructive,
		Idempotent: true,
	}, func(ctx context.Context, c *kit.Call, a fileDeleteArgs) (fileDeleteResult, error) {
		scope, err := roots.For(ctx, c)
		if err != nil {
			return fileDeleteResult{}, err
		}
		defer scope.Release()
		r, err := scope.FS.Delete(a.Path, a.Recursive)
		if err != nil {
			return fileDeleteResult{}, err
		}
		changed(c, w, filepath.Join(r.Root, filepath.FromSlash(r.Path)))
		return fileDeleteResult{Deleted: true, Path: r.Path, Root: r.Root, Type: r.Type, Removed: r.Removed}, nil
	})
}

type fileInfoArgs struct {
	Path string `json:"path" jsonschema:"path, relative to the first root or absolute inside a root" mcp:"minLength=1"`
}

func fileInfo(roots *Roots) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:        "file_info",
		Title:       "Describe a path",
		Description: "Describe a path inside the configured roots without reading it: type (file, dir, symlink, other), size, mode, modified time, and a symlink's target when it stays inside the root.",
		Effect:      kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, a fileInfoArgs) (fileInfoResult, error) {
		scope, err := roots.For(ctx, c)
		if err != nil {
			return fileInfoResult{}, err
		}
		defer scope.Release()
		fi, err := scope.FS.Stat(a.Path)
		if err != nil {
			return fileInfoResult{}, err
		}
		return infoOf(fi), nil
	})
}

type fileSearchArgs struct {
	Pattern       string `json:"pattern" jsonschema:"glob: *, ?, [abc], and ** for any number of directories" mcp:"minLength=1"`
	Path          string `json:"path,omitempty" jsonschema:"directory to search under" mcp:"default=."`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"match dotfiles and descend into dot-directories" mcp:"default=false"`
	MaxResults    int    `json:"max_results,omitempty" jsonschema:"stop after this many matches" mcp:"min=1,max={maxResults}"`
}

type fileSearchResult struct {
	Path      string  `json:"path"`
	Root      string  `json:"root"`
	Pattern   string  `json:"pattern"`
	Matches   []entry `json:"matches"`
	Count     int     `json:"count"`
	Truncated bool    `json:"truncated" jsonschema:"more matches exist than were returned"`
	Rest      string  `json:"rest,omitempty" jsonschema:"how to see the matches left out, when truncated"`
	Scanned   int     `json:"scanned" jsonschema:"entries looked at"`
}

func fileSearch(roots *Roots) kit.Tool {
	lim := roots.Base().Limits()
	return kit.NewTool(kit.Tool{
		Name:  "file_search",
		Title: "Find files by glob",
		Description: "Find files and directories under a directory (default: the first root) by glob. A pattern without \"/\" matches names at any depth (\"*.go\"); " +
			"a pattern with \"/\" matches the whole relative path, where \"**\" spans directories (\"cmd/**/main.go\"). Symlinks are matched, never followed. " +
			"At most " + itoa(int64(lim.MaxSearchResults)) + " matches and what fits the result budget; truncated says when more exist and rest how to see them.",
		Vars:   schema.Vars{"maxResults": lim.MaxSearchResults},
		Paging: "search a subdirectory or use a narrower pattern",
		Effect: kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, a fileSearchArgs) (fileSearchResult, error) {
		scope, err := roots.For(ctx, c)
		if err != nil {
			return fileSearchResult{}, err
		}
		defer scope.Release()
		r, err := scope.FS.SearchContext(ctx, a.Path, a.Pattern, fsroot.SearchOptions{IncludeHidden: a.IncludeHidden, MaxResults: a.MaxResults})
		if err != nil {
			return fileSearchResult{}, err
		}
		ms, cut, err := fitEntries(entries(r.Matches), c.Room())
		if err != nil {
			return fileSearchResult{}, err
		}
		out := fileSearchResult{Path: r.Path, Root: r.Root, Pattern: r.Pattern, Matches: ms, Count: len(ms),
			Truncated: r.Truncated || cut, Scanned: r.Scanned}
		if out.Truncated {
			out.Rest = "more matches exist: search a subdirectory or use a narrower pattern"
		}
		return out, nil
	})
}
