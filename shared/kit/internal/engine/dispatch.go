package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// request is one JSON-RPC request being served, whatever its transport.
type request struct {
	sess   *session
	id     []byte
	method string
	p      reqParams
	// meta is params._meta, read by serve unless the transport has read it
	// already (streamable HTTP routes by it).
	meta *reqMeta
	// reply sends a message tied to this request before its response: a
	// progress or log notification, a request to the client. Streamable
	// HTTP turns the response into an event stream for it.
	reply func([]byte) error
	// modernByHeader: the HTTP header named protocol 2026-07-28.
	modernByHeader bool
	// size is the message's length, for the audit line.
	size int
	// blocking, when set, is called before the pipeline waits (for a call
	// slot): the stdio transport then lets another goroutine read on.
	blocking func()
}

// reqParams are the members of params any method reads, decoded in one pass.
type reqParams struct {
	Name           string
	Arguments      []byte
	URI            string
	Cursor         string
	Level          string
	Version        string // initialize's protocolVersion
	Capabilities   []byte
	ClientInfo     []byte
	InputResponses []byte
	RequestState   string
	Notifications  []byte
	RequestID      []byte // notifications/cancelled
	Meta           []byte
}

// reqMeta is what the kit reads of params._meta.
type reqMeta struct {
	progressToken []byte
	// modern: the request declared protocol 2026-07-28 or later.
	modern     bool
	version    string
	caps       clientCaps
	hasCaps    bool
	clientInfo []byte
	logLevel   int // -1: none
	problem    string
}

func parseParams(raw []byte) (reqParams, error) {
	var p reqParams
	if raw == nil {
		return p, nil
	}
	if raw[0] != '{' {
		return p, fmt.Errorf("params must be an object")
	}
	err := wire.Members(raw, func(k string, v []byte) error {
		str := func(dst *string) error {
			s, err := wire.String(v)
			if err != nil {
				return fmt.Errorf("params.%s must be a string", k)
			}
			*dst = s
			return nil
		}
		obj := func(dst *[]byte) error {
			if v[0] != '{' {
				return fmt.Errorf("params.%s must be an object", k)
			}
			*dst = v
			return nil
		}
		switch k {
		case "name":
			return str(&p.Name)
		case "arguments":
			if string(v) == "null" {
				return nil
			}
			return obj(&p.Arguments)
		case "uri":
			return str(&p.URI)
		case "cursor":
			return str(&p.Cursor)
		case "level":
			return str(&p.Level)
		case "protocolVersion":
			return str(&p.Version)
		case "capabilities":
			return obj(&p.Capabilities)
		case "clientInfo":
			return obj(&p.ClientInfo)
		case "inputResponses":
			return obj(&p.InputResponses)
		case "requestState":
			return str(&p.RequestState)
		case "notifications":
			return obj(&p.Notifications)
		case "requestId":
			p.RequestID = v
		case "_meta":
			if string(v) == "null" {
				return nil
			}
			return obj(&p.Meta)
		}
		return nil
	})
	return p, err
}

// Keys of _meta defined by protocol 2026-07-28.
const (
	metaVersion    = "io.modelcontextprotocol/protocolVersion"
	metaCaps       = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo = "io.modelcontextprotocol/clientInfo"
	metaLogLevel   = "io.modelcontextprotocol/logLevel"
	metaServerInfo = "io.modelcontextprotocol/serverInfo"
	metaSubID      = "io.modelcontextprotocol/subscriptionId"
)

func parseMeta(raw []byte) reqMeta {
	m := reqMeta{logLevel: -1}
	if raw == nil {
		return m
	}
	var capsRaw []byte
	_ = wire.Members(raw, func(k string, v []byte) error {
		switch k {
		case "progressToken":
			if len(v) > 0 && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
				m.progressToken = v
			}
		case metaVersion:
			if s, err := wire.String(v); err == nil {
				m.version = s
			}
		case metaCaps:
			capsRaw = v
		case metaClientInfo:
			m.clientInfo = v
		case metaLogLevel:
			if s, err := wire.String(v); err == nil {
				m.logLevel = levelIndex(s)
			}
		}
		return nil
	})
	m.modern = mcp.IsModernProtocol(m.version)
	if m.modern {
		if capsRaw == nil || capsRaw[0] != '{' || json.Unmarshal(capsRaw, &m.caps) != nil {
			m.problem = "missing or invalid _meta field " + metaCaps
		} else {
			m.hasCaps = true
		}
	}
	return m
}

// The log levels of notifications/message, lowest first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelIndex(s string) int {
	for i, l := range logLevels {
		if l == s {
			return i
		}
	}
	return -1
}

// legacyVersions are the protocol versions initialize can negotiate, newest first.
var legacyVersions = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326, mcp.ProtocolVersion20241105}

// removedInModern are the methods protocol 2026-07-28 removed.
var removedInModern = map[string]bool{"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true}

// reply is a response being built; after, when set, runs once the response
// has been written (the audit line and metrics, off the client's path).
type reply struct {
	body  []byte
	after func()
	// status is the HTTP status a stateless (2026-07-28) answer carries.
	status int
	// recycle: body is a result buffer (resultBuf) that nothing keeps once
	// it is written.
	recycle bool
}

// done hands a recyclable body back once the transport has written it (a
// copy or a write that has returned); the reply must not be used after.
func (r *reply) done() {
	if r.recycle && cap(r.body) <= maxPooledBuf {
		b := r.body[:0]
		resultBufs.Put(&b)
	}
	r.body, r.recycle = nil, false
}

func (s *Server) fail(r *request, code int, msg string, data []byte) reply {
	status := http.StatusOK
	if r.meta.modern || r.modernByHeader {
		status = modernStatus(code)
	}
	return reply{body: wire.AppendError(nil, r.id, code, msg, data), status: status}
}

// modernStatus maps a JSON-RPC error code to the HTTP status protocol
// 2026-07-28 prescribes for it.
func modernStatus(code int) int {
	switch code {
	case wire.CodeMethodNotFound:
		return http.StatusNotFound
	case wire.CodeHeaderMismatch, wire.CodeMissingCapability, wire.CodeUnsupportedVersion,
		wire.CodeInvalidRequest, wire.CodeInvalidParams, wire.CodeParseError:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// ok wraps a result object, adding what protocol 2026-07-28 requires of
// every result (resultType, the server's identity) and of list and read
// results (caching hints).
func (s *Server) ok(r *request, result []byte, cacheable bool) reply {
	if r.meta.modern {
		result = s.decorate(result, "complete", cacheable, nil)
	}
	return reply{body: wire.AppendResult(nil, r.id, result), status: http.StatusOK}
}

// decorate inserts resultType, _meta (server identity, and extra meta
// members) and, for cacheable results, ttlMs and cacheScope into a result
// object. Results are cached privately with no freshness: they depend on the
// caller's identity, and the servers' state changes at any time.
func (s *Server) decorate(result []byte, resultType string, cacheable bool, extraMeta []byte) []byte {
	out := make([]byte, 0, len(result)+160)
	out = append(out, `{"resultType":"`...)
	out = append(out, resultType...)
	out = append(out, `","_meta":{"`+metaServerInfo+`":`...)
	out = append(out, s.serverInfo...)
	if extraMeta != nil {
		out = append(out, ',')
		out = append(out, extraMeta...)
	}
	out = append(out, '}')
	if cacheable {
		out = append(out, `,"ttlMs":0,"cacheScope":"private"`...)
	}
	if body := result[1:]; len(body) > 0 && body[0] != '}' {
		out = append(out, ',')
	}
	return append(out, result[1:]...)
}

// serve answers one request. It never panics on input and always returns
// the answer's bytes (nil only for a stream whose client has gone).
func (s *Server) serve(ctx context.Context, r *request) reply {
	if r.meta == nil {
		m := parseMeta(r.p.Meta)
		r.meta = &m
	}
	if r.modernByHeader && !r.meta.modern {
		// Over HTTP the header and _meta must name the same version; the
		// transport checked the header, so a body without it is malformed.
		return s.fail(r, wire.CodeInvalidParams, "missing or invalid _meta field "+metaVersion, nil)
	}
	if r.meta.modern {
		if !mcp.IsValidProtocolVersion(r.meta.version) {
			return s.unsupportedVersion(r)
		}
		if r.meta.problem != "" {
			return s.fail(r, wire.CodeInvalidParams, r.meta.problem, nil)
		}
		if removedInModern[r.method] {
			return s.fail(r, wire.CodeMethodNotFound, fmt.Sprintf("%q was removed in protocol version %s", r.method, mcp.ProtocolVersion20260728), nil)
		}
	} else if r.sess.via != overStateless && !r.sess.initialized.Load() {
		switch r.method {
		case "initialize", "ping", "server/discover":
		default:
			return s.fail(r, wire.CodeInvalidRequest, "server not initialized: send initialize before "+wire.Truncate(r.method, 64), nil)
		}
	}
	switch r.method {
	case "initialize":
		return s.initialize(r)
	case "ping":
		return s.ok(r, []byte(`{}`), false)
	case "server/discover":
		return s.discover(r)
	case "tools/list":
		return s.listTools(r)
	case "tools/call":
		return s.callTool(ctx, r)
	case "prompts/list":
		return s.listPrompts(r)
	case "prompts/get":
		return s.getPrompt(r)
	case "resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe":
		if !s.hasResources() {
			return s.fail(r, wire.CodeMethodNotFound, "this server has no resources", nil)
		}
		switch r.method {
		case "resources/list":
			return s.listResources(ctx, r)
		case "resources/templates/list":
			return s.listTemplates(r)
		case "resources/read":
			return s.readResource(ctx, r)
		case "resources/subscribe":
			return s.subscribe(r)
		default:
			return s.unsubscribe(r)
		}
	case "logging/setLevel":
		return s.setLevel(r)
	case "subscriptions/listen":
		if !r.meta.modern {
			return s.fail(r, wire.CodeMethodNotFound, "subscriptions/listen needs protocol version "+mcp.ProtocolVersion20260728, nil)
		}
		return s.listen(ctx, r)
	}
	return s.fail(r, wire.CodeMethodNotFound, "Method "+wire.Truncate(r.method, 64)+" not found", nil)
}

func (s *Server) unsupportedVersion(r *request) reply {
	data, _ := json.Marshal(map[string]any{"supported": mcp.ValidProtocolVersions, "requested": wire.Truncate(r.meta.version, 64)})
	return s.fail(r, wire.CodeUnsupportedVersion, fmt.Sprintf("unsupported protocol version %q (supported: %s)",
		wire.Truncate(r.meta.version, 64), strings.Join(mcp.ValidProtocolVersions, ", ")), data)
}

// capabilities is the server's capabilities object.
func (s *Server) capabilities() []byte {
	caps := `{"tools":{},"prompts":{},"logging":{}`
	if s.hasResources() {
		caps += `,"resources":{"subscribe":true,"listChanged":true}`
	}
	return []byte(caps + "}")
}

func (s *Server) initialize(r *request) reply {
	version := mcp.LATEST_LEGACY_PROTOCOL_VERSION
	for _, v := range legacyVersions {
		if v == r.p.Version {
			version = v
		}
	}
	var caps clientCaps
	if r.p.Capabilities != nil {
		_ = json.Unmarshal(r.p.Capabilities, &caps)
	}
	se := r.sess
	se.mu.Lock()
	se.caps = caps
	se.mu.Unlock()
	se.initialized.Store(true)
	out := []byte(`{"protocolVersion":`)
	out = jsontext.AppendString(out, version)
	out = append(out, `,"capabilities":`...)
	out = append(out, s.capabilities()...)
	out = append(out, `,"serverInfo":`...)
	out = append(out, s.serverInfo...)
	if text := s.instructionsFor(r.sess.agent); text != "" {
		out = append(out, `,"instructions":`...)
		out = jsontext.AppendString(out, text)
	}
	return s.ok(r, append(out, '}'), false)
}

func (s *Server) discover(r *request) reply {
	versions, _ := json.Marshal(mcp.ValidProtocolVersions)
	out := append([]byte(`{"supportedVersions":`), versions...)
	out = append(out, `,"capabilities":`...)
	out = append(out, s.capabilities()...)
	out = append(out, `,"serverInfo":`...)
	out = append(out, s.serverInfo...)
	if text := s.instructionsFor(r.sess.agent); text != "" {
		out = append(out, `,"instructions":`...)
		out = jsontext.AppendString(out, text)
	}
	return s.ok(r, append(out, '}'), true)
}

func (s *Server) listTools(r *request) reply {
	out := append(make([]byte, 0, 4096), `{"tools":[`...)
	first := true
	for _, t := range s.tools {
		if !s.allowed(r.sess.agent, t.Name) {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, t.Def...)
	}
	return s.ok(r, append(out, "]}"...), true)
}

func (s *Server) setLevel(r *request) reply {
	i := levelIndex(r.p.Level)
	if i < 0 {
		return s.fail(r, wire.CodeInvalidParams, "level must be one of "+strings.Join(logLevels, ", "), nil)
	}
	r.sess.mu.Lock()
	r.sess.level = i
	r.sess.mu.Unlock()
	return s.ok(r, []byte(`{}`), false)
}

// notification handles a message without an id; it is never answered.
func (s *Server) notification(se *session, m wire.Message) {
	switch m.Method {
	case "notifications/cancelled":
		p, err := parseParams(m.Params)
		if err == nil && p.RequestID != nil {
			se.cancel(p.RequestID)
		}
	case "notifications/initialized":
		se.initialized.Store(true)
	case "notifications/roots/list_changed":
		se.roots.invalidate()
	}
}

// Handle serves one JSON-RPC request outside any transport, as an
// initialized session of agent would, and returns the response. Tests and
// generators use it (for example to snapshot tools/list).
func (s *Server) Handle(ctx context.Context, agent string, msg []byte) []byte {
	m, err := wire.Parse(msg)
	if err != nil {
		return wire.AppendError(nil, nil, wire.CodeParseError, "Parse error: "+err.Error(), nil)
	}
	if m.Kind != wire.Request {
		return wire.AppendError(nil, m.ID, wire.CodeInvalidRequest, "Invalid request: "+m.Problem, nil)
	}
	p, err := parseParams(m.Params)
	if err != nil {
		return wire.AppendError(nil, m.ID, wire.CodeInvalidParams, err.Error(), nil)
	}
	se := s.newSession("handle", agent, overStateless)
	defer se.close()
	se.initialized.Store(true)
	discard := func([]byte) error { return nil }
	rep := s.serve(ctx, &request{sess: se, id: m.ID, method: m.Method, p: p, size: len(msg), reply: discard})
	if rep.after != nil {
		rep.after()
	}
	return rep.body
}
