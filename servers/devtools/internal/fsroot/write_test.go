package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestWrite(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "old.txt", "old\n")
	fx.write(t, "script.sh", "#!/bin/sh\n")
	if err := os.Chmod(fx.in("script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name    string
		p       string
		data    string
		opt     WriteOptions
		file    string // where the content lands, relative to the root
		content string
		mode    fs.FileMode
	}{
		{"create", "new.txt", "hello", WriteOptions{}, "new.txt", "hello", 0o644},
		{"create empty", "empty.txt", "", WriteOptions{}, "empty.txt", "", 0o644},
		{"create dirs", "a/b/c.txt", "deep", WriteOptions{CreateDirs: true}, "a/b/c.txt", "deep", 0o644},
		{"existing dir no create", "a/b/d.txt", "d", WriteOptions{}, "a/b/d.txt", "d", 0o644},
		{"absolute", filepath.Join(fx.root, "abs.txt"), "abs", WriteOptions{}, "abs.txt", "abs", 0o644},
		{"overwrite", "old.txt", "new\n", WriteOptions{Overwrite: true}, "old.txt", "new\n", 0o644},
		{"append", "old.txt", "more\n", WriteOptions{Append: true}, "old.txt", "new\nmore\n", 0o644},
		{"append creates", "fresh.log", "1\n", WriteOptions{Append: true}, "fresh.log", "1\n", 0o644},
		{"keeps mode", "script.sh", "#!/bin/sh\necho\n", WriteOptions{Overwrite: true}, "script.sh", "#!/bin/sh\necho\n", 0o755},
		{"explicit mode", "secret.txt", "s", WriteOptions{Mode: 0o600}, "secret.txt", "s", 0o600},
		{"explicit mode on overwrite", "script.sh", "x", WriteOptions{Overwrite: true, Mode: 0o700}, "script.sh", "x", 0o700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := fx.fs.Write(tc.p, []byte(tc.data), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := fx.read(t, tc.file); got != tc.content {
				t.Errorf("content = %q, want %q", got, tc.content)
			}
			fi, err := os.Lstat(fx.in(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tc.mode {
				t.Errorf("mode = %v, want %v", fi.Mode(), tc.mode)
			}
			want := FileInfo{Path: tc.file, Root: fx.root, Name: filepath.Base(tc.file), Type: TypeFile,
				Size: int64(len(tc.content)), Mode: tc.mode.String(), ModTime: fi.ModTime()}
			if *info != want {
				t.Errorf("info = %+v\nwant   %+v", *info, want)
			}
		})
	}
	assertNoTemp(t, fx.root)
}

func TestWriteErrors(t *testing.T) {
	fx := newFixture(t, Limits{MaxWriteBytes: 8})
	fx.write(t, "old.txt", "old\n")
	fx.write(t, "dir/x", "x")
	fx.write(t, "file", "f")

	for _, tc := range []struct {
		name  string
		p     string
		data  string
		opt   WriteOptions
		code  mcperr.Code
		field string
		msg   string
	}{
		{"exists", "old.txt", "x", WriteOptions{}, mcperr.Conflict, "", "set overwrite"},
		{"over cap", "old.txt", "123456789", WriteOptions{Overwrite: true}, mcperr.Validation, "content", "content is 9 bytes (9 B), over the write cap of 8 bytes (8 B)"},
		{"directory", "dir", "x", WriteOptions{Overwrite: true}, mcperr.Validation, "path", "directory"},
		{"root dot", ".", "x", WriteOptions{Overwrite: true}, mcperr.PermissionDeny, "", "root"},
		{"root empty", "", "x", WriteOptions{Overwrite: true}, mcperr.PermissionDeny, "", "root"},
		{"root absolute", fx.root, "x", WriteOptions{Overwrite: true}, mcperr.PermissionDeny, "", "root"},
		{"root unclean", "dir/..", "x", WriteOptions{Overwrite: true}, mcperr.PermissionDeny, "", "root"},
		{"missing parent", "nope/x.txt", "x", WriteOptions{}, mcperr.NotFound, "", "create_dirs"},
		{"parent is file", "file/x.txt", "x", WriteOptions{}, mcperr.Validation, "path", "not a directory"},
		{"parent is file create", "file/y/x.txt", "x", WriteOptions{CreateDirs: true}, mcperr.Validation, "path", "not a directory"},
		{"parent below file", "file/y/x.txt", "x", WriteOptions{}, mcperr.Validation, "path", "not a directory"},
		{"append and overwrite", "old.txt", "x", WriteOptions{Append: true, Overwrite: true}, mcperr.Validation, "append", "exclude"},
		{"bad mode", "m.txt", "x", WriteOptions{Mode: fs.ModeSetuid | 0o755}, mcperr.Validation, "mode", "permission bits"},
		{"outside", "../x.txt", "x", WriteOptions{}, mcperr.PermissionDeny, "", "escapes"},
		{"nul", "x\x00.txt", "x", WriteOptions{}, mcperr.Validation, "path", "NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fx.fs.Write(tc.p, []byte(tc.data), tc.opt)
			fe := wantCode(t, err, tc.code)
			if fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) || fe.Path != tc.p || fe.Op != "write" {
				t.Errorf("error = %+v", fe)
			}
		})
	}
	if got := fx.read(t, "old.txt"); got != "old\n" {
		t.Errorf("old.txt = %q after failed writes", got)
	}
	assertNoTemp(t, fx.root)
}

// TestWriteAtomic fails a write at the last moment, just before the rename,
// and checks that the old content survives and no temp file remains.
func TestWriteAtomic(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "keep.txt", "original\n")
	boom := errors.New("simulated crash")
	beforeRename = func() error { return boom }
	defer func() { beforeRename = nil }()

	for _, opt := range []WriteOptions{{Overwrite: true}, {Append: true}} {
		_, err := fx.fs.Write("keep.txt", []byte("replacement\n"), opt)
		fe := wantCode(t, err, mcperr.Internal)
		if !errors.Is(err, boom) || strings.Contains(fe.Msg, "simulated") {
			t.Errorf("error = %v (msg %q)", err, fe.Msg)
		}
		if got := fx.read(t, "keep.txt"); got != "original\n" {
			t.Errorf("keep.txt = %q", got)
		}
	}
	_, err := fx.fs.Write("brand-new.txt", []byte("x"), WriteOptions{})
	wantCode(t, err, mcperr.Internal)
	if _, err := os.Lstat(fx.in("brand-new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a failed create left the target behind")
	}
	assertNoTemp(t, fx.root)
}

// TestWriteThroughSymlink pins the decision: an in-root symlink is kept and
// its target written; one leaving the root is refused.
func TestWriteThroughSymlink(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "shared/config.yaml", "v: 1\n")
	fx.symlink(t, "shared/config.yaml", "config.yaml")
	fx.symlink(t, "config.yaml", "chain.yaml")
	fx.symlink(t, "shared/not-yet.txt", "dangling")
	fx.write(t, "x/y/z/target.txt", "t\n")
	fx.symlink(t, "x/y", "ylink")
	// Resolved physically: ylink/z/up -> x/y/z/../target.txt = x/y/target.txt.
	fx.symlink(t, "../target.txt", "x/y/z/up")
	fx.write(t, "x/y/target.txt", "physical\n")
	fx.symlink(t, "../outside/secret.txt", "out")
	fx.symlink(t, ".", "self")

	for _, tc := range []struct {
		name, p, file, content string
		opt                    WriteOptions
	}{
		{"through link", "config.yaml", "shared/config.yaml", "v: 2\n", WriteOptions{Overwrite: true}},
		{"through chain", "chain.yaml", "shared/config.yaml", "v: 3\n", WriteOptions{Overwrite: true}},
		{"append through link", "config.yaml", "shared/config.yaml", "v: 3\nw: 1\n", WriteOptions{Append: true}},
		{"dangling creates target", "dangling", "shared/not-yet.txt", "new\n", WriteOptions{}},
		{"physical dotdot", "ylink/z/up", "x/y/target.txt", "written\n", WriteOptions{Overwrite: true}},
		{"through dir link", "self/shared/via-self.txt", "shared/via-self.txt", "s\n", WriteOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data string
			if tc.opt.Append {
				data = "w: 1\n"
			} else {
				data = tc.content
			}
			info, err := fx.fs.Write(tc.p, []byte(data), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if info.Path != tc.file || info.Type != TypeFile {
				t.Errorf("info = %+v, want path %q", info, tc.file)
			}
			if got := fx.read(t, tc.file); got != tc.content {
				t.Errorf("%s = %q, want %q", tc.file, got, tc.content)
			}
			// What the link shows is what was written: links survive.
			r, err := fx.fs.Read(tc.p, ReadOptions{})
			if err != nil || r.Content != tc.content {
				t.Errorf("Read(%q) = %v, %v", tc.p, r, err)
			}
		})
	}
	if fi, err := os.Lstat(fx.in("config.yaml")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("config.yaml is no longer a symlink")
	}
	if got := fx.read(t, "x/y/z/target.txt"); got != "t\n" {
		t.Errorf("lexical target was written: %q", got)
	}

	_, err := fx.fs.Write("out", []byte("pwned"), WriteOptions{Overwrite: true})
	wantCode(t, err, mcperr.PermissionDeny)
	_, err = fx.fs.Write("self", []byte("x"), WriteOptions{Overwrite: true})
	wantCode(t, err, mcperr.PermissionDeny)
	if b, _ := os.ReadFile(filepath.Join(fx.base, "outside/secret.txt")); string(b) != "host secret\n" {
		t.Errorf("outside file changed: %q", b)
	}
	assertNoTemp(t, fx.root)
}

func TestResolveLinks(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "a/f.txt", "x")
	fx.symlink(t, "a", "la")
	fx.symlink(t, "../../x", "a/up2")
	fx.symlink(t, "missing/../../../x", "a/updangling")
	r := fx.fs.roots[0].r
	for _, tc := range []struct {
		in, want string
		escape   bool
	}{
		{"a/f.txt", "a/f.txt", false},
		{"la/f.txt", "a/f.txt", false},
		{"la/./f.txt", "a/f.txt", false},
		{"a/../la/new/deeper.txt", "a/new/deeper.txt", false},
		{"la/new", "a/new", false},
		{"a/up2", "", true},
		{"a/updangling", "", true},
		{"a/../..", "", true},
	} {
		got, err := resolveLinks(r, filepath.FromSlash(tc.in))
		if tc.escape {
			if !isEscape(err) {
				t.Errorf("resolveLinks(%q) = %q, %v; want escape", tc.in, got, err)
			}
			continue
		}
		if err != nil || filepath.ToSlash(got) != tc.want {
			t.Errorf("resolveLinks(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestTempName(t *testing.T) {
	long := strings.Repeat("n", 250)
	name := tempName(long)
	if len(name) > 255 || !strings.HasPrefix(name, ".nnn") || !strings.Contains(name, ".tmp-") {
		t.Errorf("tempName = %q (%d bytes)", name, len(name))
	}
	if a, b := tempName("a"), tempName("a"); a == b {
		t.Error("temp names repeat")
	}
	fx := newFixture(t, Limits{})
	if _, err := fx.fs.Write(long, []byte("x"), WriteOptions{}); err != nil {
		t.Fatalf("write with a 250-byte name: %v", err)
	}
}

// TestHoldWritesBlocksWriteAndDelete: while a holder (the shell running
// git) holds writes, Write and Delete wait; reads do not.
func TestHoldWritesBlocksWriteAndDelete(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "f.txt", "old\n")
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"write", func() error {
			_, err := fx.fs.Write("f.txt", []byte("new\n"), WriteOptions{Overwrite: true})
			return err
		}},
		{"delete", func() error { _, err := fx.fs.Delete("f.txt", false); return err }},
	} {
		release := fx.fs.HoldWrites()
		release2 := fx.fs.HoldWrites() // holders share
		done := make(chan error, 1)
		go func() { done <- tc.op() }()
		select {
		case err := <-done:
			t.Fatalf("%s finished (err %v) while writes were held", tc.name, err)
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := fx.fs.Read("f.txt", ReadOptions{}); err != nil {
			t.Fatalf("read while writes are held: %v", err)
		}
		release()
		release2()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s after release: %v", tc.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still blocked after release", tc.name)
		}
	}
}
