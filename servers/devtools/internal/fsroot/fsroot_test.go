package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// fixture lays out, under one temp dir:
//
//	proj/            the root
//	proj-evil/       a sibling sharing the root's name as a prefix
//	outside/         anything else on the host
type fixture struct {
	fs   *FS
	base string
	root string
}

func newFixture(t *testing.T, lim Limits) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{base: base, root: filepath.Join(base, "proj")}
	for _, d := range []string{"proj", "proj-evil", "outside/dir"} {
		mustMkdir(t, filepath.Join(base, d))
	}
	mustWrite(t, filepath.Join(base, "proj-evil/secret.txt"), "evil secret\n")
	mustWrite(t, filepath.Join(base, "outside/secret.txt"), "host secret\n")
	mustWrite(t, filepath.Join(base, "outside/dir/inner.txt"), "inner secret\n")
	fx.fs, err = Open([]string{fx.root}, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.fs.Close() })
	return fx
}

// in returns a host path inside the root.
func (fx *fixture) in(rel string) string { return filepath.Join(fx.root, filepath.FromSlash(rel)) }

func (fx *fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(fx.in(rel)))
	mustWrite(t, fx.in(rel), content)
}

func (fx *fixture) symlink(t *testing.T, target, rel string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(fx.in(rel)))
	if err := os.Symlink(target, fx.in(rel)); err != nil {
		t.Fatal(err)
	}
}

func (fx *fixture) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(fx.in(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantCode fails unless err is an *Error that a client sees under code c,
// with its own message, and returns it.
func wantCode(t *testing.T, err error, c mcperr.Code) *Error {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want *Error with code %s", err, err, c)
	}
	me := mcperr.Wrap(err)
	if me.Code != c || fe.Code != c {
		t.Fatalf("code = %s (client sees %s), want %s (error: %v)", fe.Code, me.Code, c, err)
	}
	if me.Message != fe.Msg || me.Message == "" {
		t.Fatalf("client message %q, want the error's own %q", me.Message, fe.Msg)
	}
	if !errors.Is(me, err) {
		t.Fatalf("the client form lost its cause %v", err)
	}
	return fe
}

func TestOpen(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	mustMkdir(t, a)
	mustMkdir(t, b)
	mustWrite(t, filepath.Join(base, "file"), "x")
	if err := os.Symlink(a, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			dirs []string
			lim  Limits
			code mcperr.Code
		}{
			{"no dirs", nil, Limits{}, mcperr.Validation},
			{"empty dir", []string{""}, Limits{}, mcperr.Validation},
			{"nul", []string{"a\x00b"}, Limits{}, mcperr.Validation},
			{"missing", []string{filepath.Join(base, "missing")}, Limits{}, mcperr.NotFound},
			{"file", []string{filepath.Join(base, "file")}, Limits{}, mcperr.Internal},
			{"second missing", []string{a, filepath.Join(base, "missing")}, Limits{}, mcperr.NotFound},
			{"negative limit", []string{a}, Limits{MaxDepth: -1}, mcperr.Validation},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f, err := Open(tc.dirs, tc.lim)
				if f != nil {
					t.Fatal("got an FS with an error")
				}
				wantCode(t, err, tc.code)
			})
		}
	})

	t.Run("dedupe and defaults", func(t *testing.T) {
		f, err := Open([]string{a + "/", b, a, filepath.Join(b, "..", "a"), filepath.Join(base, "alias")}, Limits{MaxDepth: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.Roots(), []string{a, b}; !slices.Equal(got, want) {
			t.Errorf("Roots() = %v, want %v", got, want)
		}
		lim := f.Limits()
		if lim.MaxDepth != 3 || lim.MaxReadBytes != DefaultLimits().MaxReadBytes || lim.MaxSearchResults != 1000 {
			t.Errorf("limits = %+v", lim)
		}
		// The alias spelling still addresses root a.
		mustWrite(t, filepath.Join(a, "x.txt"), "x")
		info, err := f.Stat(filepath.Join(base, "alias", "x.txt"))
		if err != nil || info.Root != a || info.Path != "x.txt" {
			t.Errorf("Stat via alias = %+v, %v", info, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
		_, err = f.Stat("x.txt")
		if fe := wantCode(t, err, mcperr.Internal); !strings.Contains(fe.Msg, "closed") {
			t.Errorf("msg = %q", fe.Msg)
		}
	})

	t.Run("relative dir", func(t *testing.T) {
		t.Chdir(base)
		f, err := Open([]string{"a"}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if got := f.Roots(); !slices.Equal(got, []string{a}) {
			t.Errorf("Roots() = %v", got)
		}
	})
}

func TestDefaultLimits(t *testing.T) {
	want := Limits{MaxReadBytes: 10 << 20, MaxWriteBytes: 10 << 20, MaxListEntries: 10000, MaxDepth: 10, MaxSearchResults: 1000}
	if got := DefaultLimits(); got != want {
		t.Errorf("DefaultLimits() = %+v", got)
	}
}

// TestEscapes drives every operation with every way out of the root we know
// of; each must be refused and must leave the outside untouched.
func TestEscapes(t *testing.T) {
	fx := newFixture(t, Limits{})
	outside := filepath.Join(fx.base, "outside")
	fx.write(t, "sub/ok.txt", "ok\n")
	fx.symlink(t, "../outside/secret.txt", "out-file")
	fx.symlink(t, "../outside", "out-dir")
	fx.symlink(t, filepath.Join(outside, "secret.txt"), "out-abs")
	fx.symlink(t, fx.in("sub/ok.txt"), "in-abs") // absolute, though inside: os.Root refuses these
	fx.symlink(t, "../../outside/dir", "sub/out-deep")
	fx.symlink(t, "out-file", "chain1")
	fx.symlink(t, "chain1", "chain2")
	fx.symlink(t, "/dev/null", "devnull")
	fx.symlink(t, strings.Repeat("../", 40)+"dev/null", "devnull-rel")

	paths := []string{
		"..",
		"../proj-evil/secret.txt",
		"sub/../../outside/secret.txt",
		"./../outside",
		filepath.Join(outside, "secret.txt"),
		filepath.Join(fx.base, "proj-evil"),
		filepath.Join(fx.base, "proj-evil", "secret.txt"),
		fx.root + "-evil/secret.txt",
		fx.root + "/../outside/secret.txt",
		"/",
		"/etc/passwd",
		"out-file",
		"out-dir/secret.txt",
		"out-dir/dir",
		"out-abs",
		"in-abs",
		"sub/out-deep/inner.txt",
		"chain2",
		"devnull",
		"devnull-rel",
	}
	ops := map[string]func(p string) error{
		"read": func(p string) error { _, err := f(fx).Read(p, ReadOptions{}); return err },
		"read-tail": func(p string) error {
			_, err := f(fx).Read(p, ReadOptions{Tail: 1})
			return err
		},
		"write": func(p string) error {
			_, err := f(fx).Write(p, []byte("pwned"), WriteOptions{CreateDirs: true, Overwrite: true})
			return err
		},
		"append": func(p string) error {
			_, err := f(fx).Write(p, []byte("pwned"), WriteOptions{CreateDirs: true, Append: true})
			return err
		},
		"write-child": func(p string) error {
			_, err := f(fx).Write(p+"/new.txt", []byte("pwned"), WriteOptions{CreateDirs: true})
			return err
		},
		"list": func(p string) error {
			_, err := f(fx).List(p, ListOptions{Recursive: true, IncludeHidden: true})
			return err
		},
		"search": func(p string) error { _, err := f(fx).Search(p, "**", SearchOptions{IncludeHidden: true}); return err },
		"delete": func(p string) error {
			_, err := f(fx).Delete(p, true)
			return err
		},
		"delete-child": func(p string) error { _, err := f(fx).Delete(p+"/secret.txt", false); return err },
	}
	for name, op := range ops {
		for _, p := range paths {
			// Deleting a symlink removes only the link, and stat describes
			// it without following: both are fine and tested elsewhere.
			isLink := !strings.Contains(p, "/") && !strings.HasPrefix(p, "..")
			if name == "delete" && isLink {
				continue
			}
			t.Run(name+"/"+p, func(t *testing.T) {
				fe := wantCode(t, op(p), mcperr.PermissionDeny)
				if fe.Path != p && !strings.HasPrefix(name, "write-child") && !strings.HasPrefix(name, "delete-child") {
					t.Errorf("error path = %q, want %q", fe.Path, p)
				}
			})
		}
	}
	// Nothing outside changed or appeared.
	for p, want := range map[string]string{
		filepath.Join(outside, "secret.txt"):           "host secret\n",
		filepath.Join(outside, "dir/inner.txt"):        "inner secret\n",
		filepath.Join(fx.base, "proj-evil/secret.txt"): "evil secret\n",
	} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", p, b, err)
		}
	}
	for _, p := range []string{filepath.Join(outside, "new.txt"), filepath.Join(outside, "dir/new.txt"), filepath.Join(fx.base, "new.txt")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

func f(fx *fixture) *FS { return fx.fs }

func TestEscapeCodes(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.symlink(t, "../outside/secret.txt", "out-file")
	fx.symlink(t, "../outside", "out-dir")
	fx.symlink(t, "/dev/null", "devnull")
	for _, tc := range []struct {
		name string
		p    string
	}{
		{"dotdot", ".."},
		{"sibling", "../proj-evil/secret.txt"},
		{"absolute outside", filepath.Join(fx.base, "outside/secret.txt")},
		{"prefix sibling", fx.root + "-evil"},
		{"prefix sibling file", fx.root + "-evil/secret.txt"},
		{"file symlink", "out-file"},
		{"dir symlink", "out-dir/secret.txt"},
		{"dev null symlink", "devnull"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fx.fs.Read(tc.p, ReadOptions{})
			fe := wantCode(t, err, mcperr.PermissionDeny)
			if fe.Path != tc.p {
				t.Errorf("Path = %q, want %q", fe.Path, tc.p)
			}
			if !errors.Is(err, fs.ErrPermission) {
				t.Error("errors.Is(err, fs.ErrPermission) = false")
			}
		})
	}
}

func TestSymlinksInside(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "sub/deep/c.txt", "c\n")
	fx.symlink(t, "sub/deep/c.txt", "l1")
	fx.symlink(t, "l1", "l2")
	fx.symlink(t, "sub", "dirlink")
	fx.symlink(t, "loop2", "loop1")
	fx.symlink(t, "loop1", "loop2")

	for _, p := range []string{"l1", "l2", "dirlink/deep/c.txt"} {
		r, err := fx.fs.Read(p, ReadOptions{})
		if err != nil || r.Content != "c\n" {
			t.Errorf("Read(%q) = %+v, %v", p, r, err)
		}
	}
	_, err := fx.fs.Read("loop1", ReadOptions{})
	wantCode(t, err, mcperr.Validation)
	_, err = fx.fs.Write("loop1", []byte("x"), WriteOptions{Overwrite: true})
	wantCode(t, err, mcperr.Validation)

	// List of a symlinked directory follows the link given as the path,
	// but recursion never follows links found inside.
	res, err := fx.fs.List("dirlink", ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryPaths(res.Entries); !slices.Equal(got, []string{"deep", "deep/c.txt"}) {
		t.Errorf("List(dirlink) = %v", got)
	}
	res, err = fx.fs.List("", ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Entries {
		if strings.HasPrefix(e.Path, "dirlink/") {
			t.Errorf("recursion followed a symlink: %s", e.Path)
		}
	}
}

func entryPaths(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func TestMultipleRoots(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	nested := filepath.Join(a, "nested")
	for _, d := range []string{a, b, nested} {
		mustMkdir(t, d)
	}
	mustWrite(t, filepath.Join(a, "f.txt"), "in a\n")
	mustWrite(t, filepath.Join(b, "f.txt"), "in b\n")
	mustWrite(t, filepath.Join(nested, "f.txt"), "in nested\n")
	fsys, err := Open([]string{a, b, nested}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()

	for _, tc := range []struct{ p, root, rel, content string }{
		{"f.txt", a, "f.txt", "in a\n"},
		{filepath.Join(a, "f.txt"), a, "f.txt", "in a\n"},
		{filepath.Join(b, "f.txt"), b, "f.txt", "in b\n"},
		{filepath.Join(b, "x", "..", "f.txt"), b, "f.txt", "in b\n"},
		// The most specific root wins.
		{filepath.Join(nested, "f.txt"), nested, "f.txt", "in nested\n"},
		{"nested/f.txt", a, "nested/f.txt", "in nested\n"},
	} {
		r, err := fsys.Read(tc.p, ReadOptions{})
		if err != nil {
			t.Errorf("Read(%q): %v", tc.p, err)
			continue
		}
		if r.Root != tc.root || r.Path != tc.rel || r.Content != tc.content {
			t.Errorf("Read(%q) = root %q path %q content %q", tc.p, r.Root, r.Path, r.Content)
		}
	}
	if _, err := fsys.Read(filepath.Join(base, "c", "f.txt"), ReadOptions{}); err == nil {
		t.Error("read outside all roots succeeded")
	}
	// A root reachable as a subdirectory of another must not be deleted or
	// replaced through it, nor through an ancestor.
	for _, p := range []string{"nested", filepath.Join(a, "nested"), nested} {
		_, err := fsys.Delete(p, true)
		wantCode(t, err, mcperr.PermissionDeny)
	}
	mustMkdir(t, filepath.Join(b, "inner"))
	fsys2, err := Open([]string{base, b}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys2.Close()
	_, err = fsys2.Delete("b", true)
	wantCode(t, err, mcperr.PermissionDeny)
	_, err = fsys2.Delete(".", true)
	wantCode(t, err, mcperr.PermissionDeny)
	if _, err := os.Stat(filepath.Join(b, "inner")); err != nil {
		t.Fatal("root b was damaged")
	}
}

// TestNoHostPathLeak checks that errors for relative paths never carry the
// host location of the root, nor OS error text.
func TestNoHostPathLeak(t *testing.T) {
	fx := newFixture(t, Limits{MaxReadBytes: 4, MaxWriteBytes: 4})
	fx.write(t, "big.txt", "0123456789")
	fx.write(t, "file", "x")
	mustMkdir(t, fx.in("dir/full"))
	fx.write(t, "dir/full/x", "x")
	fx.symlink(t, "../outside/secret.txt", "out")
	errs := []error{}
	add := func(_ any, err error) { errs = append(errs, err) }
	add(fx.fs.Read("missing.txt", ReadOptions{}))
	add(fx.fs.Read("big.txt", ReadOptions{Bytes: true, ByteOffset: 1 << 40}))
	add(fx.fs.Read("out", ReadOptions{}))
	add(fx.fs.Read("dir", ReadOptions{}))
	add(fx.fs.Read("file/x", ReadOptions{}))
	add(fx.fs.Write("big.txt", []byte("0123456789"), WriteOptions{}))
	add(fx.fs.Write("file", []byte("x"), WriteOptions{}))
	add(fx.fs.Write("a/b/c", []byte("x"), WriteOptions{}))
	add(fx.fs.Write("file/c", []byte("x"), WriteOptions{CreateDirs: true}))
	add(fx.fs.List("missing", ListOptions{}))
	add(fx.fs.List("file", ListOptions{}))
	add(fx.fs.Delete("dir", false))
	add(fx.fs.Delete("missing", false))
	add(fx.fs.Stat("nope"))
	add(fx.fs.Search("nope", "*", SearchOptions{}))
	for _, err := range errs {
		if err == nil {
			t.Fatal("expected an error")
		}
		msg := err.Error()
		if strings.Contains(msg, fx.base) || strings.Contains(msg, "lstat") || strings.Contains(msg, "openat") {
			t.Errorf("error leaks host detail: %s", msg)
		}
	}
}

// TestConcurrent exercises the FS from several goroutines under -race.
func TestConcurrent(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "shared.txt", "start\n")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				if i%2 == 0 {
					if _, err := fx.fs.Write("shared.txt", []byte("content\n"), WriteOptions{Overwrite: true}); err != nil {
						t.Error(err)
					}
				} else if r, err := fx.fs.Read("shared.txt", ReadOptions{}); err != nil {
					t.Error(err)
				} else if r.Content != "start\n" && r.Content != "content\n" {
					t.Errorf("torn read %q", r.Content)
				}
			}
		})
	}
	wg.Wait()
	assertNoTemp(t, fx.root)
}

// assertNoTemp fails if a temp file from Write is left anywhere under dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}

func TestErrorFormatting(t *testing.T) {
	e := &Error{Code: mcperr.NotFound, Op: "read", Path: "a b.txt", Msg: `"a b.txt" does not exist`, Err: fs.ErrNotExist}
	if got, want := e.Error(), `"a b.txt" does not exist`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, fs.ErrNotExist) || errors.Is(e, fs.ErrExist) {
		t.Error("errors.Is mismatch")
	}
	for _, target := range []error{fs.ErrExist, fs.ErrPermission, fs.ErrInvalid, fs.ErrNotExist} {
		if (&Error{Code: mcperr.Internal}).Is(target) {
			t.Errorf("an internal error matches %v", target)
		}
	}
	for code, target := range map[mcperr.Code]error{mcperr.Conflict: fs.ErrExist, mcperr.Validation: fs.ErrInvalid,
		mcperr.PermissionDeny: fs.ErrPermission, mcperr.NotFound: fs.ErrNotExist} {
		if !(&Error{Code: code}).Is(target) {
			t.Errorf("%s does not match %v", code, target)
		}
	}
}

// TestQuote: a path is repeated in messages as given, quoted, and cut when
// it is long (on a character boundary), so a message stays bounded.
func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "the root directory"},
		{"a b.txt", `"a b.txt"`},
		{"a\x00b", `"a\x00b"`},
		{strings.Repeat("a", maxQuoted), `"` + strings.Repeat("a", maxQuoted) + `"`},
		{strings.Repeat("a", maxQuoted+1), `"` + strings.Repeat("a", maxQuoted) + `"…`},
		{"a" + strings.Repeat("é", maxQuoted), `"a` + strings.Repeat("é", (maxQuoted-1)/2) + `"…`},
	} {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%.20q…) = %.40q…, want %.40q…", tc.in, got, tc.want)
		}
	}
	fx := newFixture(t, Limits{})
	long := strings.Repeat("d/", 300) + "f.txt"
	_, err := fx.fs.Read(long, ReadOptions{})
	if fe := wantCode(t, err, mcperr.NotFound); len(fe.Msg) > maxQuoted+64 || fe.Path != long {
		t.Errorf("message for a long path: %q (path %d bytes)", fe.Msg, len(fe.Path))
	}
}

// TestClientForm: what a client sees of an *Error — code, message, field,
// and the path as value only for a bad path.
func TestClientForm(t *testing.T) {
	cause := errors.New("lstat /host/proj/x: no such file or directory")
	for _, tc := range []struct {
		name  string
		err   *Error
		code  mcperr.Code
		field string
		value any
	}{
		{"not found", &Error{Code: mcperr.NotFound, Op: "read", Path: "x", Msg: `"x" does not exist`, Err: cause}, mcperr.NotFound, "", nil},
		{"bad path", &Error{Code: mcperr.Validation, Op: "read", Path: "dir", Field: "path", Msg: `"dir" is a directory, not a file`}, mcperr.Validation, "path", "dir"},
		{"bad path, field unset", &Error{Code: mcperr.Validation, Path: "dir", Msg: "m"}, mcperr.Validation, "path", "dir"},
		{"bad other field", &Error{Code: mcperr.Validation, Path: "f.txt", Field: "offset", Msg: "offset 9 is past the end"}, mcperr.Validation, "offset", nil},
		{"denied", &Error{Code: mcperr.PermissionDeny, Path: "../x", Msg: msgEscapes}, mcperr.PermissionDeny, "", nil},
		{"no code", &Error{Msg: "m", Err: cause}, mcperr.Internal, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			me := mcperr.Wrap(fmt.Errorf("tool: %w", tc.err))
			if me.Code != tc.code || me.Message != tc.err.Msg || me.Field != tc.field || me.Value != tc.value {
				t.Errorf("client form = %+v", me)
			}
			if !errors.Is(me, tc.err) {
				t.Error("cause lost")
			}
			if strings.Contains(string(me.JSON()), "/host") {
				t.Errorf("client form leaks the cause: %s", me.JSON())
			}
		})
	}
}

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 10 << 20: "10 MiB",
		5 << 30: "5 GiB", 3 << 40: "3 TiB", 2 << 50: "2 PiB", 1<<62 + 1<<61: "6144 PiB",
	} {
		if got := human(n); got != want {
			t.Errorf("human(%d) = %q, want %q", n, got, want)
		}
	}
	if got, want := sizeText(10<<20), "10485760 bytes (10 MiB)"; got != want {
		t.Errorf("sizeText = %q", got)
	}
}
