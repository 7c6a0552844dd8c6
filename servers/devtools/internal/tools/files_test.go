package tools_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/webguard"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// filesEnv is a root directory with a known tree, host directories beside it
// that the tools must never reach, and an in-process client on the file and
// system tools, as an MCP client sees them.
//
//	base/
//	  proj/            the root
//	  outside/         what escapes aim at (secret.txt, dir/inner.txt)
//	  proj-evil/       shares the root's name as a prefix (loot.txt)
type filesEnv struct {
	base, root, outside, evil string
	fsys                      *fsroot.FS
	reg                       *metrics.Registry
	c                         *mcptest.Client
}

var filesTree = map[string]string{
	"proj/hello.txt":                "one\ntwo\nthree\nfour\nfive\n",
	"proj/bin.dat":                  "\x00\x01\xfe\xff",
	"proj/.hidden":                  "h\n",
	"proj/sub/a.go":                 "package a\n",
	"proj/sub/deep/b.go":            "package b\n",
	"proj/sub/.git/config":          "[core]\n",
	"proj/cmd/devtools-mcp/main.go": "package main\n",
	"proj/cmd/x/y/main.go":          "package main\n",
	"proj/full/f1":                  "1",
	"proj/full/f2/g":                "2",
	"outside/secret.txt":            "top secret\n",
	"outside/dir/inner.txt":         "inner\n",
	"proj-evil/loot.txt":            "loot\n",
}

func newFilesEnv(t *testing.T) *filesEnv { return newFilesEnvLimits(t, fsroot.DefaultLimits()) }

func newFilesEnvLimits(t *testing.T, lim fsroot.Limits) *filesEnv {
	t.Helper()
	return newFilesEnvOpts(t, lim, kit.Options{})
}

// newFilesEnvOpts builds the env with the given server options; Metrics is
// always the env's registry.
func newFilesEnvOpts(t *testing.T, lim fsroot.Limits, opts kit.Options) *filesEnv {
	t.Helper()
	base := writeTree(t, filesTree)
	e := &filesEnv{base: base, root: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside"),
		evil: filepath.Join(base, "proj-evil")}
	must(t, os.Mkdir(filepath.Join(e.root, "emptydir"), 0o755))
	// Links that stay inside the root.
	must(t, os.Symlink("hello.txt", filepath.Join(e.root, "link-hello")))
	must(t, os.Symlink("sub", filepath.Join(e.root, "link-sub")))
	// Traps: everything here leads out of the root or is not a regular file.
	traps := filepath.Join(e.root, "traps")
	must(t, os.Mkdir(traps, 0o755))
	must(t, os.Symlink(filepath.Join(e.outside, "secret.txt"), filepath.Join(traps, "out-abs")))
	must(t, os.Symlink("../../outside/secret.txt", filepath.Join(traps, "out-rel")))
	must(t, os.Symlink(e.outside, filepath.Join(traps, "out-dir")))
	must(t, os.Symlink("../../outside", filepath.Join(traps, "out-dir-rel")))
	must(t, os.Symlink("/dev/null", filepath.Join(traps, "devnull")))
	must(t, syscall.Mkfifo(filepath.Join(traps, "fifo"), 0o644))

	var err error
	e.fsys, err = fsroot.Open([]string{e.root}, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.fsys.Close() })
	e.reg = metrics.New("devtools")
	roots := tools.NewRoots(e.fsys, true, nil)
	all := tools.FileTools(roots, nil)
	all = append(all, tools.SystemTools(tools.SystemDeps{Info: kit.Info{Name: "devtools", Version: "1.2.3", Commit: "abc1234"},
		Metrics: e.reg, Roots: roots})...)
	opts.Metrics = e.reg
	s, err := kit.New(kit.Info{Name: "devtools"}, all, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.c = mcptest.NewInProcess(t, s, "")
	return e
}

// writeTree makes a fresh directory holding files (slash-separated paths
// below it, and their content) and returns its symlink-free path.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return base
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ok asserts success, decodes the result into v and checks the kit sent the
// same value as structuredContent.
func ok(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	mcptest.OK(t, res, v)
	if res.StructuredContent == nil {
		t.Fatalf("result has no structuredContent: %s", mcptest.Text(res))
	}
}

func (e *filesEnv) path(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

// abs turns a path a table writes "ABS" or "ABS/rel" (the table is built
// before the root exists) into that absolute path inside the root; any
// other path is returned as it is.
func (e *filesEnv) abs(p string) string {
	if rest, found := strings.CutPrefix(p, "ABS"); found {
		return e.root + rest
	}
	return p
}

// absArgs is abs applied to the "path" argument, in place.
func (e *filesEnv) absArgs(args map[string]any) map[string]any {
	if p, isString := args["path"].(string); isString {
		args["path"] = e.abs(p)
	}
	return args
}

func (e *filesEnv) readDisk(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		t.Fatalf("read %s from disk: %v", rel, err)
	}
	return string(b)
}

func (e *filesEnv) exists(rel string) bool {
	_, err := os.Lstat(e.path(rel))
	return err == nil
}

// hostState describes everything under base except the root: what the tools
// must never create, change or remove.
func (e *filesEnv) hostState(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == e.root {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String() + " " + fi.ModTime().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type fileOut = tools.FileInfoResult

type linesOut struct{ Start, End, Total int }

type readOut struct {
	Path           string    `json:"path"`
	Root           string    `json:"root"`
	Content        string    `json:"content"`
	Encoding       string    `json:"encoding"`
	Size           int64     `json:"size"`
	Lines          *linesOut `json:"lines"`
	ByteStart      int64     `json:"byte_start"`
	ByteEnd        int64     `json:"byte_end"`
	Truncated      bool      `json:"truncated"`
	NextOffset     *int      `json:"next_offset"`
	NextByteOffset *int64    `json:"next_byte_offset"`
	Rest           string    `json:"rest"`
	Modified       string    `json:"modified"`
}

type writeOut struct {
	Written int     `json:"written"`
	File    fileOut `json:"file"`
}

type listOut struct {
	Path      string    `json:"path"`
	Root      string    `json:"root"`
	Entries   []fileOut `json:"entries"`
	Count     int       `json:"count"`
	Truncated bool      `json:"truncated"`
}

type searchOut struct {
	Path      string    `json:"path"`
	Root      string    `json:"root"`
	Pattern   string    `json:"pattern"`
	Matches   []fileOut `json:"matches"`
	Count     int       `json:"count"`
	Truncated bool      `json:"truncated"`
	Scanned   int       `json:"scanned"`
}

type deleteOut struct {
	Deleted bool   `json:"deleted"`
	Path    string `json:"path"`
	Root    string `json:"root"`
	Type    string `json:"type"`
	Removed int    `json:"removed"`
}

func paths(es []fileOut) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

func TestFileRead(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	tests := []struct {
		name  string
		args  map[string]any
		want  string
		enc   string
		lines *linesOut
		trunc bool
	}{
		{"utf-8 default", map[string]any{"path": "hello.txt"}, "one\ntwo\nthree\nfour\nfive\n", "utf-8", &linesOut{1, 5, 5}, false},
		{"utf-8 explicit, absolute path", map[string]any{"path": e.path("hello.txt"), "encoding": "utf-8"}, "one\ntwo\nthree\nfour\nfive\n", "utf-8", &linesOut{1, 5, 5}, false},
		{"base64", map[string]any{"path": "bin.dat", "encoding": "base64"}, base64.StdEncoding.EncodeToString([]byte("\x00\x01\xfe\xff")), "base64", nil, false},
		{"hex", map[string]any{"path": "bin.dat", "encoding": "hex"}, "0001feff", "hex", nil, false},
		{"offset+limit", map[string]any{"path": "hello.txt", "offset": 2, "limit": 2}, "two\nthree\n", "utf-8", &linesOut{2, 3, 5}, false},
		{"offset to the end", map[string]any{"path": "hello.txt", "offset": 4}, "four\nfive\n", "utf-8", &linesOut{4, 5, 5}, false},
		{"limit alone", map[string]any{"path": "hello.txt", "limit": 1}, "one\n", "utf-8", &linesOut{1, 1, 5}, false},
		{"head", map[string]any{"path": "hello.txt", "head": 2}, "one\ntwo\n", "utf-8", &linesOut{1, 2, 5}, false},
		{"tail", map[string]any{"path": "hello.txt", "tail": 2}, "four\nfive\n", "utf-8", &linesOut{4, 5, 5}, false},
		{"head over the length", map[string]any{"path": "hello.txt", "head": 100}, "one\ntwo\nthree\nfour\nfive\n", "utf-8", &linesOut{1, 5, 5}, false},
		{"max_bytes cuts a window at a line", map[string]any{"path": "hello.txt", "head": 5, "max_bytes": 9}, "one\ntwo\n", "utf-8", &linesOut{1, 2, 5}, true},
		{"max_bytes above the file size", map[string]any{"path": "hello.txt", "max_bytes": 1000}, "one\ntwo\nthree\nfour\nfive\n", "utf-8", &linesOut{1, 5, 5}, false},
		{"through an in-root symlink", map[string]any{"path": "link-hello"}, "one\ntwo\nthree\nfour\nfive\n", "utf-8", &linesOut{1, 5, 5}, false},
		{"through an in-root dir symlink", map[string]any{"path": "link-sub/a.go"}, "package a\n", "utf-8", &linesOut{1, 1, 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out readOut
			ok(t, e.c.Call("file_read", tc.args), &out)
			if out.Content != tc.want || out.Encoding != tc.enc || out.Truncated != tc.trunc {
				t.Errorf("content=%q encoding=%q truncated=%v, want %q %q %v", out.Content, out.Encoding, out.Truncated, tc.want, tc.enc, tc.trunc)
			}
			if (out.Lines == nil) != (tc.lines == nil) || (out.Lines != nil && *out.Lines != *tc.lines) {
				t.Errorf("lines = %+v, want %+v", out.Lines, tc.lines)
			}
			if out.Root != e.root {
				t.Errorf("root = %q, want %q", out.Root, e.root)
			}
			if out.Modified == "" || out.Size == 0 {
				t.Errorf("modified %q, size %d: want both set", out.Modified, out.Size)
			}
		})
	}
	t.Run("result names the file relative to the root", func(t *testing.T) {
		var out readOut
		ok(t, e.c.Call("file_read", map[string]any{"path": e.path("sub/deep/b.go")}), &out)
		if out.Path != "sub/deep/b.go" || out.Size != int64(len("package b\n")) {
			t.Errorf("path %q size %d", out.Path, out.Size)
		}
	})
}

func TestFileReadErrors(t *testing.T) {
	t.Parallel()
	e := newFilesEnvLimits(t, fsroot.Limits{MaxReadBytes: 16})
	must(t, os.WriteFile(e.path("big.txt"), bytes.Repeat([]byte("0123456789\n"), 4), 0o644))
	must(t, os.WriteFile(e.path("latin1.txt"), []byte("caf\xe9\n"), 0o644))
	tests := []struct {
		name  string
		args  map[string]any
		code  mcperr.Code
		field string
	}{
		{"missing file", map[string]any{"path": "nope.txt"}, mcperr.NotFound, ""},
		{"missing parent", map[string]any{"path": "nope/x.txt"}, mcperr.NotFound, ""},
		{"directory", map[string]any{"path": "sub"}, mcperr.Validation, "path"},
		{"file as a directory", map[string]any{"path": "hello.txt/x"}, mcperr.Validation, "path"},
		{"byte_offset past the end", map[string]any{"path": "big.txt", "byte_offset": 45}, mcperr.Validation, "byte_offset"},
		{"byte_offset with a line window", map[string]any{"path": "big.txt", "byte_offset": 1, "head": 2}, mcperr.Validation, "byte_offset"},
		{"head and tail", map[string]any{"path": "big.txt", "head": 1, "tail": 2}, mcperr.Validation, "tail"},
		{"head and offset", map[string]any{"path": "big.txt", "head": 1, "offset": 2}, mcperr.Validation, "offset"},
		{"not utf-8", map[string]any{"path": "latin1.txt"}, mcperr.Validation, "encoding"},
		{"offset past the end", map[string]any{"path": "hello.txt", "offset": 9}, mcperr.Validation, "offset"},
		{"window with base64", map[string]any{"path": "hello.txt", "encoding": "base64", "head": 1}, mcperr.Validation, "encoding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mcptest.FailCode(t, e.c.Call("file_read", tc.args), tc.code)
			if b.Data.Field != tc.field {
				t.Errorf("field = %q, want %q (message %q)", b.Data.Field, tc.field, b.Message)
			}
			if b.Message == "" || b.Data.Retryable {
				t.Errorf("body %+v: want a message and retryable=false", b)
			}
		})
	}
	t.Run("a window over the cap is truncated, not refused", func(t *testing.T) {
		var out readOut
		ok(t, e.c.Call("file_read", map[string]any{"path": "big.txt", "tail": 4}), &out)
		if !out.Truncated || out.Content != "0123456789\n" {
			t.Errorf("truncated=%v content=%q", out.Truncated, out.Content)
		}
	})
}

func TestFileWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    map[string]any
		file    string // where the content lands, relative to the root
		want    string // content on disk afterwards
		written int
		path    string // file.path in the result
	}{
		{"create", map[string]any{"path": "new.txt", "content": "hi\n"}, "new.txt", "hi\n", 3, "new.txt"},
		{"create with parent dirs (default)", map[string]any{"path": "a/b/c.txt", "content": "x"}, "a/b/c.txt", "x", 1, "a/b/c.txt"},
		{"create_dirs true", map[string]any{"path": "d/e.txt", "content": "y", "create_dirs": true}, "d/e.txt", "y", 1, "d/e.txt"},
		{"absolute path inside the root", map[string]any{"path": "ABS/abs.txt", "content": "z"}, "abs.txt", "z", 1, "abs.txt"},
		{"overwrite by default", map[string]any{"path": "hello.txt", "content": "new"}, "hello.txt", "new", 3, "hello.txt"},
		{"overwrite true", map[string]any{"path": "hello.txt", "content": "new", "overwrite": true}, "hello.txt", "new", 3, "hello.txt"},
		{"overwrite false on a new file", map[string]any{"path": "fresh.txt", "content": "f", "overwrite": false}, "fresh.txt", "f", 1, "fresh.txt"},
		{"append", map[string]any{"path": "hello.txt", "content": "six\n", "append": true}, "hello.txt", "one\ntwo\nthree\nfour\nfive\nsix\n", 4, "hello.txt"},
		{"append with overwrite false", map[string]any{"path": "hello.txt", "content": "six\n", "append": true, "overwrite": false}, "hello.txt", "one\ntwo\nthree\nfour\nfive\nsix\n", 4, "hello.txt"},
		{"append creates a missing file", map[string]any{"path": "log.txt", "content": "l1\n", "append": true}, "log.txt", "l1\n", 3, "log.txt"},
		{"base64 content", map[string]any{"path": "b.bin", "content": base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff}), "encoding": "base64"}, "b.bin", "\x00\x01\x02\xff", 4, "b.bin"},
		{"hex content", map[string]any{"path": "h.bin", "content": "00ff10", "encoding": "hex"}, "h.bin", "\x00\xff\x10", 3, "h.bin"},
		{"empty content", map[string]any{"path": "empty.txt", "content": ""}, "empty.txt", "", 0, "empty.txt"},
		{"through an in-root symlink writes its target", map[string]any{"path": "link-hello", "content": "via link"}, "hello.txt", "via link", 8, "hello.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFilesEnv(t)
			var out writeOut
			ok(t, e.c.Call("file_write", e.absArgs(tc.args)), &out)
			if got := e.readDisk(t, tc.file); got != tc.want {
				t.Errorf("on disk %q, want %q", got, tc.want)
			}
			if out.Written != tc.written || out.File.Path != tc.path || out.File.Type != "file" ||
				out.File.Size != int64(len(tc.want)) || out.File.Root != e.root || out.File.Modified == "" {
				t.Errorf("result %+v", out)
			}
			if tc.name == "through an in-root symlink writes its target" {
				if fi, err := os.Lstat(e.path("link-hello")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("link-hello is no longer a symlink: %v", err)
				}
			}
		})
	}
}

func TestFileWriteErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  map[string]any
		code  mcperr.Code
		field string
		check string // a path that must be unchanged ("hello.txt") or absent
	}{
		{"overwrite false on an existing file", map[string]any{"path": "hello.txt", "content": "x", "overwrite": false}, mcperr.Conflict, "", "hello.txt"},
		{"create_dirs false with a missing parent", map[string]any{"path": "no/such/f.txt", "content": "x", "create_dirs": false}, mcperr.NotFound, "", "no"},
		{"invalid base64", map[string]any{"path": "b.bin", "content": "not base64!", "encoding": "base64"}, mcperr.Validation, "content", "b.bin"},
		{"invalid hex", map[string]any{"path": "h.bin", "content": "zz", "encoding": "hex"}, mcperr.Validation, "content", "h.bin"},
		{"odd-length hex", map[string]any{"path": "h.bin", "content": "abc", "encoding": "hex"}, mcperr.Validation, "content", "h.bin"},
		{"append with overwrite true", map[string]any{"path": "hello.txt", "content": "x", "append": true, "overwrite": true}, mcperr.Validation, "append", "hello.txt"},
		{"a directory", map[string]any{"path": "sub", "content": "x"}, mcperr.Validation, "path", "sub/a.go"},
		{"under a file", map[string]any{"path": "hello.txt/x", "content": "x"}, mcperr.Validation, "path", "hello.txt"},
		{"over the write cap", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 17)}, mcperr.Validation, "content", "big.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFilesEnvLimits(t, fsroot.Limits{MaxWriteBytes: 16})
			before, existed := "", e.exists(tc.check)
			if existed {
				if fi, _ := os.Stat(e.path(tc.check)); fi.Mode().IsRegular() {
					before = e.readDisk(t, tc.check)
				}
			}
			b := mcptest.FailCode(t, e.c.Call("file_write", tc.args), tc.code)
			if b.Data.Field != tc.field {
				t.Errorf("field = %q, want %q (message %q)", b.Data.Field, tc.field, b.Message)
			}
			if e.exists(tc.check) != existed {
				t.Errorf("%s: existence changed (was %v)", tc.check, existed)
			}
			if existed && before != "" && e.readDisk(t, tc.check) != before {
				t.Errorf("%s changed", tc.check)
			}
		})
	}
}

func TestFileList(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	top := []string{"bin.dat", "cmd", "emptydir", "full", "hello.txt", "link-hello", "link-sub", "sub", "traps"}
	tests := []struct {
		name string
		args map[string]any
		dir  string
		want []string
	}{
		{"root by default", map[string]any{}, ".", top},
		{"root as dot", map[string]any{"path": "."}, ".", top},
		{"root as empty string", map[string]any{"path": ""}, ".", top},
		{"root by absolute path", map[string]any{"path": e.root}, ".", top},
		{"include_hidden", map[string]any{"include_hidden": true}, ".", append([]string{".hidden"}, top...)},
		{"subdirectory", map[string]any{"path": "sub"}, "sub", []string{"a.go", "deep"}},
		{"subdirectory with hidden", map[string]any{"path": "sub", "include_hidden": true}, "sub", []string{".git", "a.go", "deep"}},
		{"recursive", map[string]any{"path": "sub", "recursive": true}, "sub", []string{"a.go", "deep", "deep/b.go"}},
		{"recursive with hidden", map[string]any{"path": "sub", "recursive": true, "include_hidden": true}, "sub", []string{".git", ".git/config", "a.go", "deep", "deep/b.go"}},
		{"recursive max_depth 1", map[string]any{"path": "cmd", "recursive": true, "max_depth": 1}, "cmd", []string{"devtools-mcp", "x"}},
		{"recursive max_depth 2", map[string]any{"path": "cmd", "recursive": true, "max_depth": 2}, "cmd", []string{"devtools-mcp", "devtools-mcp/main.go", "x", "x/y"}},
		{"max_depth without recursive lists one level", map[string]any{"path": "cmd", "max_depth": 3}, "cmd", []string{"devtools-mcp", "x"}},
		{"empty directory", map[string]any{"path": "emptydir"}, "emptydir", []string{}},
		{"through an in-root dir symlink", map[string]any{"path": "link-sub"}, "link-sub", []string{"a.go", "deep"}},
		{"traps are listed, not followed", map[string]any{"path": "traps", "recursive": true}, "traps",
			[]string{"devnull", "fifo", "out-abs", "out-dir", "out-dir-rel", "out-rel"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out listOut
			ok(t, e.c.Call("file_list", tc.args), &out)
			if got := paths(out.Entries); !slices.Equal(got, tc.want) {
				t.Errorf("entries = %q, want %q", got, tc.want)
			}
			if out.Path != tc.dir || out.Root != e.root || out.Count != len(tc.want) || out.Truncated {
				t.Errorf("path %q root %q count %d truncated %v", out.Path, out.Root, out.Count, out.Truncated)
			}
		})
	}
	t.Run("entry shapes", func(t *testing.T) {
		var out listOut
		ok(t, e.c.Call("file_list", map[string]any{"path": "traps"}), &out)
		types := map[string]string{}
		for _, en := range out.Entries {
			types[en.Name] = en.Type
			if en.Mode == "" || en.Modified == "" {
				t.Errorf("entry %+v: mode and modified must be set", en)
			}
		}
		want := map[string]string{"devnull": "symlink", "fifo": "other", "out-abs": "symlink", "out-dir": "symlink",
			"out-dir-rel": "symlink", "out-rel": "symlink"}
		if !equalMaps(types, want) {
			t.Errorf("types = %v, want %v", types, want)
		}
		ok(t, e.c.Call("file_list", map[string]any{}), &out)
		for _, en := range out.Entries {
			if en.Name == "hello.txt" && (en.Type != "file" || en.Size != 24) {
				t.Errorf("hello.txt entry %+v", en)
			}
			if en.Name == "sub" && en.Type != "dir" {
				t.Errorf("sub entry %+v", en)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		mcptest.FailCode(t, e.c.Call("file_list", map[string]any{"path": "nope"}), mcperr.NotFound)
		b := mcptest.FailCode(t, e.c.Call("file_list", map[string]any{"path": "hello.txt"}), mcperr.Validation)
		if b.Data.Field != "path" {
			t.Errorf("listing a file: field %q", b.Data.Field)
		}
	})
}

func TestFileListTruncated(t *testing.T) {
	t.Parallel()
	e := newFilesEnvLimits(t, fsroot.Limits{MaxListEntries: 3, MaxSearchResults: 2})
	var out listOut
	ok(t, e.c.Call("file_list", map[string]any{}), &out)
	if out.Count != 3 || len(out.Entries) != 3 || !out.Truncated {
		t.Errorf("count %d truncated %v", out.Count, out.Truncated)
	}
	var s searchOut
	ok(t, e.c.Call("file_search", map[string]any{"pattern": "*.go"}), &s)
	if s.Count != 2 || !s.Truncated {
		t.Errorf("search count %d truncated %v", s.Count, s.Truncated)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestFileDelete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    map[string]any
		gone    string
		typ     string
		removed int
		path    string
	}{
		{"file", map[string]any{"path": "hello.txt"}, "hello.txt", "file", 1, "hello.txt"},
		{"file by absolute path", map[string]any{"path": "ABS/sub/a.go"}, "sub/a.go", "file", 1, "sub/a.go"},
		{"empty directory", map[string]any{"path": "emptydir"}, "emptydir", "dir", 1, "emptydir"},
		{"empty directory, recursive", map[string]any{"path": "emptydir", "recursive": true}, "emptydir", "dir", 1, "emptydir"},
		{"non-empty directory, recursive", map[string]any{"path": "full", "recursive": true}, "full", "dir", 4, "full"},
		{"hidden files count", map[string]any{"path": "sub", "recursive": true}, "sub", "dir", 6, "sub"},
		{"in-root symlink: the link, not its target", map[string]any{"path": "link-hello"}, "link-hello", "symlink", 1, "link-hello"},
		{"fifo", map[string]any{"path": "traps/fifo"}, "traps/fifo", "other", 1, "traps/fifo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFilesEnv(t)
			var out deleteOut
			ok(t, e.c.Call("file_delete", e.absArgs(tc.args)), &out)
			if !out.Deleted || out.Type != tc.typ || out.Removed != tc.removed || out.Path != tc.path || out.Root != e.root {
				t.Errorf("result %+v, want type %s removed %d path %s", out, tc.typ, tc.removed, tc.path)
			}
			if e.exists(tc.gone) {
				t.Errorf("%s still exists", tc.gone)
			}
			if !e.exists("hello.txt") && tc.gone != "hello.txt" {
				t.Errorf("hello.txt was removed too")
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		e := newFilesEnv(t)
		b := mcptest.FailCode(t, e.c.Call("file_delete", map[string]any{"path": "full"}), mcperr.Conflict)
		if !strings.Contains(b.Message, "recursive") {
			t.Errorf("message %q should point at recursive", b.Message)
		}
		mcptest.FailCode(t, e.c.Call("file_delete", map[string]any{"path": "full", "recursive": false}), mcperr.Conflict)
		if !e.exists("full/f2/g") {
			t.Errorf("a refused delete removed content")
		}
		mcptest.FailCode(t, e.c.Call("file_delete", map[string]any{"path": "nope.txt"}), mcperr.NotFound)
	})
}

func TestFileInfo(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	tests := []struct {
		name   string
		path   string
		want   fileOut // Root, Mode prefix, Modified are checked separately
		prefix string  // of Mode
	}{
		{"file", "hello.txt", fileOut{Path: "hello.txt", Name: "hello.txt", Type: "file", Size: 24}, "-"},
		{"file by absolute path", "ABS/sub/a.go", fileOut{Path: "sub/a.go", Name: "a.go", Type: "file", Size: 10}, "-"},
		{"directory", "sub", fileOut{Path: "sub", Name: "sub", Type: "dir"}, "d"},
		{"the root as dot", ".", fileOut{Path: ".", Name: "proj", Type: "dir"}, "d"},
		{"the root by absolute path", "ABS", fileOut{Path: ".", Name: "proj", Type: "dir"}, "d"},
		{"in-root symlink shows its target", "link-hello", fileOut{Path: "link-hello", Name: "link-hello", Type: "symlink", Size: 9, Target: "hello.txt"}, "L"},
		{"escaping symlink hides its target", "traps/out-abs", fileOut{Path: "traps/out-abs", Name: "out-abs", Type: "symlink"}, "L"},
		{"relative escaping symlink hides its target", "traps/out-rel", fileOut{Path: "traps/out-rel", Name: "out-rel", Type: "symlink", Size: 24}, "L"},
		{"symlink to /dev/null hides its target", "traps/devnull", fileOut{Path: "traps/devnull", Name: "devnull", Type: "symlink", Size: 9}, "L"},
		{"fifo", "traps/fifo", fileOut{Path: "traps/fifo", Name: "fifo", Type: "other"}, "p"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.c.Call("file_info", map[string]any{"path": e.abs(tc.path)})
			var out fileOut
			ok(t, res, &out)
			if out.Root != e.root || !strings.HasPrefix(out.Mode, tc.prefix) || out.Modified == "" {
				t.Errorf("root %q mode %q modified %q", out.Root, out.Mode, out.Modified)
			}
			got := out
			got.Root, got.Mode, got.Modified = "", "", ""
			if tc.want.Type == "dir" || tc.name == "escaping symlink hides its target" || tc.name == "fifo" {
				got.Size = 0 // directory and absolute link sizes depend on the host
			}
			if got != tc.want {
				t.Errorf("info = %+v, want %+v", got, tc.want)
			}
			if text := mcptest.Text(res); strings.Contains(text, e.outside) || strings.Contains(text, "/dev/null") {
				t.Errorf("file_info leaked a link target outside the root: %s", text)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		mcptest.FailCode(t, e.c.Call("file_info", map[string]any{"path": "nope"}), mcperr.NotFound)
	})
}

func TestFileSearch(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	tests := []struct {
		name  string
		args  map[string]any
		dir   string
		want  []string
		trunc bool
	}{
		{"name glob at any depth", map[string]any{"pattern": "*.go"}, ".",
			[]string{"cmd/devtools-mcp/main.go", "cmd/x/y/main.go", "sub/a.go", "sub/deep/b.go"}, false},
		{"path glob with **", map[string]any{"pattern": "cmd/**/main.go"}, ".", []string{"cmd/devtools-mcp/main.go", "cmd/x/y/main.go"}, false},
		{"path glob with one level", map[string]any{"pattern": "cmd/*/main.go"}, ".", []string{"cmd/devtools-mcp/main.go"}, false},
		{"anchored name", map[string]any{"pattern": "./hello.txt"}, ".", []string{"hello.txt"}, false},
		{"under a directory", map[string]any{"pattern": "*.go", "path": "sub"}, "sub", []string{"a.go", "deep/b.go"}, false},
		{"under a directory by absolute path", map[string]any{"pattern": "*.go", "path": "ABS/sub"}, "sub", []string{"a.go", "deep/b.go"}, false},
		{"hidden skipped", map[string]any{"pattern": "config"}, ".", []string{}, false},
		{"include_hidden", map[string]any{"pattern": "config", "include_hidden": true}, ".", []string{"sub/.git/config"}, false},
		{"directories match too", map[string]any{"pattern": "deep"}, ".", []string{"sub/deep"}, false},
		{"symlinks matched, never followed", map[string]any{"pattern": "*secret*"}, ".", []string{}, false},
		{"max_results", map[string]any{"pattern": "*.go", "max_results": 1}, ".", []string{"cmd/devtools-mcp/main.go"}, true},
		{"no match", map[string]any{"pattern": "*.rs"}, ".", []string{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out searchOut
			ok(t, e.c.Call("file_search", e.absArgs(tc.args)), &out)
			if got := paths(out.Matches); !slices.Equal(got, tc.want) {
				t.Errorf("matches = %q, want %q", got, tc.want)
			}
			if out.Path != tc.dir || out.Root != e.root || out.Pattern != tc.args["pattern"] || out.Count != len(tc.want) ||
				out.Truncated != tc.trunc || out.Scanned < out.Count {
				t.Errorf("path %q root %q pattern %q count %d truncated %v scanned %d", out.Path, out.Root, out.Pattern, out.Count, out.Truncated, out.Scanned)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		for _, pat := range []string{"[", "../*.go", "/etc/*", "./"} {
			b := mcptest.FailCode(t, e.c.Call("file_search", map[string]any{"pattern": pat}), mcperr.Validation)
			if b.Data.Field != "pattern" {
				t.Errorf("pattern %q: field %q", pat, b.Data.Field)
			}
		}
		mcptest.FailCode(t, e.c.Call("file_search", map[string]any{"pattern": "*", "path": "nope"}), mcperr.NotFound)
		b := mcptest.FailCode(t, e.c.Call("file_search", map[string]any{"pattern": "*", "path": "hello.txt"}), mcperr.Validation)
		if b.Data.Field != "path" {
			t.Errorf("search under a file: field %q", b.Data.Field)
		}
	})
}

// TestFileToolsBadArguments: whatever is wrong with the arguments, the call
// fails with VALIDATION_ERROR naming the field, before any handler runs.
func TestFileToolsBadArguments(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	tests := []struct {
		tool  string
		name  string
		args  any
		field string
	}{
		{"file_read", "missing path", map[string]any{}, "path"},
		{"file_read", "no arguments at all", nil, "path"},
		{"file_read", "extra argument", map[string]any{"path": "hello.txt", "verbose": true}, "verbose"},
		{"file_read", "path is a number", map[string]any{"path": 5}, "path"},
		{"file_read", "path is null", map[string]any{"path": nil}, "path"},
		{"file_read", "empty path", map[string]any{"path": ""}, "path"},
		{"file_read", "offset is a string", map[string]any{"path": "hello.txt", "offset": "2"}, "offset"},
		{"file_read", "offset is fractional", map[string]any{"path": "hello.txt", "offset": 1.5}, "offset"},
		{"file_read", "offset zero", map[string]any{"path": "hello.txt", "offset": 0}, "offset"},
		{"file_read", "limit negative", map[string]any{"path": "hello.txt", "limit": -1}, "limit"},
		{"file_read", "head is a bool", map[string]any{"path": "hello.txt", "head": true}, "head"},
		{"file_read", "tail zero", map[string]any{"path": "hello.txt", "tail": 0}, "tail"},
		{"file_read", "unknown encoding", map[string]any{"path": "hello.txt", "encoding": "utf-16"}, "encoding"},
		{"file_read", "max_bytes zero", map[string]any{"path": "hello.txt", "max_bytes": 0}, "max_bytes"},
		{"file_read", "max_bytes over the cap", map[string]any{"path": "hello.txt", "max_bytes": fsroot.DefaultLimits().MaxReadBytes + 1}, "max_bytes"},
		{"file_read", "head and tail together", map[string]any{"path": "hello.txt", "head": 1, "tail": 1}, "tail"},
		{"file_read", "head with offset", map[string]any{"path": "hello.txt", "head": 1, "offset": 2}, "offset"},
		{"file_read", "tail with limit", map[string]any{"path": "hello.txt", "tail": 1, "limit": 2}, "offset"},

		{"file_write", "missing path", map[string]any{"content": "x"}, "path"},
		{"file_write", "missing content", map[string]any{"path": "x.txt"}, "content"},
		{"file_write", "extra argument", map[string]any{"path": "x.txt", "content": "x", "mode": "0644"}, "mode"},
		{"file_write", "content is a number", map[string]any{"path": "x.txt", "content": 5}, "content"},
		{"file_write", "content is an object", map[string]any{"path": "x.txt", "content": map[string]any{"a": 1}}, "content"},
		{"file_write", "create_dirs is a string", map[string]any{"path": "x.txt", "content": "x", "create_dirs": "yes"}, "create_dirs"},
		{"file_write", "overwrite is a number", map[string]any{"path": "x.txt", "content": "x", "overwrite": 1}, "overwrite"},
		{"file_write", "append is a string", map[string]any{"path": "x.txt", "content": "x", "append": "true"}, "append"},
		{"file_write", "unknown encoding", map[string]any{"path": "x.txt", "content": "x", "encoding": "latin1"}, "encoding"},
		{"file_write", "append and overwrite true", map[string]any{"path": "x.txt", "content": "x", "append": true, "overwrite": true}, "append"},
		{"file_write", "invalid base64", map[string]any{"path": "x.txt", "content": "@@@", "encoding": "base64"}, "content"},

		{"file_list", "extra argument", map[string]any{"pattern": "*"}, "pattern"},
		{"file_list", "path is a number", map[string]any{"path": 1}, "path"},
		{"file_list", "recursive is a string", map[string]any{"recursive": "true"}, "recursive"},
		{"file_list", "max_depth is a string", map[string]any{"recursive": true, "max_depth": "2"}, "max_depth"},
		{"file_list", "max_depth zero", map[string]any{"recursive": true, "max_depth": 0}, "max_depth"},
		{"file_list", "max_depth over the cap", map[string]any{"recursive": true, "max_depth": fsroot.DefaultLimits().MaxDepth + 1}, "max_depth"},
		{"file_list", "include_hidden is a number", map[string]any{"include_hidden": 1}, "include_hidden"},

		{"file_delete", "missing path", map[string]any{}, "path"},
		{"file_delete", "extra argument", map[string]any{"path": "hello.txt", "force": true}, "force"},
		{"file_delete", "path is an array", map[string]any{"path": []string{"hello.txt"}}, "path"},
		{"file_delete", "recursive is a string", map[string]any{"path": "full", "recursive": "yes"}, "recursive"},

		{"file_info", "missing path", map[string]any{}, "path"},
		{"file_info", "extra argument", map[string]any{"path": "hello.txt", "follow": true}, "follow"},
		{"file_info", "path is a bool", map[string]any{"path": true}, "path"},

		{"file_search", "missing pattern", map[string]any{"path": "."}, "pattern"},
		{"file_search", "extra argument", map[string]any{"pattern": "*", "regex": true}, "regex"},
		{"file_search", "pattern is a number", map[string]any{"pattern": 1}, "pattern"},
		{"file_search", "empty pattern", map[string]any{"pattern": ""}, "pattern"},
		{"file_search", "path is a number", map[string]any{"pattern": "*", "path": 2}, "path"},
		{"file_search", "include_hidden is a string", map[string]any{"pattern": "*", "include_hidden": "no"}, "include_hidden"},
		{"file_search", "max_results zero", map[string]any{"pattern": "*", "max_results": 0}, "max_results"},
		{"file_search", "max_results over the cap", map[string]any{"pattern": "*", "max_results": fsroot.DefaultLimits().MaxSearchResults + 1}, "max_results"},
	}
	before := e.hostState(t)
	for _, tc := range tests {
		t.Run(tc.tool+"/"+tc.name, func(t *testing.T) {
			b := mcptest.FailCode(t, e.c.Call(tc.tool, tc.args), mcperr.Validation)
			if b.Data.Field != tc.field {
				t.Errorf("field = %q, want %q (message %q)", b.Data.Field, tc.field, b.Message)
			}
			if b.Message == "" || b.Data.Retryable {
				t.Errorf("body %+v: want a message and retryable=false", b)
			}
		})
	}
	if e.exists("x.txt") {
		t.Errorf("a refused file_write created x.txt")
	}
	if e.readDisk(t, "hello.txt") != filesTree["proj/hello.txt"] || !e.exists("full/f2/g") {
		t.Errorf("a refused call changed the tree")
	}
	if after := e.hostState(t); !equalMaps(before, after) {
		t.Errorf("host outside the root changed")
	}
}

// TestFileEscapes: every way out of the root is refused, nothing outside it
// changes, and the refusal names no host path but the root.
func TestFileEscapes(t *testing.T) {
	t.Parallel()
	type escape struct {
		tool string
		name string
		args func(e *filesEnv) map[string]any
		code mcperr.Code
	}
	rel := func(p string) func(*filesEnv) map[string]any {
		return func(*filesEnv) map[string]any { return map[string]any{"path": p} }
	}
	abs := func(f func(e *filesEnv) string) func(*filesEnv) map[string]any {
		return func(e *filesEnv) map[string]any { return map[string]any{"path": f(e)} }
	}
	outsideFile := abs(func(e *filesEnv) string { return filepath.Join(e.outside, "secret.txt") })
	siblingFile := abs(func(e *filesEnv) string { return filepath.Join(e.evil, "loot.txt") })
	siblingDir := abs(func(e *filesEnv) string { return e.evil })
	outsideDir := abs(func(e *filesEnv) string { return e.outside })
	dotdotAbs := abs(func(e *filesEnv) string { return e.root + "/../outside/secret.txt" })
	write := func(f func(*filesEnv) map[string]any) func(*filesEnv) map[string]any {
		return func(e *filesEnv) map[string]any { a := f(e); a["content"] = "pwned"; return a }
	}
	appendTo := func(f func(*filesEnv) map[string]any) func(*filesEnv) map[string]any {
		return func(e *filesEnv) map[string]any { a := f(e); a["content"] = "pwned"; a["append"] = true; return a }
	}
	search := func(f func(*filesEnv) map[string]any) func(*filesEnv) map[string]any {
		return func(e *filesEnv) map[string]any { a := f(e); a["pattern"] = "*"; return a }
	}
	recursive := func(f func(*filesEnv) map[string]any) func(*filesEnv) map[string]any {
		return func(e *filesEnv) map[string]any { a := f(e); a["recursive"] = true; return a }
	}
	deny, invalid := mcperr.PermissionDeny, mcperr.Validation
	tests := []escape{
		{"file_read", "dotdot", rel(".."), deny},
		{"file_read", "../outside/secret.txt", rel("../outside/secret.txt"), deny},
		{"file_read", "sub/../../outside/secret.txt", rel("sub/../../outside/secret.txt"), deny},
		{"file_read", "absolute path outside", outsideFile, deny},
		{"file_read", "absolute root/../outside", dotdotAbs, deny},
		{"file_read", "/etc/passwd", rel("/etc/passwd"), deny},
		{"file_read", "absolute symlink outside", rel("traps/out-abs"), deny},
		{"file_read", "relative symlink outside", rel("traps/out-rel"), deny},
		{"file_read", "through a dir symlink outside", rel("traps/out-dir/secret.txt"), deny},
		{"file_read", "through a relative dir symlink outside", rel("traps/out-dir-rel/secret.txt"), deny},
		{"file_read", "sibling sharing the root's prefix", siblingFile, deny},
		{"file_read", "fifo", rel("traps/fifo"), invalid},
		{"file_read", "symlink to /dev/null", rel("traps/devnull"), deny},
		{"file_read", "/dev/null itself", rel("/dev/null"), deny},

		{"file_write", "../x", write(rel("../x")), deny},
		{"file_write", "dotdot", write(rel("..")), deny},
		{"file_write", "a/../../x", write(rel("a/../../x")), deny},
		{"file_write", "absolute path outside (new file)", write(abs(func(e *filesEnv) string { return filepath.Join(e.base, "x") })), deny},
		{"file_write", "absolute path outside (existing file)", write(outsideFile), deny},
		{"file_write", "absolute root/../outside", write(dotdotAbs), deny},
		{"file_write", "through an absolute symlink outside", write(rel("traps/out-abs")), deny},
		{"file_write", "through a relative symlink outside", write(rel("traps/out-rel")), deny},
		{"file_write", "append through a symlink outside", appendTo(rel("traps/out-rel")), deny},
		{"file_write", "new file through a dir symlink outside", write(rel("traps/out-dir/new.txt")), deny},
		{"file_write", "existing file through a dir symlink outside", write(rel("traps/out-dir/secret.txt")), deny},
		{"file_write", "new dirs through a dir symlink outside", write(rel("traps/out-dir-rel/a/b/new.txt")), deny},
		{"file_write", "sibling sharing the root's prefix", write(siblingFile), deny},
		{"file_write", "new file in the sibling", write(abs(func(e *filesEnv) string { return filepath.Join(e.evil, "new.txt") })), deny},
		{"file_write", "fifo", write(rel("traps/fifo")), invalid},
		{"file_write", "symlink to /dev/null", write(rel("traps/devnull")), deny},
		{"file_write", "the root itself", write(rel(".")), deny},
		{"file_write", "the root by absolute path", write(abs(func(e *filesEnv) string { return e.root })), deny},

		{"file_list", "dotdot", rel(".."), deny},
		{"file_list", "../outside", rel("../outside"), deny},
		{"file_list", "absolute path outside", outsideDir, deny},
		{"file_list", "/", rel("/"), deny},
		{"file_list", "dir symlink outside", rel("traps/out-dir"), deny},
		{"file_list", "relative dir symlink outside", rel("traps/out-dir-rel"), deny},
		{"file_list", "below a dir symlink outside", rel("traps/out-dir/dir"), deny},
		{"file_list", "sibling sharing the root's prefix", siblingDir, deny},
		{"file_list", "fifo", rel("traps/fifo"), invalid},

		{"file_search", "dotdot", search(rel("..")), deny},
		{"file_search", "absolute path outside", search(outsideDir), deny},
		{"file_search", "dir symlink outside", search(rel("traps/out-dir")), deny},
		{"file_search", "sibling sharing the root's prefix", search(siblingDir), deny},

		{"file_info", "dotdot", rel(".."), deny},
		{"file_info", "absolute path outside", outsideFile, deny},
		{"file_info", "below a dir symlink outside", rel("traps/out-dir/secret.txt"), deny},
		{"file_info", "sibling sharing the root's prefix", siblingFile, deny},

		{"file_delete", "dotdot", rel(".."), deny},
		{"file_delete", "../outside/secret.txt", rel("../outside/secret.txt"), deny},
		{"file_delete", "a/../../outside/secret.txt", rel("a/../../outside/secret.txt"), deny},
		{"file_delete", "absolute path outside", outsideFile, deny},
		{"file_delete", "absolute dir outside, recursive", recursive(outsideDir), deny},
		{"file_delete", "through a dir symlink outside", rel("traps/out-dir/secret.txt"), deny},
		{"file_delete", "dir through a dir symlink outside", recursive(rel("traps/out-dir/dir")), deny},
		{"file_delete", "sibling sharing the root's prefix", siblingFile, deny},
		{"file_delete", "sibling dir, recursive", recursive(siblingDir), deny},
		{"file_delete", "the root as dot", rel("."), deny},
		{"file_delete", "the root as ./", rel("./"), deny},
		{"file_delete", "the root as sub/..", recursive(rel("sub/..")), deny},
		{"file_delete", "the root, recursive", recursive(rel(".")), deny},
		{"file_delete", "the root by absolute path", recursive(abs(func(e *filesEnv) string { return e.root })), deny},
		{"file_delete", "the root by absolute path with a slash", abs(func(e *filesEnv) string { return e.root + "/" }), deny},
		{"file_delete", "the root as an empty path", rel(""), invalid},
	}
	for _, tc := range tests {
		t.Run(tc.tool+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFilesEnv(t)
			before := e.hostState(t)
			args := tc.args(e)
			res := e.c.Call(tc.tool, args)
			b := mcptest.FailCode(t, res, tc.code)
			if tc.code == mcperr.Validation && b.Data.Field != "path" {
				t.Errorf("field = %q, want path", b.Data.Field)
			}
			if after := e.hostState(t); !equalMaps(before, after) {
				t.Errorf("the host outside the root changed:\nbefore %v\nafter  %v", before, after)
			}
			if !e.exists(".") || e.readDisk(t, "hello.txt") != filesTree["proj/hello.txt"] {
				t.Errorf("the root's content changed")
			}
			given, _ := args["path"].(string)
			text := mcptest.Text(res)
			// Apart from the root, no host path the caller did not give.
			if rest := rootRE(e.root).ReplaceAllString(text, "<root>$1"); !strings.Contains(given, e.base) && strings.Contains(rest, e.base) {
				t.Errorf("error body names a host path other than the root: %s", text)
			}
			for _, leak := range []string{e.outside, e.evil, e.base + "/x", "/dev/null", "../../outside", "/etc/passwd"} {
				if strings.Contains(b.Message, leak) {
					t.Errorf("error message names %q: %s", leak, b.Message)
				}
				if !strings.Contains(given, leak) && strings.Contains(text, leak) {
					t.Errorf("error body names %q, which the caller never gave: %s", leak, text)
				}
			}
		})
	}
}

// rootRE matches the root as a whole path (not the prefix of proj-evil).
func rootRE(root string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(root) + `([/"\s,;)]|$)`)
}

// TestFileDeleteEscapingSymlink: deleting a link that leads out of the root
// removes the link and never what it points to.
func TestFileDeleteEscapingSymlink(t *testing.T) {
	t.Parallel()
	for _, link := range []string{"traps/out-abs", "traps/out-rel", "traps/out-dir", "traps/out-dir-rel", "traps/devnull"} {
		t.Run(link, func(t *testing.T) {
			t.Parallel()
			e := newFilesEnv(t)
			before := e.hostState(t)
			var out deleteOut
			ok(t, e.c.Call("file_delete", map[string]any{"path": link, "recursive": true}), &out)
			if out.Type != "symlink" || out.Removed != 1 || e.exists(link) {
				t.Errorf("result %+v; link still there: %v", out, e.exists(link))
			}
			if after := e.hostState(t); !equalMaps(before, after) {
				t.Errorf("the link's target outside the root changed")
			}
			if _, err := os.Stat("/dev/null"); err != nil {
				t.Errorf("/dev/null: %v", err)
			}
		})
	}
}

// TestFileErrorMessages: the message an agent reads is a sentence of its
// own: it names the path as the caller gave it (but never repeats a path
// refused for leaving the roots), states the cap that was hit, and carries
// no operation prefixes or operating-system text.
func TestFileErrorMessages(t *testing.T) {
	t.Parallel()
	e := newFilesEnvLimits(t, fsroot.Limits{MaxReadBytes: 16, MaxWriteBytes: 16})
	must(t, os.WriteFile(e.path("big.txt"), bytes.Repeat([]byte("0123456789\n"), 4), 0o644))
	tests := []struct {
		tool  string
		args  map[string]any
		code  mcperr.Code
		field string
		want  string
	}{
		{"file_read", map[string]any{"path": "nope/deeper.txt"}, mcperr.NotFound, "", `"nope/deeper.txt" does not exist`},
		{"file_read", map[string]any{"path": "sub"}, mcperr.Validation, "path", `"sub" is a directory, not a file`},
		{"file_read", map[string]any{"path": "traps/fifo"}, mcperr.Validation, "path", `"traps/fifo" is a named pipe (fifo), not a regular file`},
		{"file_read", map[string]any{"path": "hello.txt/x"}, mcperr.Validation, "path", `a component of "hello.txt/x" is not a directory`},
		{"file_read", map[string]any{"path": "big.txt", "byte_offset": 100}, mcperr.Validation, "byte_offset",
			"byte_offset 100 is past the end of the file (44 bytes)"},
		{"file_read", map[string]any{"path": "bin.dat"}, mcperr.Validation, "encoding",
			`"bin.dat" is not valid UTF-8 (binary?); read it with encoding "base64" or "hex"`},
		{"file_read", map[string]any{"path": "hello.txt", "offset": 9}, mcperr.Validation, "offset", "offset 9 is past the end of the file (5 lines)"},
		{"file_read", map[string]any{"path": "../outside/secret.txt"}, mcperr.PermissionDeny, "", "path escapes the root directory through .."},
		{"file_read", map[string]any{"path": "traps/out-rel"}, mcperr.PermissionDeny, "", "path leaves the root directory (through .. or a symbolic link)"},
		{"file_read", map[string]any{"path": "ABS"}, mcperr.PermissionDeny, "", "path is outside the allowed roots ROOT"},
		{"file_write", map[string]any{"path": "hello.txt", "content": "x", "overwrite": false}, mcperr.Conflict, "",
			`"hello.txt" already exists; set overwrite to replace it or append to add to it`},
		{"file_write", map[string]any{"path": "no/such/f.txt", "content": "x", "create_dirs": false}, mcperr.NotFound, "",
			`the parent directory of "no/such/f.txt" does not exist; set create_dirs to create it`},
		{"file_write", map[string]any{"path": "x.txt", "content": strings.Repeat("x", 17)}, mcperr.Validation, "content",
			"content is 17 bytes (17 B), over the write cap of 16 bytes (16 B)"},
		{"file_write", map[string]any{"path": "."}, mcperr.PermissionDeny, "", "refusing to write a root directory"},
		{"file_delete", map[string]any{"path": "full"}, mcperr.Conflict, "",
			`directory "full" is not empty; set recursive to delete it with its contents`},
		{"file_list", map[string]any{"path": "hello.txt"}, mcperr.Validation, "path", `"hello.txt" is not a directory`},
		{"file_info", map[string]any{"path": "ROOT/nope"}, mcperr.NotFound, "", `"ROOT/nope" does not exist`},
		{"file_search", map[string]any{"pattern": "a/["}, mcperr.Validation, "pattern", `pattern "a/[" has a malformed glob segment "["`},
		{"file_search", map[string]any{"pattern": "../*.go"}, mcperr.Validation, "pattern", `pattern "../*.go" must not contain ".."`},
	}
	for _, tc := range tests {
		args := map[string]any{}
		for k, v := range tc.args {
			if s, ok := v.(string); ok && k == "path" {
				v = strings.Replace(strings.Replace(s, "ROOT", e.root, 1), "ABS", e.outside, 1)
			}
			args[k] = v
		}
		if tc.tool == "file_write" {
			if _, ok := args["content"]; !ok {
				args["content"] = "x"
			}
		}
		want := strings.Replace(strings.Replace(tc.want, "ROOT", e.root, 1), "ABS", e.outside, 1)
		t.Run(tc.tool+"/"+want, func(t *testing.T) {
			b := mcptest.FailCode(t, e.c.Call(tc.tool, args), tc.code)
			if b.Message != want || b.Data.Field != tc.field {
				t.Errorf("message %q (field %q)\nwant    %q (field %q)", b.Message, b.Data.Field, want, tc.field)
			}
			for _, internal := range []string{"lstat", "openat", "fsroot", "read:", "write:", "list:", "delete:", "stat:", "search:", "errno", "no such file"} {
				if strings.Contains(b.Message, internal) {
					t.Errorf("message carries %q: %s", internal, b.Message)
				}
			}
		})
	}
}

// TestFileErrorBodies: error results are the structured shape, with the
// field and value of a bad argument and no OS error text.
func TestFileErrorBodies(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	res := e.c.Call("file_read", map[string]any{"path": "traps/fifo"})
	var raw map[string]any
	if err := json.Unmarshal([]byte(mcptest.Text(res)), &raw); err != nil {
		t.Fatal(err)
	}
	b := mcptest.FailCode(t, res, mcperr.Validation)
	if b.Data.Field != "path" || b.Data.Value != "traps/fifo" || !strings.Contains(b.Message, "fifo") {
		t.Errorf("body %+v", b)
	}
	b = mcptest.FailCode(t, e.c.Call("file_read", map[string]any{"path": "nope/deeper.txt"}), mcperr.NotFound)
	for _, osText := range []string{"lstat", "openat", "stat ", "errno", e.root + "/nope"} {
		if strings.Contains(b.Message, osText) {
			t.Errorf("message carries OS text %q: %s", osText, b.Message)
		}
	}
	b = mcptest.FailCode(t, e.c.Call("file_read", map[string]any{"path": "../outside/secret.txt"}), mcperr.PermissionDeny)
	if b.Data.Retryable || b.Data.Field != "" {
		t.Errorf("denied body %+v", b)
	}
}

// TestFileToolsIOError: an I/O failure (here: the filesystem was closed
// under the tools) is INTERNAL_ERROR with fsroot's host-path-free message.
func TestFileToolsIOError(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t)
	must(t, e.fsys.Close())
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"file_read", map[string]any{"path": "hello.txt"}},
		{"file_info", map[string]any{"path": "hello.txt"}},
		{"file_list", map[string]any{}},
	} {
		b := mcptest.FailCode(t, e.c.Call(call.tool, call.args), mcperr.Internal)
		if strings.Contains(b.Message, e.base) {
			t.Errorf("%s: message names a host path: %s", call.tool, b.Message)
		}
	}
}

// TestFileSearchDeadline: file_search walks under the call's context, so
// the server's time limit stops it with TIMEOUT_ERROR.
func TestFileSearchDeadline(t *testing.T) {
	t.Parallel()
	e := newFilesEnvOpts(t, fsroot.DefaultLimits(), kit.Options{DefaultTimeout: time.Nanosecond})
	b := mcptest.FailCode(t, e.c.Call("file_search", map[string]any{"pattern": "*.go"}), mcperr.Timeout)
	if !b.Data.Retryable {
		t.Errorf("a timeout should be retryable: %+v", b)
	}
}

// TestAll: the constructor main uses serves the file and system tools on
// the given roots, and a missing root is a start-up error naming it.
func TestAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set, err := tools.All(tools.Deps{Info: kit.Info{Name: "devtools"}, Metrics: metrics.New("devtools"), Roots: []string{dir},
		Database: database.Config{EmbeddedPath: filepath.Join(t.TempDir(), "devtools.db")}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if len(set.Templates) != 1 || set.Templates[0].URITemplate != tools.FileTemplate {
		t.Errorf("All() templates = %+v, want the file template", set.Templates)
	}
	var names []string
	for _, tool := range set.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"file_delete", "file_info", "file_list", "file_read", "file_search", "file_write", "system_health", "system_info",
		"shell_execute", "web_request", "web_fetch", "database_query", "database_tables", "database_schema"} {
		if !slices.Contains(names, want) {
			t.Errorf("All() lacks %s: %q", want, names)
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := tools.All(tools.Deps{Roots: []string{missing}}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("All() with a missing root: %v", err)
	}
	// Every other part's bad configuration is a start-up error naming it.
	notADir := filepath.Join(dir, "file")
	must(t, os.WriteFile(notADir, nil, 0o644))
	for _, tc := range []struct {
		deps tools.Deps
		want string
	}{
		{tools.Deps{Roots: []string{dir}, Shell: shell.Config{MaxOutput: -1}}, "devtools shell: "},
		{tools.Deps{Roots: []string{dir}, Web: webguard.Config{MaxTimeout: -time.Second}}, "devtools web: "},
		{tools.Deps{Roots: []string{dir}, Database: database.Config{EmbeddedPath: filepath.Join(notADir, "devtools.db")}}, "devtools database: "},
	} {
		if _, err := tools.All(tc.deps); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("All() = %v, want an error starting %q", err, tc.want)
		}
	}
}
