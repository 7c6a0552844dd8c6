package filewatch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// env is a root directory, a directory outside it, a watcher confined to
// the root through fsroot, and the notifications it sends.
type env struct {
	base, root, outside string
	w                   *Watcher
	notes               chan string
	// timers receives each scheduled burst notification when the test
	// controls time (manual); run it to send the notification.
	timers chan func()
}

// wait bounds how long a test waits for the kernel's events; it is a
// deadlock guard, not a measurement.
const wait = 10 * time.Second

func newEnv(t *testing.T, maxFiles int, manual bool) *env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside"),
		notes: make(chan string, 1000), timers: make(chan func(), 1000)}
	for _, d := range []string{e.root, e.outside, filepath.Join(e.root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := fsroot.Open([]string{e.root}, fsroot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fsys.Close() })
	e.w, err = New(Config{Resolve: fsys.WatchPaths, Notify: func(uri string) { e.notes <- uri },
		MaxFiles: maxFiles, Debounce: time.Millisecond, FlagHint: "--watch-max-files"})
	if err != nil {
		t.Fatal(err)
	}
	if manual {
		e.w.after = func(_ time.Duration, f func()) timer {
			e.timers <- f
			return fakeTimer{}
		}
	}
	t.Cleanup(func() { _ = e.w.Close() })
	return e
}

type fakeTimer struct{}

func (fakeTimer) Stop() bool { return true }

func (e *env) in(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

func (e *env) watch(t *testing.T, name string) func() {
	t.Helper()
	stop, err := e.w.Watch("file://"+e.in(name), e.in(name))
	if err != nil {
		t.Fatalf("watch %s: %v", name, err)
	}
	return stop
}

// next waits for the next notification.
func (e *env) next(t *testing.T) string {
	t.Helper()
	select {
	case uri := <-e.notes:
		return strings.TrimPrefix(uri, "file://"+e.root+"/")
	case <-time.After(wait):
		t.Fatal("no notification arrived")
		return ""
	}
}

// expect waits for a notification for name.
func (e *env) expect(t *testing.T, name string) {
	t.Helper()
	if got := e.next(t); got != name {
		t.Fatalf("notification for %q, want %q", got, name)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// poke changes the file name in the root with exactly one event: a file
// prepared outside the watched directories is renamed over it.
func (e *env) poke(t *testing.T, name string) {
	t.Helper()
	tmp, err := os.CreateTemp(e.outside, "poke")
	if err != nil {
		t.Fatal(err)
	}
	_ = tmp.Close()
	if err := os.Rename(tmp.Name(), e.in(name)); err != nil {
		t.Fatal(err)
	}
}

func (e *env) timer(t *testing.T) func() {
	t.Helper()
	select {
	case f := <-e.timers:
		return f
	case <-time.After(wait):
		t.Fatal("no notification was scheduled")
		return nil
	}
}

// fire waits for the next scheduled notification, sends it, and checks it
// is for name.
func (e *env) fire(t *testing.T, name string) {
	t.Helper()
	e.timer(t)()
	e.expect(t, name)
}

// settle waits until every event so far has been handled and every
// notification it caused has been sent (and dropped): the sentinel's single
// event comes after them, in order. The sentinel must be watched.
func (e *env) settle(t *testing.T) {
	t.Helper()
	e.poke(t, "sentinel")
	for {
		e.timer(t)()
		if e.next(t) == "sentinel" {
			return
		}
	}
}

// quiet checks that nothing was reported since the last settle: the next
// notification is the sentinel's.
func (e *env) quiet(t *testing.T) {
	t.Helper()
	e.poke(t, "sentinel")
	e.fire(t, "sentinel")
}

// TestChanges: creating, writing, replacing by rename and deleting a
// watched file each reach its subscriber; a neighbour's changes do not.
func TestChanges(t *testing.T) {
	e := newEnv(t, 0, true)
	e.watch(t, "sentinel")
	e.watch(t, "a.txt") // does not exist yet
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"create", func() { write(t, e.in("a.txt"), "created") }},
		{"write", func() { write(t, e.in("a.txt"), "written") }},
		{"append", func() {
			f, err := os.OpenFile(e.in("a.txt"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString("appended")
			_ = f.Close()
		}},
		// An editor's save: write a temp file, rename it over the original.
		{"rename over", func() {
			write(t, e.in(".a.txt.swp"), "renamed over")
			if err := os.Rename(e.in(".a.txt.swp"), e.in("a.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{"rename away", func() {
			if err := os.Rename(e.in("a.txt"), e.in("b.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{"recreate", func() { write(t, e.in("a.txt"), "again") }},
		{"delete", func() {
			if err := os.Remove(e.in("a.txt")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		change.do()
		e.fire(t, "a.txt")
		e.settle(t)
	}
	// Only metadata changed: the content is the same, nothing is sent.
	write(t, e.in("a.txt"), "x")
	e.fire(t, "a.txt")
	e.settle(t)
	if err := os.Chmod(e.in("a.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.quiet(t)
	// A file in another directory, and a neighbour that is not watched:
	// only the watched file is reported.
	e.watch(t, "sub/b.txt")
	write(t, e.in("neighbour.txt"), "x")
	e.quiet(t)
	write(t, e.in("sub/b.txt"), "b")
	e.fire(t, "sub/b.txt")
	if n := e.w.Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
}

// TestRealTimers: with the real clock, a change arrives on its own.
func TestRealTimers(t *testing.T) {
	e := newEnv(t, 0, false)
	e.watch(t, "a.txt")
	write(t, e.in("a.txt"), "x")
	e.expect(t, "a.txt")
}

// TestDebounce: a burst of writes is one notification, sent when its timer
// fires; the change after it starts the next one, so the last state is
// always reported.
func TestDebounce(t *testing.T) {
	e := newEnv(t, 0, true)
	e.watch(t, "burst.txt")
	e.watch(t, "sentinel")
	for i := range 50 {
		write(t, e.in("burst.txt"), strings.Repeat("x", i))
	}
	burst := e.timer(t)
	// Events of one directory arrive in order: once the sentinel's timer is
	// scheduled, every write of the burst has been seen.
	e.poke(t, "sentinel")
	sentinel := e.timer(t)
	if n := len(e.timers); n != 0 {
		t.Fatalf("%d more notifications scheduled for one burst", n)
	}
	sentinel()
	e.expect(t, "sentinel")
	burst()
	e.expect(t, "burst.txt")
	e.poke(t, "burst.txt")
	e.fire(t, "burst.txt")
}

// TestStop: after the last stop a file's changes are no longer reported,
// its directory is no longer watched, and a stopped burst never fires.
func TestStop(t *testing.T) {
	e := newEnv(t, 0, true)
	if err := os.Mkdir(e.in("only"), 0o755); err != nil {
		t.Fatal(err)
	}
	stopA := e.watch(t, "only/a.txt")
	again, err := e.w.Watch("file://"+e.in("only/a.txt"), e.in("only/a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e.watch(t, "sentinel")
	again() // one reference left
	again() // a second call of the same stop does nothing
	write(t, e.in("only/a.txt"), "1")
	pending := e.timer(t)
	stopA()
	pending() // the burst of a stopped watch sends nothing
	write(t, e.in("only/a.txt"), "2")
	e.poke(t, "sentinel")
	e.fire(t, "sentinel")
	if n := len(e.timers) + len(e.notes); n != 0 {
		t.Fatalf("%d notifications after stop", n)
	}
	if _, watched := e.w.dirs[e.in("only")]; e.w.Len() != 1 || watched {
		t.Errorf("after stop: %d files watched, directory still watched: %v", e.w.Len(), watched)
	}
}

// TestCap: past MaxFiles a watch is refused with a message that names the
// cap and the setting; a stop makes room again.
func TestCap(t *testing.T) {
	e := newEnv(t, 2, false)
	e.watch(t, "a")
	stopB := e.watch(t, "b")
	_, err := e.w.Watch("file://"+e.in("c"), e.in("c"))
	me := mcperr.Wrap(err)
	if me == nil || me.Code != mcperr.RateLimit || !strings.Contains(me.Message, "2 files") || !strings.Contains(me.Message, "--watch-max-files") {
		t.Fatalf("third watch: %v", err)
	}
	stopB()
	e.watch(t, "c")
}

// TestOutsideRoots: nothing outside the roots is ever watched, whether
// named directly, through .., or through a symbolic link.
func TestOutsideRoots(t *testing.T) {
	e := newEnv(t, 0, false)
	if err := os.Symlink(e.outside, e.in("out")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(e.outside, "x"), e.root + "/../outside/x", e.in("out/x"), "/etc/passwd"} {
		_, err := e.w.Watch("file://"+p, p)
		var me *mcperr.Error
		if !errors.As(mcperr.Wrap(err), &me) || me.Code != mcperr.PermissionDeny {
			t.Errorf("watch %s: %v, want PERMISSION_DENIED", p, err)
		}
	}
	if e.w.Len() != 0 || e.w.fsw != nil {
		t.Errorf("a refused watch left %d files watched (kernel watcher %v)", e.w.Len(), e.w.fsw)
	}
	// A missing directory cannot be watched either.
	if _, err := e.w.Watch("file:///x", e.in("nodir/x")); mcperr.Wrap(err).Code != mcperr.NotFound {
		t.Errorf("watch in a missing directory: %v", err)
	}
}

// TestDirectoryReplaced: when a watched file's directory is renamed away
// and another takes its place, the subscriber is told and the watch follows
// the path; when it is removed for good, the subscriber is told once and
// the old location is never reported.
func TestDirectoryReplaced(t *testing.T) {
	e := newEnv(t, 0, true)
	e.watch(t, "sentinel")
	e.watch(t, "sub/f.txt")
	// Hold the watcher while the directory is swapped, so it handles the
	// rename once the new directory is in place.
	e.w.mu.Lock()
	if err := os.Rename(e.in("sub"), e.in("old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.in("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.w.mu.Unlock()
	e.fire(t, "sub/f.txt")
	e.settle(t)
	write(t, e.in("old/f.txt"), "the old directory, now outside the path")
	e.quiet(t)
	write(t, e.in("sub/f.txt"), "the new directory")
	e.fire(t, "sub/f.txt")
	e.settle(t)

	if err := os.RemoveAll(e.in("sub")); err != nil {
		t.Fatal(err)
	}
	e.fire(t, "sub/f.txt")
	e.settle(t)
	// Gone: a directory created later at the same path is not watched.
	if err := os.Mkdir(e.in("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, e.in("sub/f.txt"), "later")
	e.quiet(t)
	if e.w.Len() != 2 {
		t.Errorf("the subscription itself must stay until stopped: Len = %d", e.w.Len())
	}
}

func TestUnder(t *testing.T) {
	e := newEnv(t, 0, false)
	if err := os.Symlink("sub", e.in("sub-link")); err != nil {
		t.Fatal(err)
	}
	e.watch(t, "a.txt")
	e.watch(t, "sub/b.txt")
	e.watch(t, "sub-link/c.txt") // watched where it really is: sub/c.txt
	for _, tc := range []struct {
		path string
		want []string
	}{
		{e.in("a.txt"), []string{"a.txt"}},
		{e.in("sub"), []string{"sub-link/c.txt", "sub/b.txt"}},
		{e.in("sub-link"), []string{"sub-link/c.txt"}},
		{e.root, []string{"a.txt", "sub-link/c.txt", "sub/b.txt"}},
		{e.in("elsewhere"), nil},
	} {
		var got []string
		for _, u := range e.w.Under(tc.path) {
			got = append(got, strings.TrimPrefix(u, "file://"+e.root+"/"))
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("Under(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestNewAndClose(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without Resolve and Notify succeeded")
	}
	if _, err := New(Config{Resolve: func(string) ([]string, error) { return nil, nil }, Notify: func(string) {}, MaxFiles: -1}); err == nil {
		t.Error("New with a negative cap succeeded")
	}
	e := newEnv(t, 0, false)
	if e.w.cfg.MaxFiles != DefaultMaxFiles || e.w.cfg.Debounce != time.Millisecond {
		t.Errorf("config = %+v", e.w.cfg)
	}
	stop := e.watch(t, "a.txt")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); write(t, e.in("a.txt"), "x") }()
	wg.Wait()
	if err := e.w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.w.Close(); err != nil {
		t.Fatal(err)
	}
	stop() // after Close: nothing to do, no panic
	if _, err := e.w.Watch("file:///x", e.in("b.txt")); err == nil {
		t.Error("Watch after Close succeeded")
	}
	if e.w.Len() != 0 {
		t.Errorf("Len after Close = %d", e.w.Len())
	}
}

func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		syscall.ENOSPC:                     "limit on file watches",
		syscall.EMFILE:                     "limit on file watches",
		&os.PathError{Err: syscall.EACCES}: "denied",
		syscall.ENOENT:                     "no longer exists",
		syscall.EINVAL:                     "refused",
	} {
		if got := reason(err); !strings.Contains(got, want) {
			t.Errorf("reason(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestOverflow: when the kernel dropped events, every watched file is
// reported once; another error reports nothing.
func TestOverflow(t *testing.T) {
	e := newEnv(t, 0, true)
	e.watch(t, "a.txt")
	e.watch(t, "sub/b.txt")
	e.w.failed(errors.New("some other watch error"))
	if n := len(e.timers); n != 0 {
		t.Fatalf("%d notifications for an error that lost nothing", n)
	}
	e.w.failed(fsnotify.ErrEventOverflow)
	got := []string{}
	for range 2 {
		e.timer(t)()
		got = append(got, e.next(t))
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "a.txt,sub/b.txt" {
		t.Errorf("after an overflow: %q", got)
	}
}
