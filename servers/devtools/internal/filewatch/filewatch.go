// Package filewatch tells the devtools server's resource subscribers when a
// file changes, whoever changed it: the file tools, an editor, a build.
//
// A subscription names one file. The watcher watches the file's directory,
// not the file, because editors and atomic writers replace a file by
// renaming another over it, which a watch on the old file would miss; one
// directory watch serves every subscribed file in it. Where to watch comes
// from a Resolve function (fsroot's WatchPaths): the symlink-free location
// of the file, confirmed to lie inside the roots, so no watch is ever set
// outside them. Once the directories are watched the file is resolved again,
// and the subscription is refused if the answer changed in between.
//
// The work is bounded: at most MaxFiles files are watched at once (a
// subscription past the cap is refused with a message saying so), and a
// burst of events for one file — a large write is many of them — becomes one
// notification, sent Debounce after the first event of the burst; events
// after that start the next burst, so the last change is always reported.
// If the kernel's event queue overflows, every subscribed file is reported.
//
// When a watched directory itself is removed or renamed, its files are
// reported once and each is resolved again: if a directory now exists at
// the same path, the watch moves there; otherwise that file's later changes
// are reported only by the tools that make them (see Under) until the
// client subscribes again.
package filewatch

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/rs/zerolog"
)

// Defaults for a zero Config field.
const (
	DefaultMaxFiles = 1000
	DefaultDebounce = 100 * time.Millisecond
)

// Config configures a Watcher.
type Config struct {
	// Resolve maps a file path, as the subscriber named it, to the
	// symlink-free absolute paths to watch for it, each confirmed to lie
	// inside the roots. Required.
	Resolve func(path string) ([]string, error)
	// Notify is told a subscribed file's URI when the file changed.
	// Required. It is called without the watcher's lock held.
	Notify func(uri string)
	// MaxFiles caps the files watched at once.
	MaxFiles int
	// Debounce is how long after a burst's first event its notification
	// is sent.
	Debounce time.Duration
	// FlagHint names the setting that raises MaxFiles, for the refusal.
	FlagHint string
	Logger   *zerolog.Logger
}

// Watcher watches subscribed files. It is safe for concurrent use.
type Watcher struct {
	cfg Config
	log zerolog.Logger
	// after schedules a burst's notification (time.AfterFunc; tests take
	// control of time through it).
	after func(d time.Duration, f func()) timer

	mu     sync.Mutex
	fsw    *fsnotify.Watcher // nil until the first watch
	closed bool
	subs   map[string]*sub // by URI
	dirs   map[string]*dir // by symlink-free directory
	loop   sync.WaitGroup
}

// sub is one watched file.
type sub struct {
	uri, path string
	// spots are the symlink-free paths watched for it.
	spots []string
	refs  int
	// timer is the pending notification of the current burst, if any.
	timer timer
}

// timer is a scheduled notification.
type timer interface{ Stop() bool }

// dir is one watched directory and the subscriptions that need it, by the
// file name they watch in it.
type dir struct {
	names map[string]map[*sub]struct{}
}

// New returns a Watcher; nothing is watched, and no kernel resource is
// taken, until the first Watch.
func New(cfg Config) (*Watcher, error) {
	if cfg.Resolve == nil || cfg.Notify == nil {
		return nil, errors.New("filewatch: Resolve and Notify are required")
	}
	if cfg.MaxFiles < 0 || cfg.Debounce < 0 {
		return nil, errors.New("filewatch: MaxFiles and Debounce must not be negative")
	}
	if cfg.MaxFiles == 0 {
		cfg.MaxFiles = DefaultMaxFiles
	}
	if cfg.Debounce == 0 {
		cfg.Debounce = DefaultDebounce
	}
	w := &Watcher{cfg: cfg, subs: map[string]*sub{}, dirs: map[string]*dir{}, log: zerolog.Nop(),
		after: func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }}
	if cfg.Logger != nil {
		w.log = cfg.Logger.With().Str("component", "filewatch").Logger()
	}
	return w, nil
}

// Len returns the number of files watched.
func (w *Watcher) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.subs)
}

// Watch starts reporting changes of the file at path under uri, until stop
// is called. Watching a URI again adds a reference; each stop removes one.
// Refusals are *mcperr.Error values whose message says why.
func (w *Watcher) Watch(uri, path string) (stop func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, mcperr.New(mcperr.Internal, "the server is shutting down")
	}
	if s := w.subs[uri]; s != nil {
		s.refs++
		return w.stopper(s), nil
	}
	if len(w.subs) >= w.cfg.MaxFiles {
		msg := "cannot watch more than %d files at once"
		if w.cfg.FlagHint != "" {
			msg += " (the operator can raise it with " + w.cfg.FlagHint + ")"
		}
		return nil, mcperr.New(mcperr.RateLimit, msg+"; unsubscribe from a file first", w.cfg.MaxFiles).WithRetryable(false)
	}
	spots, err := w.cfg.Resolve(path)
	if err != nil {
		return nil, err
	}
	if w.fsw == nil {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, mcperr.New(mcperr.Internal, "cannot start watching files: %v", err).WithCause(err)
		}
		w.fsw = fsw
		w.loop.Add(1)
		go w.run(fsw)
	}
	s := &sub{uri: uri, path: path, refs: 1}
	if err := w.attach(s, spots); err != nil {
		w.detach(s)
		return nil, err
	}
	// The tree may have changed while the directories were being watched:
	// only a location that still resolves the same way is kept.
	again, err := w.cfg.Resolve(path)
	if err != nil || !slices.Equal(again, spots) {
		w.detach(s)
		if err != nil {
			return nil, err
		}
		return nil, mcperr.New(mcperr.Conflict, "the file's location changed while the watch was being set up; subscribe again")
	}
	w.subs[uri] = s
	return w.stopper(s), nil
}

// attach watches s's spots' directories.
func (w *Watcher) attach(s *sub, spots []string) error {
	for _, spot := range spots {
		d, name := filepath.Dir(spot), filepath.Base(spot)
		e := w.dirs[d]
		if e == nil {
			if err := w.fsw.Add(d); err != nil {
				return mcperr.New(mcperr.Internal, "cannot watch the file's directory: %s", reason(err)).WithCause(err)
			}
			e = &dir{names: map[string]map[*sub]struct{}{}}
			w.dirs[d] = e
		}
		set := e.names[name]
		if set == nil {
			set = map[*sub]struct{}{}
			e.names[name] = set
		}
		set[s] = struct{}{}
		s.spots = append(s.spots, spot)
	}
	return nil
}

// detach forgets s's spots, and the directories no one needs any more.
func (w *Watcher) detach(s *sub) {
	for _, spot := range s.spots {
		d, name := filepath.Dir(spot), filepath.Base(spot)
		e := w.dirs[d]
		if e == nil {
			continue
		}
		delete(e.names[name], s)
		if len(e.names[name]) == 0 {
			delete(e.names, name)
		}
		if len(e.names) == 0 {
			delete(w.dirs, d)
			if w.fsw != nil {
				_ = w.fsw.Remove(d) // gone already when the directory was removed
			}
		}
	}
	s.spots = nil
}

func (w *Watcher) stopper(s *sub) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if s.refs--; s.refs > 0 || w.subs[s.uri] != s {
				return
			}
			delete(w.subs, s.uri)
			w.detach(s)
			if s.timer != nil {
				s.timer.Stop()
				s.timer = nil
			}
		})
	}
}

// reason says why a watch could not be set, in words of our own: the
// operating system's error would name the host path.
func reason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		// inotify reports its per-user watch limit as ENOSPC.
		return "the system's limit on file watches is reached"
	case errors.Is(err, fs.ErrPermission):
		return "the operating system denied access"
	case errors.Is(err, fs.ErrNotExist):
		return "it no longer exists"
	}
	return "the operating system refused"
}

func (w *Watcher) run(fsw *fsnotify.Watcher) {
	defer w.loop.Done()
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			w.failed(err)
		}
	}
}

// failed handles an error from the kernel watcher. When the kernel's queue
// overflowed, events were lost: every watched file is reported, since any
// of them may have changed.
func (w *Watcher) failed(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn().Err(err).Msg("file watch error")
		return
	}
	w.log.Warn().Msg("the kernel dropped file events; reporting every watched file as changed")
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.subs {
		w.trigger(s)
	}
}

func (w *Watcher) event(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return // metadata only: the content is the same
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if e := w.dirs[filepath.Dir(ev.Name)]; e != nil {
		for s := range e.names[filepath.Base(ev.Name)] {
			w.trigger(s)
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if e := w.dirs[ev.Name]; e != nil {
			w.moved(ev.Name, e)
		}
	}
}

// moved handles a watched directory that was removed or renamed: its files
// are reported, and each is resolved and watched again where it is now.
func (w *Watcher) moved(d string, e *dir) {
	var affected []*sub
	for _, set := range e.names {
		for s := range set {
			if !slices.Contains(affected, s) {
				affected = append(affected, s)
			}
		}
	}
	for _, s := range affected {
		w.trigger(s)
		w.detach(s)
	}
	// A renamed directory keeps its watch, now somewhere else; it must go.
	delete(w.dirs, d)
	_ = w.fsw.Remove(d)
	for _, s := range affected {
		spots, err := w.cfg.Resolve(s.path)
		if err == nil {
			err = w.attach(s, spots)
		}
		if err != nil {
			w.detach(s)
			w.log.Info().Str("uri", s.uri).Msg("a watched file's directory went away; its changes are reported again once it is subscribed again")
		}
	}
}

// trigger starts a burst for s unless one is pending. Called with w.mu held.
func (w *Watcher) trigger(s *sub) {
	if s.timer != nil {
		return
	}
	s.timer = w.after(w.cfg.Debounce, func() { w.fire(s) })
}

func (w *Watcher) fire(s *sub) {
	w.mu.Lock()
	live := !w.closed && w.subs[s.uri] == s
	s.timer = nil
	w.mu.Unlock()
	if live {
		w.cfg.Notify(s.uri)
	}
}

// Under returns the URIs of the watched files at or below the absolute
// path p, whether named that way or found there once symbolic links are
// resolved. The file tools report their own changes through it, so that a
// subscriber hears of a write or delete even before the kernel's event
// arrives, and of a directory deleted with everything in it.
func (w *Watcher) Under(p string) []string {
	p = filepath.Clean(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for uri, s := range w.subs {
		if inside(p, filepath.Clean(s.path)) || slices.ContainsFunc(s.spots, func(spot string) bool { return inside(p, spot) }) {
			out = append(out, uri)
		}
	}
	slices.Sort(out)
	return out
}

// inside reports whether q is dir or lies below it.
func inside(dir, q string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	return q == dir || strings.HasPrefix(q, dir+string(filepath.Separator))
}

// Close stops every watch; later Watch calls are refused.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	for _, s := range w.subs {
		if s.timer != nil {
			s.timer.Stop()
			s.timer = nil
		}
	}
	w.subs = map[string]*sub{}
	w.dirs = map[string]*dir{}
	fsw := w.fsw
	w.mu.Unlock()
	var err error
	if fsw != nil {
		err = fsw.Close()
	}
	w.loop.Wait()
	return err
}
