package tools

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"time"

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
	Start int `json:"start"`
	End   int `json:"end"`
	Total int `json:"total"`
}

type readResult struct {
	Path      string `json:"path"`
	Root      string `json:"root"`
	Content   string `json:"content"`
	Encoding  string `json:"encoding"`
	Size      int64  `json:"size"`
	Lines     *lines `json:"lines,omitempty"`
	Truncated bool   `json:"truncated"`
	Modified  string `json:"modified"`
}

type fileReadArgs struct {
	Path     string `json:"path" jsonschema:"file path, relative to the first root or absolute inside a root" mcp:"minLength=1"`
	Encoding string `json:"encoding,omitempty" jsonschema:"how to return the content" mcp:"enum=utf-8|base64|hex,default=utf-8"`
	Offset   int    `json:"offset,omitempty" jsonschema:"first line to return (1-based; utf-8 only)" mcp:"min=1"`
	Limit    int    `json:"limit,omitempty" jsonschema:"number of lines to return from offset (utf-8 only)" mcp:"min=1"`
	Head     int    `json:"head,omitempty" jsonschema:"return the first N lines (utf-8 only)" mcp:"min=1"`
	Tail     int    `json:"tail,omitempty" jsonschema:"return the last N lines (utf-8 only)" mcp:"min=1"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"lower the read cap for this call" mcp:"min=1,max={maxReadBytes}"`
}

func fileRead(roots *Roots) kit.Tool {
	lim := roots.Base().Limits()
	return kit.Tool{
		Name:  "file_read",
		Title: "Read a file",
		Description: "Read a regular file inside the configured roots. Encodings: utf-8 (default), base64, hex. " +
			"For large or long files read a window of lines with offset+limit, or head / tail; without a window a file larger than the read cap is refused. " +
			"Result: content, size, encoding, the line range returned, and truncated when the cap cut it short.",
		InputSchema: schema.MustFor[fileReadArgs](schema.Vars{"maxReadBytes": lim.MaxReadBytes}),
		Effect:      kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a fileReadArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			scope, err := roots.For(ctx, c)
			if err != nil {
				return nil, err
			}
			defer scope.Release()
			fsys := scope.FS
			if a.Head > 0 && a.Tail > 0 {
				return nil, mcperr.Invalid("tail", a.Tail, "only one of head, tail, offset/limit", "head and tail cannot be combined")
			}
			if (a.Head > 0 || a.Tail > 0) && (a.Offset > 0 || a.Limit > 0) {
				return nil, mcperr.Invalid("offset", a.Offset, "only one of head, tail, offset/limit", "head/tail cannot be combined with offset/limit")
			}
			r, err := fsys.Read(a.Path, fsroot.ReadOptions{Encoding: a.Encoding, Offset: a.Offset, Limit: a.Limit,
				Head: a.Head, Tail: a.Tail, MaxBytes: a.MaxBytes})
			if err != nil {
				return nil, err
			}
			out := readResult{Path: r.Path, Root: r.Root, Content: r.Content, Encoding: r.Encoding, Size: r.Size,
				Truncated: r.Truncated, Modified: stamp(r.ModTime)}
			if r.Lines != nil {
				out.Lines = &lines{Start: r.Lines.Start, End: r.Lines.End, Total: r.Lines.Total}
			}
			return out, nil
		},
	}
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
	Path     string `json:"path" jsonschema:"file path, relative to the first root or absolute inside a root" mcp:"minLength=1"`
	Content  string `json:"content" jsonschema:"the data to write, in the given encoding"`
	Encoding string `json:"encoding,omitempty" jsonschema:"how content is encoded" mcp:"enum=utf-8|base64|hex,default=utf-8"`
	// CreateDirs and Overwrite default to true, so absence must be seen.
	CreateDirs *bool `json:"create_dirs,omitempty" jsonschema:"create missing parent directories" mcp:"default=true"`
	Overwrite  *bool `json:"overwrite,omitempty" jsonschema:"replace an existing file; false refuses with CONFLICT" mcp:"default=true"`
	Append     bool  `json:"append,omitempty" jsonschema:"append to the file instead of replacing it" mcp:"default=false"`
}

func fileWrite(roots *Roots, w *filewatch.Watcher) kit.Tool {
	lim := roots.Base().Limits()
	return kit.Tool{
		Name:  "file_write",
		Title: "Write a file",
		Description: "Write a file inside the configured roots, atomically: readers see the old or the new content, never a mix, and a failed write changes nothing. " +
			"Creates missing parent directories unless create_dirs is false. Replaces an existing file unless overwrite is false; append adds to the end. " +
			"content is text (utf-8) or, with encoding base64/hex, binary. Size cap: " + bytesize.Format(lim.MaxWriteBytes) + ". Returns the file's metadata after the write.",
		InputSchema: schema.MustFor[fileWriteArgs](),
		Effect:      kit.Destructive,
		AuditOmit:   []string{"content"},
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a fileWriteArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			scope, err := roots.For(ctx, c)
			if err != nil {
				return nil, err
			}
			defer scope.Release()
			fsys := scope.FS
			data, err := decodeContent(a.Content, a.Encoding)
			if err != nil {
				return nil, err
			}
			opt := fsroot.WriteOptions{CreateDirs: a.CreateDirs == nil || *a.CreateDirs,
				Overwrite: a.Overwrite == nil || *a.Overwrite, Append: a.Append}
			if a.Append {
				if a.Overwrite != nil && *a.Overwrite {
					return nil, mcperr.Invalid("append", true, "append or overwrite, not both", "append and overwrite exclude each other")
				}
				opt.Overwrite = false
			}
			fi, err := fsys.Write(a.Path, data, opt)
			if err != nil {
				return nil, err
			}
			changed(c, w, filepath.Join(fi.Root, filepath.FromSlash(fi.Path)))
			return map[string]any{"written": len(data), "file": infoOf(fi)}, nil
		},
	}
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

type fileListArgs struct {
	Path          string `json:"path,omitempty" jsonschema:"directory, relative to the first root or absolute inside a root" mcp:"default=."`
	Recursive     bool   `json:"recursive,omitempty" jsonschema:"descend into subdirectories" mcp:"default=false"`
	MaxDepth      int    `json:"max_depth,omitempty" jsonschema:"levels to descend when recursive (1 = direct children)" mcp:"min=1,max={maxDepth}"`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"include dotfiles and dot-directories" mcp:"default=false"`
}

func fileList(roots *Roots) kit.Tool {
	lim := roots.Base().Limits()
	return kit.Tool{
		Name:  "file_list",
		Title: "List a directory",
		Description: "List a directory inside the configured roots (default: the first root). Each entry has path (relative to the listed directory), name, type (file, dir, symlink, other), size, mode and modified time. " +
			"recursive descends up to max_depth levels (cap " + itoa(int64(lim.MaxDepth)) + ") and never follows symlinks; hidden (dot) files are skipped unless include_hidden. At most " + itoa(int64(lim.MaxListEntries)) + " entries; truncated says when more exist.",
		InputSchema: schema.MustFor[fileListArgs](schema.Vars{"maxDepth": lim.MaxDepth}),
		Effect:      kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a fileListArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			scope, err := roots.For(ctx, c)
			if err != nil {
				return nil, err
			}
			defer scope.Release()
			fsys := scope.FS
			r, err := fsys.List(a.Path, fsroot.ListOptions{Recursive: a.Recursive, MaxDepth: a.MaxDepth, IncludeHidden: a.IncludeHidden})
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": r.Path, "root": r.Root, "entries": entries(r.Entries),
				"count": len(r.Entries), "truncated": r.Truncated}, nil
		},
	}
}

type fileDeleteArgs struct {
	Path      string `json:"path" jsonschema:"path to delete, relative to the first root or absolute inside a root" mcp:"minLength=1"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a non-empty directory and everything in it" mcp:"default=false"`
}

func fileDelete(roots *Roots, w *filewatch.Watcher) kit.Tool {
	return kit.Tool{
		Name:  "file_delete",
		Title: "Delete a file or directory",
		Description: "Delete a file or symlink (never what it points to) inside the configured roots. An empty directory is deleted as is; " +
			"a non-empty directory only with recursive=true. A root directory itself can never be deleted. Returns what was deleted and how many entries were removed.",
		InputSchema: schema.MustFor[fileDeleteArgs](),
		Effect:      kit.Destructive,
		Idempotent:  true,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a fileDeleteArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			scope, err := roots.For(ctx, c)
			if err != nil {
				return nil, err
			}
			defer scope.Release()
			fsys := scope.FS
			r, err := fsys.Delete(a.Path, a.Recursive)
			if err != nil {
				return nil, err
			}
			changed(c, w, filepath.Join(r.Root, filepath.FromSlash(r.Path)))
			return map[string]any{"deleted": true, "path": r.Path, "root": r.Root, "type": r.Type, "removed": r.Removed}, nil
		},
	}
}

type fileInfoArgs struct {
	Path string `json:"path" jsonschema:"path, relative to the first root or absolute inside a root" mcp:"minLength=1"`
}

func fileInfo(roots *Roots) kit.Tool {
	return kit.Tool{
		Name:        "file_info",
		Title:       "Describe a path",
		Description: "Describe a path inside the configured roots without reading it: type (file, dir, symlink, other), size, mode, modified time, and a symlink's target when it stays inside the root.",
		InputSchema: schema.MustFor[fileInfoArgs](),
		Effect:      kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a fileInfoArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			scope, err := roots.For(ctx, c)
			if err != nil {
				return nil, err
			}
			defer scope.Release()
			fsys := scope.FS
			fi, err := fsys.Stat(a.Path)
			if err != nil {
				return nil, err
			}
			return infoOf(fi), nil
		},
	}
}

type fileSearchArgs struct {
	Pattern       string `json:"pattern" jsonschema:"glob: *, ?, [abc], and ** for any number of directories" mcp:"minLength=1"`
	Path          string `json:"path,omitempty" jsonschema:"directory to search under" mcp:"default=."`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"match dotfiles and descend into dot-directories" mcp:"default=false"`
	MaxResults    int    `json:"max_results,omitempty" jsonschema:"stop after this many matches" mcp:"min=1,max={maxResults}"`
}

func fileSearch(roots *Roots) kit.Tool {
	lim := roots.Base().Limits()
	return kit.Tool{
		Name:  "file_search",
		Title: "Find files by glob",
		Description: "Find files and directories under a directory (default: the first root) by glob. A pattern without \"/\" matches names at any depth (\"*.go\"); " +
			"a pattern with \"/\" matches the whole relative path, where \"**\" spans directories (\"cmd/**/main.go\"). Symlinks are matched, never followed. " +
			"At most " + itoa(int64(lim.MaxSearchResults)) + " matches; truncated says when more exist.",
		InputSchema: schema.MustFor[fileSearchArgs](schema.Vars{"maxResults": lim.MaxSearchResults}),
		Effect:      kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a fileSearchArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			scope, err := roots.For(ctx, c)
			if err != nil {
				return nil, err
			}
			defer scope.Release()
			fsys := scope.FS
			r, err := fsys.SearchContext(ctx, a.Path, a.Pattern, fsroot.SearchOptions{IncludeHidden: a.IncludeHidden, MaxResults: a.MaxResults})
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": r.Path, "root": r.Root, "pattern": r.Pattern, "matches": entries(r.Matches),
				"count": len(r.Matches), "truncated": r.Truncated, "scanned": r.Scanned}, nil
		},
	}
}
