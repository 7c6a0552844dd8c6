package tools

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/rs/zerolog"
)

// Roots gives each call the directories its tools may use.
//
// Without client roots, every call gets the server's roots: those the
// operator configured, else the working directory. A client that declares
// the roots capability is asked for its roots (once per session before
// protocol 2026-07-28, the kit keeps them until the client says they
// changed), and then:
//   - when the operator configured no roots, the client's roots replace the
//     working directory;
//   - when the operator configured roots, the client's roots can only narrow
//     them: the client roots that lie inside a configured root are used, and
//     one outside every configured root is left out and logged.
//
// Only file:// roots naming existing directories count; a client whose roots
// all fail those rules gets the server's roots. Views are cached per
// distinct list of client roots, so a session pays for opening its roots once.
type Roots struct {
	base       *fsroot.FS
	configured bool
	log        zerolog.Logger
	baseScope  *Scope

	mu    sync.Mutex
	cache map[string]*Scope
	order []string // cache keys, least recently used first
}

// maxScopes bounds the cached views (each holds a directory handle per
// root).
const maxScopes = 32

// Scope is the file system one call may use. Release it when the call is
// done.
type Scope struct {
	// FS holds the effective roots.
	FS *fsroot.FS
	// Dirs are the effective roots when they differ from the server's, or
	// nil.
	Dirs []string

	owner   *Roots
	refs    int
	evicted bool
}

// Release ends the call's use of the scope.
func (s *Scope) Release() {
	if s == nil || s.owner == nil || s.Dirs == nil {
		return
	}
	r := s.owner
	r.mu.Lock()
	defer r.mu.Unlock()
	s.refs--
	if s.evicted && s.refs == 0 {
		_ = s.FS.Close()
	}
}

// NewRoots returns the roots source over base, the server's roots;
// configured says the operator chose them (else they are the default).
func NewRoots(base *fsroot.FS, configured bool, log *zerolog.Logger) *Roots {
	r := &Roots{base: base, configured: configured, cache: map[string]*Scope{}, log: zerolog.Nop()}
	if log != nil {
		r.log = *log
	}
	r.baseScope = &Scope{FS: base, owner: r}
	return r
}

// Base returns the server's own roots.
func (r *Roots) Base() *fsroot.FS { return r.base }

// For returns the scope of call c. Before protocol 2026-07-28 the first call
// of a session that declared roots waits for the client's roots/list answer;
// from 2026-07-28 it returns the kit's input-required error, which the
// handler must return as it is.
func (r *Roots) For(ctx context.Context, c *kit.Call) (*Scope, error) {
	if c == nil || !c.Can("roots/list") {
		return r.baseScope, nil
	}
	list, err := c.Roots(ctx)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return r.baseScope, nil
	}
	uris := make([]string, len(list))
	for i, root := range list {
		uris[i] = root.URI
	}
	key := strings.Join(uris, "\x00")
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.cache[key]
	if s == nil {
		s = r.open(uris)
		r.cache[key] = s
		r.order = append(r.order, key)
		if len(r.order) > maxScopes {
			old := r.order[0]
			r.order = r.order[1:]
			if o := r.cache[old]; o != nil {
				delete(r.cache, old)
				o.evicted = true
				if o.refs == 0 && o.Dirs != nil {
					_ = o.FS.Close()
				}
			}
		}
	} else {
		for i, k := range r.order {
			if k == key {
				r.order = append(append(r.order[:i:i], r.order[i+1:]...), key)
				break
			}
		}
	}
	if s.Dirs != nil {
		s.refs++
	}
	return s, nil
}

// open builds the view for a list of client root URIs, logging what it
// leaves out. Called with r.mu held.
func (r *Roots) open(uris []string) *Scope {
	var dirs []string
	for _, u := range uris {
		dir, ok := rootPath(u)
		if !ok {
			r.log.Warn().Str("root", u).Msg("client root ignored: only file:// URIs of absolute paths are roots")
			continue
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		r.log.Warn().Strs("server_roots", r.base.Roots()).Msg("none of the client's roots is usable; the server's roots apply")
		return r.baseScope
	}
	var fs *fsroot.FS
	var refused []fsroot.Refusal
	how := "client roots replace the default root"
	if r.configured {
		fs, refused = r.base.Narrow(dirs)
		how = "client roots narrow the configured roots"
	} else {
		fs, refused = r.base.Reopen(dirs)
	}
	for _, x := range refused {
		r.log.Warn().Str("root", x.Dir).Str("reason", x.Reason).Msg("client root ignored")
	}
	if fs == nil {
		r.log.Warn().Strs("server_roots", r.base.Roots()).Msg("none of the client's roots is usable; the server's roots apply")
		return r.baseScope
	}
	r.log.Info().Strs("roots", fs.Roots()).Msg(how)
	return &Scope{FS: fs, Dirs: fs.Roots(), owner: r}
}

// rootPath turns a client root's file:// URI into an absolute path.
func rootPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	if u.Path == "" || !filepath.IsAbs(u.Path) || strings.IndexByte(u.Path, 0) >= 0 {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

// Close closes every cached view (not the server's roots).
func (r *Roots) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, s := range r.cache {
		delete(r.cache, k)
		if s.Dirs != nil {
			_ = s.FS.Close()
		}
	}
	r.order = nil
}
