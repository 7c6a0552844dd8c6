package tools

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// FileTools returns the file tools, all confined to fsys's roots.
func FileTools(fsys *fsroot.FS) []kit.Tool {
	return []kit.Tool{fileRead(fsys), fileWrite(fsys), fileList(fsys), fileDelete(fsys), fileInfo(fsys), fileSearch(fsys)}
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

func fileRead(fsys *fsroot.FS) kit.Tool {
	lim := fsys.Limits()
	return kit.Tool{
		Name:  "file_read",
		Title: "Read a file",
		Description: "Read a regular file inside the configured roots. Encodings: utf-8 (default), base64, hex. " +
			"For large or long files read a window of lines with offset+limit, or head / tail; without a window a file larger than the read cap is refused. " +
			"Result: content, size, encoding, the line range returned, and truncated when the cap cut it short.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "file path, relative to the first root or absolute inside a root"},
    "encoding": {"type": "string", "enum": ["utf-8", "base64", "hex"], "default": "utf-8", "description": "how to return the content"},
    "offset": {"type": "integer", "minimum": 1, "description": "first line to return (1-based; utf-8 only)"},
    "limit": {"type": "integer", "minimum": 1, "description": "number of lines to return from offset (utf-8 only)"},
    "head": {"type": "integer", "minimum": 1, "description": "return the first N lines (utf-8 only)"},
    "tail": {"type": "integer", "minimum": 1, "description": "return the last N lines (utf-8 only)"},
    "max_bytes": {"type": "integer", "minimum": 1, "maximum": ` + itoa(lim.MaxReadBytes) + `, "description": "lower the read cap for this call"}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
		Effect: kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct {
				Path                      string
				Encoding                  string
				Offset, Limit, Head, Tail int
				MaxBytes                  int64 `json:"max_bytes"`
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
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

func fileWrite(fsys *fsroot.FS) kit.Tool {
	lim := fsys.Limits()
	return kit.Tool{
		Name:  "file_write",
		Title: "Write a file",
		Description: "Write a file inside the configured roots, atomically: readers see the old or the new content, never a mix, and a failed write changes nothing. " +
			"Creates missing parent directories unless create_dirs is false. Replaces an existing file unless overwrite is false; append adds to the end. " +
			"content is text (utf-8) or, with encoding base64/hex, binary. Size cap: " + bytesize.Format(lim.MaxWriteBytes) + ". Returns the file's metadata after the write.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "file path, relative to the first root or absolute inside a root"},
    "content": {"type": "string", "description": "the data to write, in the given encoding"},
    "encoding": {"type": "string", "enum": ["utf-8", "base64", "hex"], "default": "utf-8", "description": "how content is encoded"},
    "create_dirs": {"type": "boolean", "default": true, "description": "create missing parent directories"},
    "overwrite": {"type": "boolean", "default": true, "description": "replace an existing file; false refuses with CONFLICT"},
    "append": {"type": "boolean", "default": false, "description": "append to the file instead of replacing it"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
		Effect:    kit.Destructive,
		AuditOmit: []string{"content"},
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			a := struct {
				Path       string
				Content    string
				Encoding   string
				CreateDirs *bool `json:"create_dirs"`
				Overwrite  *bool
				Append     bool
			}{}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
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

func fileList(fsys *fsroot.FS) kit.Tool {
	lim := fsys.Limits()
	return kit.Tool{
		Name:  "file_list",
		Title: "List a directory",
		Description: "List a directory inside the configured roots (default: the first root). Each entry has path (relative to the listed directory), name, type (file, dir, symlink, other), size, mode and modified time. " +
			"recursive descends up to max_depth levels (cap " + itoa(int64(lim.MaxDepth)) + ") and never follows symlinks; hidden (dot) files are skipped unless include_hidden. At most " + itoa(int64(lim.MaxListEntries)) + " entries; truncated says when more exist.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "default": ".", "description": "directory, relative to the first root or absolute inside a root"},
    "recursive": {"type": "boolean", "default": false, "description": "descend into subdirectories"},
    "max_depth": {"type": "integer", "minimum": 1, "maximum": ` + itoa(int64(lim.MaxDepth)) + `, "description": "levels to descend when recursive (1 = direct children)"},
    "include_hidden": {"type": "boolean", "default": false, "description": "include dotfiles and dot-directories"}
  },
  "additionalProperties": false
}`),
		Effect: kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct {
				Path          string
				Recursive     bool
				MaxDepth      int  `json:"max_depth"`
				IncludeHidden bool `json:"include_hidden"`
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			r, err := fsys.List(a.Path, fsroot.ListOptions{Recursive: a.Recursive, MaxDepth: a.MaxDepth, IncludeHidden: a.IncludeHidden})
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": r.Path, "root": r.Root, "entries": entries(r.Entries),
				"count": len(r.Entries), "truncated": r.Truncated}, nil
		},
	}
}

func fileDelete(fsys *fsroot.FS) kit.Tool {
	return kit.Tool{
		Name:  "file_delete",
		Title: "Delete a file or directory",
		Description: "Delete a file or symlink (never what it points to) inside the configured roots. An empty directory is deleted as is; " +
			"a non-empty directory only with recursive=true. A root directory itself can never be deleted. Returns what was deleted and how many entries were removed.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "path to delete, relative to the first root or absolute inside a root"},
    "recursive": {"type": "boolean", "default": false, "description": "delete a non-empty directory and everything in it"}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
		Effect:     kit.Destructive,
		Idempotent: true,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct {
				Path      string
				Recursive bool
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			r, err := fsys.Delete(a.Path, a.Recursive)
			if err != nil {
				return nil, err
			}
			return map[string]any{"deleted": true, "path": r.Path, "root": r.Root, "type": r.Type, "removed": r.Removed}, nil
		},
	}
}

func fileInfo(fsys *fsroot.FS) kit.Tool {
	return kit.Tool{
		Name:        "file_info",
		Title:       "Describe a path",
		Description: "Describe a path inside the configured roots without reading it: type (file, dir, symlink, other), size, mode, modified time, and a symlink's target when it stays inside the root.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "path, relative to the first root or absolute inside a root"}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
		Effect: kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct{ Path string }
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			fi, err := fsys.Stat(a.Path)
			if err != nil {
				return nil, err
			}
			return infoOf(fi), nil
		},
	}
}

func fileSearch(fsys *fsroot.FS) kit.Tool {
	lim := fsys.Limits()
	return kit.Tool{
		Name:  "file_search",
		Title: "Find files by glob",
		Description: "Find files and directories under a directory (default: the first root) by glob. A pattern without \"/\" matches names at any depth (\"*.go\"); " +
			"a pattern with \"/\" matches the whole relative path, where \"**\" spans directories (\"cmd/**/main.go\"). Symlinks are matched, never followed. " +
			"At most " + itoa(int64(lim.MaxSearchResults)) + " matches; truncated says when more exist.",
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "glob: *, ?, [abc], and ** for any number of directories"},
    "path": {"type": "string", "default": ".", "description": "directory to search under"},
    "include_hidden": {"type": "boolean", "default": false, "description": "match dotfiles and descend into dot-directories"},
    "max_results": {"type": "integer", "minimum": 1, "maximum": ` + itoa(int64(lim.MaxSearchResults)) + `, "description": "stop after this many matches"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`),
		Effect: kit.ReadOnly,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a struct {
				Pattern       string
				Path          string
				IncludeHidden bool `json:"include_hidden"`
				MaxResults    int  `json:"max_results"`
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			r, err := fsys.SearchContext(ctx, a.Path, a.Pattern, fsroot.SearchOptions{IncludeHidden: a.IncludeHidden, MaxResults: a.MaxResults})
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": r.Path, "root": r.Root, "pattern": r.Pattern, "matches": entries(r.Matches),
				"count": len(r.Matches), "truncated": r.Truncated, "scanned": r.Scanned}, nil
		},
	}
}
