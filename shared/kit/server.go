// Package kit is the server kit every mcp-fleet server runs on: it registers
// a server's tools with mcp-go and puts one pipeline in front of every call —
// ACL, rate limit, JSON Schema validation, timeout, panic recovery, error
// mapping, audit log and metrics — then serves it over stdio or streamable
// HTTP. A server's main only builds its tools and calls Main.
package kit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/untrusted"
	"github.com/mcp-fleet/mcp-fleet/shared/validate"
	"github.com/rs/zerolog"
)

// Info names a server.
type Info struct {
	Name         string // short name: "devtools"
	Version      string
	Commit       string
	Instructions string // sent to clients on initialize
}

// Options are the kit's settings for one server; Main fills them from flags
// and environment, tests set them directly.
type Options struct {
	// Policy, when set, is enforced: only the tools it grants the caller's
	// agent are listed and callable.
	Policy *acl.Policy
	// ReadOnly drops every tool whose Effect is not ReadOnly.
	ReadOnly bool
	// Include, when non-empty, keeps only these tools; Exclude drops tools.
	Include, Exclude []string
	// DefaultTimeout bounds a call whose tool sets no Timeout.
	DefaultTimeout time.Duration
	Limiter        *ratelimit.Limiter
	Logger         *zerolog.Logger
	Redactor       *logging.Redactor
	Metrics        *metrics.Registry
}

// Server is a configured MCP server: mcp-go underneath, the kit's pipeline
// in front of every tool.
type Server struct {
	info    Info
	opts    Options
	mcp     *server.MCPServer
	tools   []*registered
	byName  map[string]*registered
	log     zerolog.Logger
	metrics *metrics.Registry
	seq     atomic.Uint64
	idBase  string
	// unregistered is told when mcp-go drops a session (an SSE stream
	// closed, a streamable session swept), so the HTTP side frees its slot.
	unregistered atomic.Pointer[func(id string)]
}

type registered struct {
	Tool
	schema *validate.Schema
}

// New checks and registers tools. Any malformed tool, unknown name in
// Include/Exclude, or duplicate is an error.
func New(info Info, tools []Tool, opts Options) (*Server, error) {
	if info.Name == "" {
		return nil, errors.New("kit: server name is required")
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = 60 * time.Second
	}
	s := &Server{info: info, opts: opts, byName: map[string]*registered{},
		idBase: strconv.FormatInt(time.Now().UnixNano()&0xffffffff, 36)}
	if opts.Logger != nil {
		s.log = *opts.Logger
	} else {
		s.log = zerolog.Nop()
	}
	s.metrics = opts.Metrics
	if s.metrics == nil {
		s.metrics = metrics.New(info.Name)
	}
	known := map[string]bool{}
	for i := range tools {
		t := tools[i]
		if err := t.check(); err != nil {
			return nil, err
		}
		if known[t.Name] {
			return nil, fmt.Errorf("kit: tool %q registered twice", t.Name)
		}
		known[t.Name] = true
	}
	for _, list := range [][]string{opts.Include, opts.Exclude} {
		for _, n := range list {
			if !known[n] {
				return nil, fmt.Errorf("kit: --tools/--exclude-tools name %q is not a tool of %s", n, info.Name)
			}
		}
	}
	include := setOf(opts.Include)
	exclude := setOf(opts.Exclude)

	hooks := &server.Hooks{}
	hooks.AddOnRequestInitialization(s.refuseBeforeInitialize)
	hooks.AddAfterListTools(s.filterListed)
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		if fn := s.unregistered.Load(); fn != nil {
			(*fn)(sess.SessionID())
		}
	})
	s.mcp = server.NewMCPServer(info.Name, info.Version,
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithInstructions(info.Instructions),
		server.WithHooks(hooks),
	)
	for i := range tools {
		t := tools[i]
		if opts.ReadOnly && t.Effect != ReadOnly {
			continue
		}
		if len(include) > 0 && !include[t.Name] {
			continue
		}
		if exclude[t.Name] {
			continue
		}
		schema, err := validate.Compile(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("kit: tool %q: %w", t.Name, err)
		}
		r := &registered{Tool: t, schema: schema}
		s.tools = append(s.tools, r)
		s.byName[t.Name] = r
		s.metrics.Register(t.Name)
		s.mcp.AddTool(t.Definition(), s.pipeline(r))
	}
	if len(s.tools) == 0 {
		return nil, fmt.Errorf("kit: no tools left to serve after --read-only/--tools/--exclude-tools")
	}
	s.addDescriptionsPrompt()
	return s, nil
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}

// MCP returns the underlying mcp-go server (for in-process clients).
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Metrics returns the server's metrics registry.
func (s *Server) Metrics() *metrics.Registry { return s.metrics }

// Info returns the server's identity.
func (s *Server) Info() Info { return s.info }

// ToolNames lists the served tools, sorted.
func (s *Server) ToolNames() []string {
	out := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// allowed applies the policy to the agent carried by ctx.
func (s *Server) allowed(ctx context.Context, tool string) bool {
	if s.opts.Policy == nil {
		return true
	}
	return s.opts.Policy.Allowed(AgentFrom(ctx), tool)
}

// filterListed hides the tools the caller's agent may not call. It is a hook
// rather than a server.ToolFilter because mcp-go's filters also answer
// tools/call with "not found", while a denied call must say PERMISSION_DENIED.
func (s *Server) filterListed(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
	if s.opts.Policy == nil || res == nil {
		return
	}
	kept := res.Tools[:0]
	for _, t := range res.Tools {
		if s.allowed(ctx, t.Name) {
			kept = append(kept, t)
		}
	}
	res.Tools = kept
}

// refuseBeforeInitialize enforces the handshake on stdio, where mcp-go would
// otherwise answer tools/call before initialize. (Over HTTP a request without
// an initialized session id never reaches the server.)
func (s *Server) refuseBeforeInitialize(ctx context.Context, _ any, message any) error {
	if !isStdio(ctx) {
		return nil
	}
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || sess.Initialized() {
		return nil
	}
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	switch m.Method {
	case "initialize", "ping", "server/discover":
		return nil
	}
	// Protocol 2026-07-28 removed the handshake; such requests carry their
	// version in _meta and are served without one.
	if m.Params.Meta != nil && mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
		return nil
	}
	return fmt.Errorf("server not initialized: send initialize before %s", m.Method)
}

// auditArgLimit caps each string in the audit log: file contents and message
// bodies are arguments too, and logs are not a place for them.
const auditArgLimit = 256

func (s *Server) pipeline(t *registered) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		start := time.Now()
		agent := AgentFrom(ctx)
		cid := s.idBase + "-" + strconv.FormatUint(s.seq.Add(1), 36)
		raw := rawArgs(req)
		// Decode once: validation and the audit line share the value.
		args, decodeErr := validate.Decode(raw)
		log := s.log.With().Str("correlation_id", cid).Str("tool", t.Name).Str("agent", agent).Logger()
		var failure *mcperr.Error
		defer func() {
			if p := recover(); p != nil {
				log.Error().Str("panic", fmt.Sprint(p)).Bytes("stack", debug.Stack()).Msg("tool handler panicked")
				failure = mcperr.New(mcperr.Internal, "internal error")
				res = errorResult(failure)
			}
			d := time.Since(start)
			code := mcperr.Code("")
			if failure != nil {
				code = failure.Code
			}
			s.metrics.Observe(t.Name, d, code)
			s.audit(&log, t.AuditOmit, raw, args, d, failure)
		}()

		if decodeErr != nil {
			args = nil // nothing trustworthy to audit
			failure = validate.DecodeError(decodeErr)
			return errorResult(failure), nil
		}
		if !s.allowed(ctx, t.Name) {
			failure = mcperr.New(mcperr.PermissionDeny, "agent %q may not call %s", agent, t.Name)
			return errorResult(failure), nil
		}
		if ok, wait := s.opts.Limiter.Allow(agent, t.Name); !ok {
			failure = mcperr.New(mcperr.RateLimit, "rate limit for %s exceeded; retry in %s", t.Name, wait.Round(time.Millisecond))
			failure.RetryAfter = wait
			return errorResult(failure), nil
		}
		if verr := t.schema.CheckValue(args); verr != nil {
			failure = verr
			return errorResult(failure), nil
		}
		timeout := t.Timeout
		if timeout <= 0 {
			timeout = s.opts.DefaultTimeout
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		call := &Call{Tool: t.Name, Agent: agent, Args: raw, Log: &log, req: req, srv: s.mcp}
		out, err := t.Handler(withCorrelation(cctx, cid), call)
		if err != nil {
			failure = s.classify(cctx, ctx, err, timeout)
			if failure.Code == mcperr.Internal {
				log.Error().Err(s.redactErr(err)).Msg("tool failed with an internal error")
			}
			return errorResult(failure), nil
		}
		if r, ok := out.(*mcp.CallToolResult); ok {
			return r, nil
		}
		return successResult(out)
	}
}

// classify maps a handler error. A deadline hit by our own per-tool timeout
// is reported with the limit; a client's cancellation is CANCELLED.
func (s *Server) classify(cctx, parent context.Context, err error, timeout time.Duration) *mcperr.Error {
	var e *mcperr.Error
	if errors.As(err, &e) {
		return e
	}
	if cctx.Err() == context.DeadlineExceeded && parent.Err() == nil {
		return mcperr.New(mcperr.Timeout, "the call did not finish within its %s time limit", timeout).WithCause(err)
	}
	if parent.Err() != nil {
		return mcperr.New(mcperr.Cancelled, "the request was cancelled by the client").WithCause(err)
	}
	return mcperr.Wrap(err)
}

func (s *Server) redactErr(err error) error {
	if s.opts.Redactor == nil {
		return err
	}
	return errors.New(s.opts.Redactor.String(err.Error()))
}

func (s *Server) audit(log *zerolog.Logger, omit []string, raw json.RawMessage, args any, d time.Duration, failure *mcperr.Error) {
	ev := log.Info()
	if failure != nil {
		ev = log.Warn().Str("error_code", string(failure.Code))
	}
	if !ev.Enabled() {
		return
	}
	if args != nil {
		if needsRewrite(args) || hasAny(args, omit) {
			// Secret-named keys, long strings and omitted arguments are
			// rewritten; secret values anywhere are masked by the log writer.
			v := s.opts.Redactor.Value(args)
			if m, ok := v.(map[string]any); ok {
				for _, k := range omit {
					if val, ok := m[k]; ok {
						m[k] = omittedNote(val)
					}
				}
			}
			if b, err := json.Marshal(truncateStrings(v)); err == nil {
				ev = ev.RawJSON("args", b)
			}
		} else if len(raw) > 0 {
			var buf bytes.Buffer
			if json.Compact(&buf, raw) == nil {
				ev = ev.RawJSON("args", buf.Bytes())
			}
		}
	}
	outcome := "ok"
	if failure != nil {
		outcome = "error"
	}
	ev.Str("event", "tool_call").Str("outcome", outcome).Dur("duration", d).Msg("tool call")
}

func hasAny(args any, keys []string) bool {
	m, ok := args.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// omittedNote stands in for an omitted argument: its size, not its content.
func omittedNote(v any) string {
	if s, ok := v.(string); ok {
		return "[omitted: " + strconv.Itoa(len(s)) + " bytes]"
	}
	b, _ := json.Marshal(v)
	return "[omitted: " + strconv.Itoa(len(b)) + " bytes of JSON]"
}

// needsRewrite reports whether decoded arguments hold a secret-named key or
// a string too long for a log line.
func needsRewrite(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if logging.IsSecretKey(k) || needsRewrite(val) {
				return true
			}
		}
	case []any:
		for _, val := range t {
			if needsRewrite(val) {
				return true
			}
		}
	case string:
		if len(t) > auditArgLimit {
			return true
		}
		_, secretURL := logging.RedactURL(t)
		return secretURL
	}
	return false
}

func truncateStrings(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			t[k] = truncateStrings(val)
		}
	case []any:
		for i, val := range t {
			t[i] = truncateStrings(val)
		}
	case string:
		if len(t) > auditArgLimit {
			cut := auditArgLimit
			for cut > 0 && !utf8.RuneStart(t[cut]) {
				cut--
			}
			return t[:cut] + "…(" + strconv.Itoa(len(t)) + " bytes)"
		}
	}
	return v
}

func rawArgs(req mcp.CallToolRequest) json.RawMessage {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments
	}
	if req.Params.Arguments == nil {
		return nil
	}
	if r, ok := req.Params.Arguments.(json.RawMessage); ok {
		return r
	}
	b, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return nil
	}
	return b
}

func errorResult(e *mcperr.Error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(e.JSON()))},
		StructuredContent: e.Body(),
		IsError:           true,
	}
}

func successResult(v any) (*mcp.CallToolResult, error) {
	if u, ok := v.(Untrusted); ok {
		return untrustedResult(u)
	}
	if s, ok := v.(string); ok {
		return mcp.NewToolResultText(s), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		e := mcperr.New(mcperr.Internal, "internal error: result could not be encoded")
		return errorResult(e), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(b))},
		StructuredContent: json.RawMessage(b),
	}, nil
}

// Untrusted is a handler result that carries content from outside (a web
// page, a mail body, rows anyone may have written). Its text part reaches the
// model fenced as data (package untrusted); structuredContent carries Value
// plain, for programs. Value is encoded once for both.
type Untrusted struct {
	// Source says where the content came from: a URL, "mail", "rows of t".
	Source string
	// Value is the result: a string (sent as text only) or a JSON value.
	Value any
}

func untrustedResult(u Untrusted) (*mcp.CallToolResult, error) {
	if s, ok := u.Value.(string); ok {
		return mcp.NewToolResultText(untrusted.Fence(u.Source, s)), nil
	}
	b, err := json.Marshal(u.Value)
	if err != nil {
		return errorResult(mcperr.New(mcperr.Internal, "internal error: result could not be encoded")), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(untrusted.Fence(u.Source, string(b)))},
		StructuredContent: json.RawMessage(b),
	}, nil
}
