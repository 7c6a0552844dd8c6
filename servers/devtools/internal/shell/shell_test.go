package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// fixture is a root directory with a known tree, host directories beside it
// that commands must never reach, and a Shell on the root.
//
//	base/
//	  proj/                 the root (a git repository with one commit)
//	    a.txt sub/b.txt "dir with space/c.txt"
//	    out-link -> ../outside      (directory link leading out)
//	    out-file -> ../outside/secret.txt
//	    in-link  -> sub             (link staying inside)
//	  outside/secret.txt    what escapes aim at
//	  proj-evil/loot.txt    shares the root's name as a prefix
type fixture struct {
	base, root string
	sh         *Shell
}

var fixtureTree = map[string]string{
	"proj/a.txt":                "hello\nworld\nhello\nzeta\n",
	"proj/sub/b.txt":            "bee\n",
	"proj/dir with space/c.txt": "sea\n",
	"outside/secret.txt":        "top secret\n",
	"outside/dir/inner.txt":     "inner\n",
	"proj-evil/loot.txt":        "loot\n",
}

func newFixture(t *testing.T, mutate func(*Config)) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range fixtureTree {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(base, "proj")
	for link, target := range map[string]string{"out-link": "../outside", "out-file": "../outside/secret.txt", "in-link": "sub"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Roots: []string{root}}
	if mutate != nil {
		mutate(&cfg)
	}
	sh, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{base: base, root: root, sh: sh}
}

// gitInit makes dir a repository with everything in it committed.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	gitRun(t, dir, "init", "-q", "-b", "main", ".")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "first commit")
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (f *fixture) run(t *testing.T, req Request) *Result {
	t.Helper()
	res, err := f.sh.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run(%+v): %v", req, err)
	}
	return res
}

// refuse runs req, expects a refusal a client sees under code with a
// message containing want, and returns it.
func (f *fixture) refuse(t *testing.T, req Request, code mcperr.Code, want string) *Error {
	t.Helper()
	res, err := f.sh.Run(context.Background(), req)
	if err == nil {
		t.Fatalf("Run(%+v) succeeded (exit %d, stdout %q); want a refusal containing %q", req, res.ExitCode, res.Stdout, want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Run(%+v): error %v is not a *shell.Error", req, err)
	}
	me := mcperr.Wrap(err)
	if e.Code != code || me.Code != code || me.Message != e.Msg || !strings.Contains(e.Msg, want) {
		t.Fatalf("Run(%+v): got %s %q (client sees %s %q), want %s containing %q", req, e.Code, e.Msg, me.Code, me.Message, code, want)
	}
	if code == mcperr.Validation && me.Field != e.Field {
		t.Fatalf("Run(%+v): client field %q, want %q", req, me.Field, e.Field)
	}
	return e
}

// TestSameOutputAsDirect runs allowed commands through the shell and
// directly, and expects identical stdout, stderr and exit status.
func TestSameOutputAsDirect(t *testing.T) {
	f := newFixture(t, nil)
	gitInit(t, f.root)
	if err := os.WriteFile(filepath.Join(f.root, "a.txt"), []byte("hello\nchanged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := [][]string{
		{"ls", "-la"},
		{"ls", "-R", "sub", "dir with space"},
		{"pwd"},
		{"echo", "hello", "big world", "-n"},
		{"cat", "-n", "a.txt", "sub/b.txt"},
		{"cat", "missing.txt"},
		{"grep", "-n", "hello", "a.txt"},
		{"grep", "-c", "zzz", "a.txt"},
		{"grep", "-rn", "--include=*.txt", "e", "."},
		{"find", ".", "-name", "*.txt", "-type", "f", "-not", "-path", "./.git/*"},
		{"wc", "-l", "a.txt", "sub/b.txt"},
		{"sort", "-r", "a.txt"},
		{"uniq", "-c", "a.txt"},
		{"head", "-n", "1", "a.txt"},
		{"tail", "-1", "a.txt"},
		{"git", "status", "--short"},
		{"git", "log", "--oneline"},
		{"git", "diff"},
		{"git", "show", "--stat", "HEAD"},
		{"git", "ls-files"},
		{"git", "blame", "sub/b.txt"},
		{"git", "grep", "-n", "bee"},
		{"git", "rev-parse", "--abbrev-ref", "HEAD"},
		{"git", "branch", "--list"},
		{"git", "describe", "--always"},
		{"git", "shortlog", "-sn", "HEAD"},
		{"git", "version"},
		{"git", "--version"},
	}
	for _, argv := range cmds {
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			res := f.run(t, Request{Argv: argv})
			bin, err := exec.LookPath(argv[0])
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, argv[1:]...)
			cmd.Args[0] = argv[0]
			cmd.Dir = f.root
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8",
				"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			if got, want := string(res.Stdout), stdout.String(); got != want {
				t.Errorf("stdout differs\n got: %q\nwant: %q", got, want)
			}
			if got, want := string(res.Stderr), stderr.String(); got != want {
				t.Errorf("stderr differs\n got: %q\nwant: %q", got, want)
			}
			if res.ExitCode != cmd.ProcessState.ExitCode() {
				t.Errorf("exit code %d, want %d", res.ExitCode, cmd.ProcessState.ExitCode())
			}
			if !slices.Equal(res.Argv, argv) || res.TimedOut || res.Truncated || res.Signal != "" {
				t.Errorf("result %+v", res)
			}
		})
	}
	// The same through a command line.
	res := f.run(t, Request{Command: `grep -c "hello" 'a.txt'`})
	if string(res.Stdout) != "1\n" || res.ExitCode != 0 || !slices.Equal(res.Argv, []string{"grep", "-c", "hello", "a.txt"}) {
		t.Fatalf("command line: %+v", res)
	}
	res = f.run(t, Request{Command: "grep -c zzz a.txt"})
	if res.ExitCode != 1 {
		t.Fatalf("a non-zero exit must be a result: %+v", res)
	}
}

func TestCwd(t *testing.T) {
	f := newFixture(t, nil)
	res := f.run(t, Request{Command: "pwd", Cwd: "sub"})
	if got := strings.TrimSpace(string(res.Stdout)); got != filepath.Join(f.root, "sub") {
		t.Fatalf("pwd in sub = %q", got)
	}
	res = f.run(t, Request{Command: "cat b.txt", Cwd: filepath.Join(f.root, "in-link")})
	if string(res.Stdout) != "bee\n" {
		t.Fatalf("cwd through an inside link: %+v", res)
	}
	res = f.run(t, Request{Command: "cat ../a.txt", Cwd: "sub"})
	if string(res.Stdout) != fixtureTree["proj/a.txt"] {
		t.Fatalf("relative path from a sub-directory: %q", res.Stdout)
	}
	for _, cwd := range []string{"..", "../outside", filepath.Join(f.base, "outside"), "/", "/etc", "out-link", "out-link/dir",
		"../proj-evil", filepath.Join(f.base, "proj-evil")} {
		f.refuse(t, Request{Command: "ls", Cwd: cwd}, mcperr.PermissionDeny, "outside the allowed roots")
	}
	f.refuse(t, Request{Command: "ls", Cwd: "nope"}, mcperr.NotFound, "does not exist")
	f.refuse(t, Request{Command: "ls", Cwd: "a.txt"}, mcperr.Validation, "not a directory")
	f.refuse(t, Request{Command: "ls", Cwd: "a\x00b"}, mcperr.Validation, "NUL")
}

func TestPathConfinement(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []string{
		"cat ../outside/secret.txt",
		"cat /etc/passwd",
		"cat " + filepath.Join(f.base, "outside/secret.txt"),
		"cat ../proj-evil/loot.txt",
		"cat " + filepath.Join(f.base, "proj-evil/loot.txt"),
		"cat out-file",
		"cat out-link/secret.txt",
		"cat out-link/missing.txt",
		"cat out-link/../outside/secret.txt",
		"cat sub/../../outside/secret.txt",
		"ls out-link",
		"ls -R .. ",
		"head -n 1 out-file",
		"tail out-file",
		"wc -l out-file",
		"sort out-file",
		"uniq out-file",
		"grep -r secret out-link",
		"grep -f out-file a.txt",
		"grep --file=../outside/secret.txt a.txt",
		"grep --exclude-from=/etc/passwd x a.txt",
		"find out-link",
		"find ../outside",
		"find / -name x",
		"find . -newer /etc/passwd",
		"find . -samefile out-file",
		"find . -newermm ../outside/secret.txt",
		"sort --random-source=/dev/urandom a.txt",
		"git log -- ../outside",
		"git diff /etc/passwd",
	} {
		f.refuse(t, Request{Command: c}, mcperr.PermissionDeny, "outside the allowed roots")
	}
	// Inside: plain, through an inside link, absolute, with spaces, stdin.
	for _, c := range []string{
		"cat a.txt", "cat ./sub/../a.txt", "cat in-link/b.txt", "cat " + filepath.Join(f.root, "a.txt"),
		`cat "dir with space/c.txt"`, "cat -", "find . -newermt 2020-01-01 -name a.txt", "cat -- -", "grep -c -e x -",
		"echo /etc/passwd ../outside",
	} {
		if res := f.run(t, Request{Command: c}); res.ExitCode != 0 && !strings.HasPrefix(c, "grep") {
			t.Errorf("%s: exit %d, stderr %q", c, res.ExitCode, res.Stderr)
		}
	}
	if res := f.run(t, Request{Command: "cat missing/file"}); res.ExitCode == 0 {
		t.Errorf("missing file read")
	}
}

// procsWith lists the processes whose command line contains marker.
func procsWith(marker string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// waitGone waits briefly for killed processes to be reaped.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := procsWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func marker() string { return fmt.Sprintf("100.%d%d", os.Getpid(), time.Now().UnixNano()%100000) }

func TestTimeoutKillsGroup(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Allow = []string{"sh"} })
	m := marker()
	start := time.Now()
	// The timeout leaves room for sh to start and write under load.
	res := f.run(t, Request{Argv: []string{"sh", "-c", "echo started; sleep " + m + " & sleep " + m}, Timeout: time.Second})
	if el := time.Since(start); el > 4*time.Second {
		t.Fatalf("took %s after a 1s timeout", el)
	}
	if !res.TimedOut || res.ExitCode != -1 || res.Signal != "killed" || string(res.Stdout) != "started\n" {
		t.Fatalf("result %+v", res)
	}
	if res.Timeout != time.Second || res.Duration < time.Second {
		t.Fatalf("timeout %s duration %s", res.Timeout, res.Duration)
	}
	waitGone(t, m)
}

func TestBackgroundChildDoesNotHoldTheCall(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Allow = []string{"sh"} })
	m := marker()
	start := time.Now()
	res := f.run(t, Request{Argv: []string{"sh", "-c", "sleep " + m + " & echo done"}})
	if el := time.Since(start); el > drainGrace {
		t.Fatalf("a background child held the call for %s", el)
	}
	if res.TimedOut || res.ExitCode != 0 || string(res.Stdout) != "done\n" {
		t.Fatalf("result %+v", res)
	}
	waitGone(t, m)
}

func TestCancellationKillsGroup(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Allow = []string{"sh"} })
	m := marker()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := f.sh.Run(ctx, Request{Argv: []string{"sh", "-c", "sleep " + m + " & sleep " + m}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("cancellation took %s", el)
	}
	waitGone(t, m)
}

func TestOutputCap(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxOutput = 1000; c.Allow = []string{"sh"} })
	big := strings.Repeat("0123456789", 500)
	if err := os.WriteFile(filepath.Join(f.root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	res := f.run(t, Request{Command: "cat big.txt"})
	if !res.Truncated || len(res.Stdout) != 1000 || string(res.Stdout) != big[:1000] {
		t.Fatalf("truncated=%v len=%d", res.Truncated, len(res.Stdout))
	}
	// The cap is shared by stdout and stderr, and stops an endless writer.
	start := time.Now()
	// (The pause lets stderr's line be read before stdout fills the cap.)
	res = f.run(t, Request{Argv: []string{"sh", "-c", "echo err >&2; sleep 1; while :; do echo yyyyyyyy; done"}})
	if !res.Truncated || len(res.Stdout)+len(res.Stderr) != 1000 || string(res.Stderr) != "err\n" || res.Signal != "killed" {
		t.Fatalf("endless writer: truncated=%v stdout=%d stderr=%q signal=%q", res.Truncated, len(res.Stdout), res.Stderr, res.Signal)
	}
	if time.Since(start) > 5*time.Second || res.TimedOut {
		t.Fatalf("the cap did not stop the writer promptly")
	}
	res = f.run(t, Request{Command: "head -c 1000 big.txt"})
	if res.Truncated || len(res.Stdout) != 1000 {
		t.Fatalf("output exactly at the cap is not truncated: %v %d", res.Truncated, len(res.Stdout))
	}
}

func TestCleanEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://secret")
	t.Setenv("GIT_DIR", "/elsewhere")
	f := newFixture(t, func(c *Config) { c.Allow = []string{"env", "sh"}; c.Env = []string{"FOO", "NODE_ENV"} })
	res := f.run(t, Request{Command: "env", Env: map[string]string{"FOO": "bar baz"}})
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		names = append(names, k)
		switch k {
		case "PATH":
			if v != "/usr/local/bin:/usr/bin:/bin" {
				t.Errorf("PATH=%s", v)
			}
		case "HOME":
			if !strings.Contains(v, "devtools-shell-home-") {
				t.Errorf("HOME=%s", v)
			}
		case "LANG":
			if v != "C.UTF-8" {
				t.Errorf("LANG=%s", v)
			}
		case "FOO":
			if v != "bar baz" {
				t.Errorf("FOO=%s", v)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"FOO", "HOME", "LANG", "PATH"}) {
		t.Fatalf("child environment has %v:\n%s", names, res.Stdout)
	}
	res = f.run(t, Request{Argv: []string{"sh", "-c", `echo "[$DATABASE_URL]"`}})
	if string(res.Stdout) != "[]\n" {
		t.Fatalf("secret leaked: %q", res.Stdout)
	}
	// HOME is empty and removed after the call.
	res = f.run(t, Request{Argv: []string{"sh", "-c", `ls -A "$HOME"; echo "$HOME"`}})
	if home := strings.TrimSpace(string(res.Stdout)); !strings.Contains(home, "devtools-shell-home-") {
		t.Fatalf("HOME not empty: %q", res.Stdout)
	} else if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("HOME %s left behind: %v", home, err)
	}
	// Stdin is /dev/null.
	res = f.run(t, Request{Command: "cat"})
	if res.ExitCode != 0 || len(res.Stdout) != 0 {
		t.Fatalf("stdin: %+v", res)
	}
	f.refuse(t, Request{Command: "env", Env: map[string]string{"BAR": "x"}}, mcperr.Validation, `environment variable "BAR" may not be set (allowed: FOO, NODE_ENV)`)
	f.refuse(t, Request{Command: "env", Env: map[string]string{"FOO": "a\x00b"}}, mcperr.Validation, "NUL")
	g := newFixture(t, nil)
	g.refuse(t, Request{Command: "ls", Env: map[string]string{"PATH": "/tmp"}}, mcperr.Validation, "(allowed: none are)")
}

func TestTimeoutDefaultsAndCap(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.DefaultTimeout = 2 * time.Second; c.MaxTimeout = 3 * time.Second })
	for _, c := range []struct{ in, want time.Duration }{{0, 2 * time.Second}, {time.Second, time.Second}, {time.Hour, 3 * time.Second}} {
		p, err := f.sh.check(Request{Command: "ls", Timeout: c.in})
		if err != nil || p.timeout != c.want {
			t.Errorf("timeout %s → %v, %v; want %s", c.in, p, err, c.want)
		}
	}
	res := f.run(t, Request{Command: "ls", Timeout: time.Hour})
	if res.Timeout != 3*time.Second {
		t.Fatalf("result timeout %s", res.Timeout)
	}
	f.refuse(t, Request{Command: "ls", Timeout: -time.Second}, mcperr.Validation, "positive")
}

func TestProgramAllowlist(t *testing.T) {
	f := newFixture(t, nil)
	e := f.refuse(t, Request{Command: "rm -rf /"}, mcperr.Validation, `program "rm" is not allowed (allowed: cat, echo, find, git, grep, head, ls, pwd, sort, tail, uniq, wc)`)
	if e.Field != "command" {
		t.Fatalf("field %q", e.Field)
	}
	for _, c := range []string{"sudo ls", "chmod 777 a.txt", "chown root a.txt", "kill 1", "pkill x", "node -e 1", "npm install",
		"pnpm i", "yarn", "sh -c ls", "bash", "env", "xargs", "python3 -c 1", "perl -e 1", "curl x", "tee x", "dd"} {
		f.refuse(t, Request{Command: c}, mcperr.Validation, "is not allowed")
	}
	e = f.refuse(t, Request{Argv: []string{"/bin/ls"}}, mcperr.Validation, "must be given by name")
	if e.Field != "argv" {
		t.Fatalf("field %q", e.Field)
	}
	f.refuse(t, Request{Argv: []string{"./ls"}}, mcperr.Validation, "must be given by name")
	f.refuse(t, Request{Argv: []string{""}}, mcperr.Validation, "program name is empty")
	f.refuse(t, Request{Argv: []string{"echo", "a\x00"}}, mcperr.Validation, "NUL")
	f.refuse(t, Request{Command: "ls", Argv: []string{"ls"}}, mcperr.Validation, "not both")
	f.refuse(t, Request{}, mcperr.Validation, "give a command or argv")
	e = f.refuse(t, Request{Argv: []string{"sort", "-o", "x"}}, mcperr.Validation, "it writes files")
	if e.Field != "argv" {
		t.Fatalf("field %q", e.Field)
	}

	// Programs narrows the built-ins; Allow adds any-argument programs.
	g := newFixture(t, func(c *Config) { c.Programs = []string{"echo"}; c.Allow = []string{"true"} })
	g.refuse(t, Request{Command: "ls"}, mcperr.Validation, `program "ls" is not allowed (allowed: echo, true)`)
	if res := g.run(t, Request{Command: "true --anything /etc/passwd"}); res.ExitCode != 0 {
		t.Fatalf("allowed extra program: %+v", res)
	}
	if !f.sh.ReadOnly() || g.sh.ReadOnly() || !slices.Equal(g.sh.Unrestricted(), []string{"true"}) || !slices.Equal(g.sh.Programs(), []string{"echo"}) {
		t.Fatalf("ReadOnly/Unrestricted/Programs wrong")
	}

	// An allowed program missing from PATH is NOT_FOUND, not a crash.
	h := newFixture(t, func(c *Config) { c.Path = t.TempDir(); c.Allow = []string{"nonexistent-program"} })
	h.refuse(t, Request{Command: "ls"}, mcperr.NotFound, "not installed in PATH")
	h.refuse(t, Request{Command: "nonexistent-program"}, mcperr.NotFound, "not installed in PATH")
}

func TestPathLookupUsesConfiguredPath(t *testing.T) {
	dir := t.TempDir()
	// A fake "ls" in the configured PATH wins; the server's PATH is ignored.
	script := "#!/bin/sh\necho fake-ls\n"
	if err := os.WriteFile(filepath.Join(dir, "ls"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cat"), []byte(script), 0o644); err != nil { // not executable
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	f := newFixture(t, func(c *Config) { c.Path = dir + ":/usr/bin:/bin" })
	if res := f.run(t, Request{Command: "ls"}); string(res.Stdout) != "fake-ls\n" {
		t.Fatalf("ls → %q", res.Stdout)
	}
	if res := f.run(t, Request{Command: "cat a.txt"}); string(res.Stdout) != fixtureTree["proj/a.txt"] {
		t.Fatalf("non-executable file picked: %q", res.Stdout)
	}
}

func TestStartFailure(t *testing.T) {
	dir := t.TempDir()
	// Executable but not a valid program: exec fails with ENOEXEC.
	if err := os.WriteFile(filepath.Join(dir, "broken"), []byte("\x7fELF garbage"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *Config) { c.Path = dir; c.Allow = []string{"broken"} })
	f.refuse(t, Request{Command: "broken"}, mcperr.Internal, "could not be started")
}

func TestNewRejectsBadConfig(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "at least one root"},
		{Config{Roots: []string{filepath.Join(root, "missing")}}, "missing"},
		{Config{Roots: []string{file}}, "not a directory"},
		{Config{Roots: []string{root}, Path: "bin:/usr/bin"}, "not an absolute directory"},
		{Config{Roots: []string{root}, Programs: []string{"rm"}}, "not a built-in program"},
		{Config{Roots: []string{root}, Allow: []string{"/bin/sh"}}, "plain program name"},
		{Config{Roots: []string{root}, Allow: []string{"git"}}, "built-in program"},
		{Config{Roots: []string{root}, Env: []string{"1X"}}, "not a valid environment variable name"},
		{Config{Roots: []string{root}, Env: []string{"PATH"}}, "cannot be allowed"},
		{Config{Roots: []string{root}, Env: []string{"git_dir"}}, "cannot be allowed"},
		{Config{Roots: []string{root}, Env: []string{"LD_PRELOAD"}}, "cannot be allowed"},
		{Config{Roots: []string{root}, Env: []string{"POSIXLY_CORRECT"}}, "cannot be allowed"},
		{Config{Roots: []string{root}, MaxOutput: -1}, "must be positive"},
		{Config{Roots: []string{root}, DefaultTimeout: time.Minute, MaxTimeout: time.Second}, "exceeds the maximum"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", c.cfg, err, c.want)
		}
	}
	s, err := New(Config{Roots: []string{root}, DefaultTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Config()
	if cfg.MaxTimeout != 10*time.Minute || cfg.MaxOutput != 10<<20 || cfg.Path != "/usr/local/bin:/usr/bin:/bin" {
		t.Fatalf("defaults: %+v", cfg)
	}
	if !slices.Equal(s.Roots(), []string{root}) || len(s.EnvNames()) != 0 {
		t.Fatalf("roots %v env %v", s.Roots(), s.EnvNames())
	}
}

func TestErrorClientForm(t *testing.T) {
	e := &Error{Msg: "m", cause: os.ErrNotExist}
	if e.Error() != "m" || !errors.Is(e, os.ErrNotExist) {
		t.Fatal("Error/Unwrap")
	}
	for _, tc := range []struct {
		err   *Error
		code  mcperr.Code
		field string
	}{
		{invalid("env", "bad %s", "name"), mcperr.Validation, "env"},
		// Only a validation error names a field, as the tool always did.
		{denied("cwd", "cwd %q is outside", "x"), mcperr.PermissionDeny, ""},
		{&Error{Code: mcperr.NotFound, Field: "cwd", Msg: "m"}, mcperr.NotFound, ""},
		{failed("program x could not be started", os.ErrPermission), mcperr.Internal, ""},
		{e, mcperr.Internal, ""},
	} {
		me := mcperr.Wrap(fmt.Errorf("tool: %w", tc.err))
		if me.Code != tc.code || me.Message != tc.err.Msg || me.Field != tc.field || me.Value != nil || !errors.Is(me, tc.err) {
			t.Errorf("client form of %#v = %+v", tc.err, me)
		}
	}
	if strings.Contains(string(mcperr.Wrap(failed("m", errors.New("/host/secret"))).JSON()), "/host") {
		t.Error("the cause reaches the client")
	}
}

func TestResolveEdgeCases(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.Symlink("loop", filepath.Join(f.root, "loop")); err != nil {
		t.Fatal(err)
	}
	f.refuse(t, Request{Command: "cat loop"}, mcperr.PermissionDeny, "cannot be resolved")
	f.refuse(t, Request{Command: "cat loop/x"}, mcperr.PermissionDeny, "cannot be resolved")
	f.refuse(t, Request{Command: "ls", Cwd: "loop"}, mcperr.PermissionDeny, "cannot be resolved")
	if !within("/", "/etc") || within("/a", "/ab") || !within("/a", "/a") || !within("/a", "/a/b") {
		t.Fatal("within")
	}
	for err, want := range map[error]string{
		os.ErrPermission: "permission denied by the operating system",
		&fs.PathError{Op: "lstat", Path: "/host/x", Err: syscall.ENOENT}:       "a directory on the way does not exist",
		&fs.PathError{Op: "lstat", Path: "/host/x", Err: syscall.ELOOP}:        "too many levels of symbolic links",
		&fs.PathError{Op: "lstat", Path: "/host/x", Err: syscall.ENAMETOOLONG}: "the path is too long",
		&fs.PathError{Op: "lstat", Path: "/host/x", Err: syscall.EIO}:          "an I/O error occurred",
		errors.New("other /host/x"):                                            "an I/O error occurred",
	} {
		if got := errText(err); got != want {
			t.Errorf("errText(%v) = %q, want %q", err, got, want)
		}
	}
	// A root of / admits everything (an operator's choice).
	s, err := New(Config{Roots: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.check(Request{Command: "cat /etc/hostname", Cwd: "/tmp"}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestRoots: roots given with a request replace the configured ones
// for that run only: the working directory and every path argument are
// confined to them.
func TestRequestRoots(t *testing.T) {
	f := newFixture(t, nil)
	sub := filepath.Join(f.root, "sub")
	res := f.run(t, Request{Command: "pwd", Roots: []string{sub}})
	if got := strings.TrimSpace(string(res.Stdout)); got != sub {
		t.Fatalf("pwd with the request's roots = %q, want %s", got, sub)
	}
	if res := f.run(t, Request{Command: "cat b.txt", Roots: []string{sub}}); string(res.Stdout) != "bee\n" {
		t.Fatalf("cat b.txt = %q", res.Stdout)
	}
	f.refuse(t, Request{Command: "cat ../a.txt", Roots: []string{sub}}, mcperr.PermissionDeny, "outside the allowed roots")
	f.refuse(t, Request{Command: "ls", Cwd: f.root, Roots: []string{sub}}, mcperr.PermissionDeny, "outside the allowed roots")
	// The next run without them has the configured roots again.
	if res := f.run(t, Request{Command: "cat a.txt"}); string(res.Stdout) != fixtureTree["proj/a.txt"] {
		t.Fatalf("cat a.txt = %q", res.Stdout)
	}
	f.refuse(t, Request{Command: "ls", Roots: []string{filepath.Join(f.root, "gone")}}, mcperr.Internal, "the call's roots")
}
