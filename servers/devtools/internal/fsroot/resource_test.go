package fsroot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestReadFile(t *testing.T) {
	fx := newFixture(t, Limits{MaxReadBytes: 16})
	fx.write(t, "a.txt", "hello\n")
	fx.write(t, "big.txt", strings.Repeat("x", 17))
	fx.write(t, "sub/exact.bin", "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f")
	fx.symlink(t, "a.txt", "link")
	fx.symlink(t, "../outside/secret.txt", "escape")
	if err := syscall.Mkfifo(fx.in("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := fx.fs.ReadFile(fx.in("a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != "hello\n" || got.Path != "a.txt" || got.Root != fx.root || got.ModTime.IsZero() {
		t.Errorf("ReadFile = %+v", got)
	}
	if got, err := fx.fs.ReadFile("sub/exact.bin"); err != nil || len(got.Data) != 16 || got.Path != "sub/exact.bin" {
		t.Errorf("a file of exactly the cap: %+v, %v", got, err)
	}
	if got, err := fx.fs.ReadFile(fx.in("link")); err != nil || string(got.Data) != "hello\n" {
		t.Errorf("through a link inside the root: %+v, %v", got, err)
	}

	e := wantCode(t, first(fx.fs.ReadFile(fx.in("big.txt"))), mcperr.Validation)
	if !strings.Contains(e.Msg, "17 bytes") || !strings.Contains(e.Msg, "16 bytes") || !strings.Contains(e.Msg, "file_read") {
		t.Errorf("over the cap: %q should state the size, the cap and the way out", e.Msg)
	}
	wantCode(t, first(fx.fs.ReadFile(fx.in("missing"))), mcperr.NotFound)
	wantCode(t, first(fx.fs.ReadFile(fx.in("sub"))), mcperr.Validation)
	wantCode(t, first(fx.fs.ReadFile(fx.in("fifo"))), mcperr.Validation)
	wantCode(t, first(fx.fs.ReadFile(fx.in("escape"))), mcperr.PermissionDeny)
	wantCode(t, first(fx.fs.ReadFile(filepath.Join(fx.base, "outside/secret.txt"))), mcperr.PermissionDeny)
	wantCode(t, first(fx.fs.ReadFile(fx.root+"/../outside/secret.txt")), mcperr.PermissionDeny)
}

func first[T any](_ T, err error) error { return err }

func TestWatchPaths(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "a.txt", "a")
	fx.write(t, "deep/b.txt", "b")
	fx.symlink(t, "deep", "deep-link")
	fx.symlink(t, "deep/b.txt", "b-link")
	fx.symlink(t, "../outside", "out-dir")
	fx.symlink(t, "../outside/secret.txt", "out-file")
	fx.symlink(t, "dangling-target", "dangling")

	for _, tc := range []struct {
		path string
		want []string
	}{
		{"a.txt", []string{fx.in("a.txt")}},
		{fx.in("a.txt"), []string{fx.in("a.txt")}},
		// Not there yet: a client may wait for a file to appear.
		{"new.txt", []string{fx.in("new.txt")}},
		{"deep/b.txt", []string{fx.in("deep/b.txt")}},
		// A directory reached through a link is watched where it is.
		{"deep-link/b.txt", []string{fx.in("deep/b.txt")}},
		// A link to a file inside: the link's name and the file it leads to.
		{"b-link", []string{fx.in("b-link"), fx.in("deep/b.txt")}},
		// A link leading out is watched as a name only, never its target.
		{"out-file", []string{fx.in("out-file")}},
		// A dangling link inside: the file it would lead to, once created.
		{"dangling", []string{fx.in("dangling"), fx.in("dangling-target")}},
	} {
		got, err := fx.fs.WatchPaths(tc.path)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("WatchPaths(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		path string
		code mcperr.Code
	}{
		{"out-dir/secret.txt", mcperr.PermissionDeny},
		{filepath.Join(fx.base, "outside/secret.txt"), mcperr.PermissionDeny},
		{"../outside/secret.txt", mcperr.PermissionDeny},
		{"missing-dir/x", mcperr.NotFound},
		{"a.txt/x", mcperr.Validation},
		{"", mcperr.Validation},
		{fx.root, mcperr.Validation},
	} {
		_, err := fx.fs.WatchPaths(tc.path)
		wantCode(t, err, tc.code)
	}
}

// TestWatchPathsRootThroughLink: a root configured through a symbolic link
// is watched at its real location.
func TestWatchPathsRootThroughLink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	mustMkdir(t, real)
	if err := os.Symlink(real, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	fsys, err := Open([]string{filepath.Join(base, "alias")}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	got, err := fsys.WatchPaths("f.txt")
	if err != nil || !slices.Equal(got, []string{filepath.Join(real, "f.txt")}) {
		t.Errorf("WatchPaths = %q, %v", got, err)
	}
}

func TestNarrow(t *testing.T) {
	fx := newFixture(t, Limits{MaxReadBytes: 100})
	fx.write(t, "a/x.txt", "ax")
	fx.write(t, "a/inner/y.txt", "y")
	fx.write(t, "b/z.txt", "bz")
	fx.write(t, "file.txt", "f")
	fx.symlink(t, "a", "a-link")
	fx.symlink(t, "../outside", "out")

	n, refused := fx.fs.Narrow([]string{fx.in("b"), fx.in("a"), fx.in("a-link"), filepath.Join(fx.base, "outside"),
		fx.in("out"), fx.in("missing"), fx.in("file.txt"), "relative", filepath.Join(fx.base, "proj-evil")})
	if n == nil {
		t.Fatalf("Narrow refused everything: %+v", refused)
	}
	defer n.Close()
	// a-link names the same directory as a: merged.
	if !slices.Equal(n.Roots(), []string{fx.in("b"), fx.in("a")}) {
		t.Errorf("roots = %q", n.Roots())
	}
	var dirs []string
	for _, r := range refused {
		dirs = append(dirs, r.Dir)
		if r.Reason == "" {
			t.Errorf("refusal of %s has no reason", r.Dir)
		}
	}
	wantRefused := []string{filepath.Join(fx.base, "outside"), fx.in("out"), fx.in("missing"), fx.in("file.txt"), "relative",
		filepath.Join(fx.base, "proj-evil")}
	if !slices.Equal(dirs, wantRefused) {
		t.Errorf("refused = %q, want %q", dirs, wantRefused)
	}
	if n.writes != fx.fs.writes || n.Limits() != fx.fs.Limits() {
		t.Error("a narrowed FS must share its parent's write lock and limits")
	}
	// Relative paths now resolve against the first narrowed root.
	if r, err := n.Read("z.txt", ReadOptions{}); err != nil || r.Content != "bz" {
		t.Errorf("read z.txt: %+v, %v", r, err)
	}
	// The parent's other files are out of reach.
	wantCode(t, first(n.Read(fx.in("file.txt"), ReadOptions{})), mcperr.PermissionDeny)
	wantCode(t, first(n.Read("../file.txt", ReadOptions{})), mcperr.PermissionDeny)
	// The spelling through the link picks the same root.
	if r, err := n.Read(fx.in("a-link/x.txt"), ReadOptions{}); err != nil || r.Content != "ax" {
		t.Errorf("read through the link's spelling: %+v, %v", r, err)
	}
	// Narrowing to nothing usable gives no FS.
	if n2, refused := fx.fs.Narrow([]string{filepath.Join(fx.base, "outside")}); n2 != nil || len(refused) != 1 {
		t.Errorf("Narrow outside = %v, %+v", n2, refused)
	}
}

// TestNarrowKeepsConfiguredRoots: a configured root nested in a narrowed
// one can still not be deleted or overwritten through it.
func TestNarrowKeepsConfiguredRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outer, inner := filepath.Join(base, "outer"), filepath.Join(base, "outer/inner")
	mustMkdir(t, inner)
	fsys, err := Open([]string{inner, outer}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	n, refused := fsys.Narrow([]string{outer})
	if n == nil {
		t.Fatalf("refused: %+v", refused)
	}
	defer n.Close()
	wantCode(t, first(n.Delete(inner, true)), mcperr.PermissionDeny)
	wantCode(t, first(n.Write(inner, []byte("x"), WriteOptions{Overwrite: true})), mcperr.PermissionDeny)
	if _, err := n.Write(filepath.Join(inner, "ok.txt"), []byte("x"), WriteOptions{}); err != nil {
		t.Errorf("writing inside the nested root: %v", err)
	}
}

func TestReopen(t *testing.T) {
	fx := newFixture(t, Limits{})
	other := filepath.Join(fx.base, "outside")
	n, refused := fx.fs.Reopen([]string{other, filepath.Join(fx.base, "nope")})
	if n == nil {
		t.Fatalf("Reopen refused everything: %+v", refused)
	}
	defer n.Close()
	if !slices.Equal(n.Roots(), []string{other}) || len(refused) != 1 || refused[0].Dir != filepath.Join(fx.base, "nope") {
		t.Errorf("roots %q, refused %+v", n.Roots(), refused)
	}
	if r, err := n.Read("secret.txt", ReadOptions{}); err != nil || r.Content != "host secret\n" {
		t.Errorf("read in the reopened root: %+v, %v", r, err)
	}
	if n.writes != fx.fs.writes {
		t.Error("a reopened FS must share its parent's write lock")
	}
	if n2, refused := fx.fs.Reopen([]string{filepath.Join(fx.base, "nope")}); n2 != nil || len(refused) != 1 {
		t.Errorf("Reopen of a missing directory = %v, %+v", n2, refused)
	}
}
