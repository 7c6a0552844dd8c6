package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// TestGitRepositoryConfigCannotRunPrograms plants every configuration key
// that makes a read-only git command run a program, proves that plain git
// does run them, then runs each allowed subcommand through the shell and
// expects no program to have run.
func TestGitRepositoryConfigCannotRunPrograms(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.WriteFile(filepath.Join(f.root, ".gitattributes"), []byte("*.txt filter=evil diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitInit(t, f.root)
	gitRun(t, f.root, "tag", "v1")
	pwned := filepath.Join(f.base, "pwned")
	touch := func(what string) string { return "touch " + pwned + "-" + what + "; cat" }
	for _, kv := range [][2]string{
		{"core.fsmonitor", touch("fsmonitor")},
		{"core.pager", touch("pager")},
		{"core.hooksPath", filepath.Join(f.base, "hooks")},
		{"filter.evil.clean", touch("clean")},
		{"filter.evil.smudge", touch("smudge")},
		{"filter.evil.process", touch("process")},
		{"filter.evil.required", "false"},
		{"diff.evil.textconv", touch("textconv")},
		{"diff.evil.command", touch("diffcmd")},
		{"diff.external", touch("external")},
		{"pager.log", touch("pagerlog")},
		{"log.showSignature", "true"},
		{"gpg.program", filepath.Join(f.base, "gpg")},
		{"gpg.format", "openpgp"},
		{"status.submoduleSummary", "true"},
	} {
		gitRun(t, f.root, "config", kv[0], kv[1])
	}
	for _, hook := range []string{"hooks/post-index-change", "gpg"} {
		p := filepath.Join(f.base, hook)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+pwned+"-"+filepath.Base(hook)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Dirty the work tree with a racy stat so git must re-read (and filter) files.
	if err := os.WriteFile(filepath.Join(f.root, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pwnedFiles := func() []string {
		m, _ := filepath.Glob(pwned + "-*")
		return m
	}

	// Control: unhardened git runs the planted programs.
	cmd := exec.Command("git", "diff")
	cmd.Dir = f.root
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	_ = cmd.Run()
	if len(pwnedFiles()) == 0 {
		t.Fatal("control: plain git diff ran none of the planted programs; the test would prove nothing")
	}
	for _, p := range pwnedFiles() {
		_ = os.Remove(p)
	}

	for _, c := range []string{
		"git status", "git status --porcelain=v2 -uall", "git diff", "git diff --stat", "git diff HEAD", "git log -p",
		"git log '--format=%G?%GS'", "git show", "git show HEAD:a.txt", "git blame a.txt", "git grep -n bee",
		"git grep hello HEAD", "git ls-files -m", "git describe --dirty --always", "git shortlog HEAD", "git branch -v",
		"git tag -n", "git rev-parse HEAD",
	} {
		res := f.run(t, Request{Command: c})
		if res.ExitCode != 0 {
			t.Errorf("%s: exit %d: %s", c, res.ExitCode, res.Stderr)
		}
		if got := pwnedFiles(); len(got) > 0 {
			t.Fatalf("%s ran a planted program: %v", c, got)
		}
	}
	res := f.run(t, Request{Command: "git diff"})
	if !strings.Contains(string(res.Stdout), "+changed") {
		t.Fatalf("git diff output: %q", res.Stdout)
	}
}

func TestGitRepositoryMustBeInsideRoots(t *testing.T) {
	// The root is a sub-directory of a repository: git must not climb out.
	f := newFixture(t, nil)
	gitInit(t, f.base)
	g, err := New(Config{Roots: []string{filepath.Join(f.base, "proj", "sub")}})
	if err != nil {
		t.Fatal(err)
	}
	h := &fixture{base: f.base, root: filepath.Join(f.base, "proj", "sub"), sh: g}
	e := h.refuse(t, Request{Command: "git log"}, mcperr.Validation, "not inside a git work tree whose top level lies inside the allowed roots")
	// git's own words may name directories outside the roots: logs only.
	if strings.Contains(e.Msg, "fatal") || e.Unwrap() == nil || !strings.Contains(e.Unwrap().Error(), "git rev-parse: ") {
		t.Errorf("message %q, cause %v", e.Msg, e.Unwrap())
	}
	h.refuse(t, Request{Command: "git status"}, mcperr.Validation, "not inside a git work tree")
	// version needs no repository.
	if res := h.run(t, Request{Command: "git version"}); res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "git version") {
		t.Fatalf("git version: %+v", res)
	}

	// A .git file pointing at a repository outside.
	f = newFixture(t, nil)
	other := filepath.Join(f.base, "outside")
	gitInit(t, other)
	if err := os.WriteFile(filepath.Join(f.root, ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.refuse(t, Request{Command: "git log"}, mcperr.PermissionDeny, "git: the repository's git directory is outside the allowed roots")

	// core.worktree pointing outside.
	f = newFixture(t, nil)
	gitInit(t, f.root)
	gitRun(t, f.root, "config", "core.worktree", filepath.Join(f.base, "outside"))
	f.refuse(t, Request{Command: "git status"}, mcperr.PermissionDeny, "git: the repository's work tree is outside the allowed roots")

	// Object alternates outside (directly, and relative).
	f = newFixture(t, nil)
	gitInit(t, f.root)
	other = filepath.Join(f.base, "outside")
	gitInit(t, other)
	alt := filepath.Join(f.root, ".git", "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte("# comment\n\n"+filepath.Join(other, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.refuse(t, Request{Command: "git log"}, mcperr.PermissionDeny, "git: an object alternate of the repository is outside the allowed roots")
	if err := os.WriteFile(alt, []byte("../../../outside/.git/objects\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.refuse(t, Request{Command: "git log"}, mcperr.PermissionDeny, "object alternate")
	// An alternate inside the roots is fine, and nested ones are followed.
	inner := filepath.Join(f.root, "sub")
	gitInit(t, inner)
	if err := os.WriteFile(alt, []byte(filepath.Join(inner, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := f.run(t, Request{Command: "git log --oneline"}); res.ExitCode != 0 {
		t.Fatalf("inside alternate: %s", res.Stderr)
	}
	innerAlt := filepath.Join(inner, ".git", "objects", "info", "alternates")
	if err := os.WriteFile(innerAlt, []byte(filepath.Join(other, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.refuse(t, Request{Command: "git log"}, mcperr.PermissionDeny, "object alternate")
	// A loop of alternates inside the roots ends.
	if err := os.WriteFile(innerAlt, []byte(filepath.Join(f.root, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.refuse(t, Request{Command: "git log"}, mcperr.Validation, "nest too deeply")
}

func TestGitOverrides(t *testing.T) {
	list := "core.bare\nfalse\x00filter.lfs.clean\ngit-lfs clean -- %f\x00filter.lfs.process\ngit-lfs filter-process\x00" +
		"filter.lfs.required\ntrue\x00diff.Evil.textconv\nx\x00diff.a.b.command\ny\x00diff.external\nz\x00" +
		"FILTER.x.CLEAN\nq\x00filter.lfs.clean\nagain\x00user.name\nT\x00nodot\x00"
	got, err := gitOverrides([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-c", "filter.lfs.clean=", "-c", "filter.lfs.process=", "-c", "diff.Evil.textconv=",
		"-c", "diff.a.b.command=", "-c", "filter.x.clean="}
	if !slices.Equal(got, want) {
		t.Fatalf("overrides %q, want %q", got, want)
	}
	if _, err := gitOverrides([]byte("filter.a=b.clean\nx\x00")); err == nil {
		t.Fatal("a driver name with '=' was accepted")
	}
}

// TestGitHoldsWritesUntilExit: a git command keeps the file tools from
// changing the roots from the configuration check to the program's exit,
// so a file_write racing the command cannot plant a filter or diff program
// in the repository's configuration between the check and the run. Other
// programs do not hold writes.
func TestGitHoldsWritesUntilExit(t *testing.T) {
	var held, released int
	hold := func(c *Config) {
		c.HoldWrites = func() func() {
			held++
			return func() { released++ }
		}
	}
	// Not a repository yet: the check fails, and what was held is released.
	f := newFixture(t, hold)
	f.refuse(t, Request{Command: "git status"}, mcperr.Validation, "not inside a git work tree")
	if held != 1 || released != 1 {
		t.Fatalf("refused git status: writes held %d times, released %d times; want 1 and 1", held, released)
	}
	gitInit(t, f.root)
	res := f.run(t, Request{Command: "git status --short"})
	if res.ExitCode != 0 {
		t.Fatalf("git status: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	if held != 2 || released != 2 {
		t.Fatalf("git status: writes held %d times, released %d times; want 2 and 2", held, released)
	}
	f.run(t, Request{Command: "ls"})
	f.run(t, Request{Command: "git --version"})
	if held != 2 || released != 2 {
		t.Fatalf("ls and git --version must not hold writes: held %d, released %d", held, released)
	}
}
