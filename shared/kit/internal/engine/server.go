// Package engine is the protocol engine under the kit: JSON-RPC dispatch in
// both protocol eras (2025-11-25 with initialize and sessions; 2026-07-28,
// stateless), the transports (stdio, streamable HTTP, the 2024-11-05 SSE
// transport), sessions, outboxes for notifications, the budgets that bound
// work and memory, and the pipeline in front of every call and read (ACL,
// rate limit, caps, schema validation, time limit, panic recovery, error
// mapping, audit line, metrics). A request is decoded once and its answer
// encoded once.
//
// Servers never see it: they declare tools with package kit, which checks
// the definitions and hands the engine Tool records whose Handler takes the
// engine's Call.
package engine

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/validate"
	"github.com/rs/zerolog"
)

// Info names a server.
type Info struct {
	Name         string // short name: "devtools"
	Version      string
	Commit       string
	Instructions string // sent to clients on initialize and server/discover
}

// Options are the kit's settings for one server; Main fills them from flags
// and environment, tests set them directly.
type Options struct {
	// Policy, when set, is enforced: only the tools and resources it grants
	// the caller's agent are listed, callable and readable.
	Policy *acl.Policy
	// ReadOnly drops every tool whose Effect is not ReadOnly.
	ReadOnly bool
	// Include, when non-empty, keeps only these tools; Exclude drops tools.
	Include, Exclude []string
	// Resources and Templates are served beside the tools.
	Resources []Resource
	Templates []ResourceTemplate
	// Notifier delivers resource updates; New makes one when nil.
	Notifier *Notifier
	// DefaultTimeout bounds a call whose tool sets no Timeout.
	DefaultTimeout time.Duration
	// Grace bounds how long a shutdown waits for calls in flight (10s).
	Grace time.Duration
	// Limits bound concurrent work and memory; zero fields take defaults.
	Limits   budget.Limits
	Limiter  *ratelimit.Limiter
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	Metrics  *metrics.Registry
}

// Server is a configured MCP server.
type Server struct {
	info      Info
	opts      Options
	tools     []*registered
	byName    map[string]*registered
	resources []*Resource
	byURI     map[string]*Resource
	templates []*ResourceTemplate
	notifier  *Notifier
	log       zerolog.Logger
	metrics   *metrics.Registry
	budget    *budget.Process
	seq       atomic.Uint64
	idBase    string
	// stateKey signs the requestState of input-required results.
	stateKey []byte
	// serverInfo is the encoded {"name","version"} object.
	serverInfo []byte
	// watches are the stop functions of resource template watches, by URI.
	watches watchSet
	// toolNames are all the tools the server defines, served or not.
	toolNames map[string]bool
}

type registered struct {
	Tool
	schema *validate.Schema
	// output checks structuredContent against OutputSchema; nil without one.
	output *validate.Schema
	slots  chan struct{} // nil: no per-tool cap
}

// New checks and registers tools and resources. A malformed definition, an
// unknown name in Include/Exclude, or a duplicate is an error.
func New(info Info, tools []Tool, opts Options) (*Server, error) {
	if info.Name == "" {
		return nil, errors.New("server name is required")
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = 60 * time.Second
	}
	s := &Server{info: info, opts: opts, byName: map[string]*registered{}, byURI: map[string]*Resource{},
		idBase: strconv.FormatInt(time.Now().UnixNano()&0xffffffff, 36), stateKey: make([]byte, 32)}
	_, _ = rand.Read(s.stateKey)
	if opts.Logger != nil {
		s.log = *opts.Logger
	} else {
		s.log = zerolog.Nop()
	}
	s.metrics = opts.Metrics
	if s.metrics == nil {
		s.metrics = metrics.New(info.Name)
	}
	s.notifier = opts.Notifier
	if s.notifier == nil {
		s.notifier = NewNotifier()
	}
	s.notifier.watch = s.watch
	s.budget = budget.New(opts.Limits)
	s.serverInfo, _ = json.Marshal(struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{info.Name, info.Version})

	known := map[string]bool{}
	for i := range tools {
		t := tools[i]
		if known[t.Name] {
			return nil, fmt.Errorf("tool %q registered twice", t.Name)
		}
		known[t.Name] = true
	}
	s.toolNames = known
	for _, list := range [][]string{opts.Include, opts.Exclude} {
		for _, n := range list {
			if !known[n] {
				return nil, fmt.Errorf("%q is not a tool of %s (tools: %s)", n, info.Name, joinSorted(known))
			}
		}
	}
	include, exclude := setOf(opts.Include), setOf(opts.Exclude)
	for i := range tools {
		t := tools[i]
		if (opts.ReadOnly && !t.ReadOnly()) || (len(include) > 0 && !include[t.Name]) || exclude[t.Name] {
			continue
		}
		schema, err := validate.Compile(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		var output *validate.Schema
		if len(t.OutputSchema) > 0 {
			if output, err = validate.Compile(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("tool %q: output schema: %w", t.Name, err)
			}
		}
		r := &registered{Tool: t, schema: schema, output: output}
		if t.MaxConcurrent > 0 {
			r.slots = make(chan struct{}, t.MaxConcurrent)
		}
		s.tools = append(s.tools, r)
		s.byName[t.Name] = r
		s.metrics.Register(t.Name)
	}
	if len(s.tools) == 0 {
		return nil, errors.New("no tools left to serve after --read-only/--tools/--exclude-tools")
	}
	// A resource whose whole tool family is not served (--tools,
	// --exclude-tools, --read-only) is not served either: it shows what
	// those tools read or change.
	servedFamily := func(family []string) bool {
		if len(family) == 0 {
			return true
		}
		for _, t := range family {
			if s.byName[t] != nil {
				return true
			}
		}
		return false
	}
	names := map[string]bool{}
	for i := range opts.Resources {
		r := opts.Resources[i]
		if err := r.check(); err != nil {
			return nil, err
		}
		if !servedFamily(r.Tools) {
			continue
		}
		if s.byURI[r.URI] != nil || names[r.Name] {
			return nil, fmt.Errorf("resource %q registered twice", r.URI)
		}
		names[r.Name] = true
		s.byURI[r.URI] = &r
		s.resources = append(s.resources, &r)
	}
	for i := range opts.Templates {
		t := opts.Templates[i]
		if err := t.check(); err != nil {
			return nil, err
		}
		if names[t.Name] {
			return nil, fmt.Errorf("resource name %q registered twice", t.Name)
		}
		names[t.Name] = true
		if servedFamily(t.Tools) {
			s.templates = append(s.templates, &t)
		}
	}
	return s, nil
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}

func joinSorted(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	b, _ := json.Marshal(out)
	return string(b)
}

// Metrics returns the server's metrics registry.
func (s *Server) Metrics() *metrics.Registry { return s.metrics }

// Notifier returns the server's notifier.
func (s *Server) Notifier() *Notifier { return s.notifier }

// ToolNames lists the served tools, sorted.
func (s *Server) ToolNames() []string {
	out := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// EffectiveTools lists the served tools agent may call: under a policy its
// grants on this server, else every served tool.
func (s *Server) EffectiveTools(agent string) []string {
	out := []string{}
	for _, name := range s.ToolNames() {
		if s.allowed(agent, name) {
			out = append(out, name)
		}
	}
	return out
}

// hasResources: the resources capability is declared only when there are.
func (s *Server) hasResources() bool { return len(s.resources)+len(s.templates) > 0 }

// allowed applies the policy to an agent.
func (s *Server) allowed(agent, tool string) bool {
	return s.opts.Policy == nil || s.opts.Policy.Allowed(agent, tool)
}

func (s *Server) allowedResource(agent, name string, family []string) bool {
	return s.opts.Policy == nil || s.opts.Policy.AllowedResource(agent, name, family)
}

// lookupResource finds the definition serving uri, static first.
func (s *Server) lookupResource(uri string) (name string, family []string, read ReadFunc, timeout time.Duration, vars map[string]string, tmpl *ResourceTemplate, ok bool) {
	if r := s.byURI[uri]; r != nil {
		return r.Name, r.Tools, r.Read, r.Timeout, map[string]string{}, nil, true
	}
	for _, t := range s.templates {
		if v, ok := t.match(uri); ok {
			return t.Name, t.Tools, t.Read, t.Timeout, v, t, true
		}
	}
	return "", nil, nil, 0, nil, nil, false
}

func (s *Server) countDropped(n int) {
	s.metrics.Count("notifications_dropped", "Notifications dropped because a client did not keep up.", uint64(n))
	s.log.Warn().Int("dropped", n).Msg("a client is not keeping up: notifications dropped")
}

func (s *Server) grace() time.Duration {
	if s.opts.Grace > 0 {
		return s.opts.Grace
	}
	return 10 * time.Second
}

func (s *Server) correlationID() string {
	return s.idBase + "-" + strconv.FormatUint(s.seq.Add(1), 36)
}

// watchSet holds the stop functions of template watches, by URI.
type watchSet struct {
	mu    sync.Mutex
	stops map[string]func()
}

// watch starts (on) or stops a resource template's watch of uri; the
// notifier calls it for a URI's first and last subscriber.
func (s *Server) watch(uri string, on bool) error {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	if !on {
		if stop := s.watches.stops[uri]; stop != nil {
			delete(s.watches.stops, uri)
			stop()
		}
		return nil
	}
	_, _, _, _, vars, tmpl, ok := s.lookupResource(uri)
	if !ok || tmpl == nil || tmpl.Watch == nil {
		return nil
	}
	stop, err := tmpl.Watch(uri, vars)
	if err != nil {
		return err
	}
	if s.watches.stops == nil {
		s.watches.stops = map[string]func(){}
	}
	if stop != nil {
		s.watches.stops[uri] = stop
	}
	return nil
}

// StopWatches ends every watch (at shutdown).
func (s *Server) StopWatches() {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	for uri, stop := range s.watches.stops {
		stop()
		delete(s.watches.stops, uri)
	}
}
