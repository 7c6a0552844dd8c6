package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

const headerSessionID = "Mcp-Session-Id"

// keepAlive is how often an idle event stream gets a comment.
const keepAlive = 25 * time.Second

// mcp serves the streamable HTTP endpoint.
func (f *httpFrontend) mcp(w http.ResponseWriter, r *http.Request) {
	modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	switch {
	case r.Method == http.MethodPost:
		f.post(w, r)
	case modern && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		w.Header().Set("Allow", http.MethodPost)
		writeHTTPError(w, http.StatusMethodNotAllowed, r.Method+" is not part of protocol version "+mcp.ProtocolVersion20260728+
			": server-to-client messages use subscriptions/listen")
	case r.Method == http.MethodGet:
		f.get(w, r)
	case r.Method == http.MethodDelete:
		f.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeHTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// readBody reads a POST body within the message cap and the byte budget,
// into one buffer of its exact size when the length is known. It answers
// the client itself and returns nil when it refuses the body.
func (f *httpFrontend) readBody(w http.ResponseWriter, r *http.Request, sb *budget.Session) ([]byte, func()) {
	limit := f.s.budget.Limits.MaxMessageBytes
	if r.ContentLength > limit {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, wire.CodeInvalidRequest,
			fmt.Sprintf("request body larger than %d bytes", limit))
		return nil, nil
	}
	var release func()
	if r.ContentLength > 0 {
		if release = f.s.budget.AcquireBytes(sb, r.ContentLength); release == nil {
			f.busy(w)
			return nil, nil
		}
	}
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	if err != nil {
		if release != nil {
			release()
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, wire.CodeInvalidRequest,
				fmt.Sprintf("request body larger than %d bytes", limit))
		} else {
			writeRPCError(w, http.StatusBadRequest, nil, wire.CodeParseError, "could not read the request body")
		}
		return nil, nil
	}
	if release == nil {
		if release = f.s.budget.AcquireBytes(sb, int64(len(body))); release == nil {
			f.busy(w)
			return nil, nil
		}
	}
	return body, release
}

// busy refuses a message for lack of budget: retry shortly.
func (f *httpFrontend) busy(w http.ResponseWriter) {
	f.s.metrics.Count("messages_refused", "Messages refused because the in-flight byte budget was spent.", 1)
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusServiceUnavailable, busyError(nil))
}

// jsonContent refuses, with 415, a POST whose body is not declared
// application/json: a POST carries one JSON-RPC message as application/json
// (the transports' rule, which every MCP client follows), and anything else
// — no Content-Type included — is refused before the body is read.
func jsonContent(w http.ResponseWriter, r *http.Request) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeRPCError(w, http.StatusUnsupportedMediaType, nil, wire.CodeInvalidRequest, "Content-Type must be application/json")
			return false
		}
	}
	return true
}

func (f *httpFrontend) post(w http.ResponseWriter, r *http.Request) {
	if !jsonContent(w, r) {
		return
	}
	o := ownerOf(r.Context())
	hdrVersion := r.Header.Get(mcp.HeaderProtocolVersion)
	modernHdr := mcp.IsModernProtocol(hdrVersion)
	if !modernHdr && hdrVersion != "" && !mcp.IsValidProtocolVersion(hdrVersion) {
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, "unsupported protocol version "+strconv.Quote(wire.Truncate(hdrVersion, 64)))
		return
	}
	// A session id names the budget to charge; it is checked properly below.
	var hs *httpSession
	sid := r.Header.Get(headerSessionID)
	if sid != "" && !modernHdr {
		hs, _ = f.sessions.lookup(sid, o)
	}
	var sb *budget.Session
	if hs != nil {
		sb = hs.state.budget
	}
	body, release := f.readBody(w, r, sb)
	if body == nil {
		return
	}
	defer release()
	m, err := wire.Parse(body)
	switch {
	case errors.Is(err, wire.ErrBatch):
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, err.Error())
		return
	case err != nil:
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeParseError, "Parse error: "+err.Error())
		return
	case m.Kind == wire.Invalid && m.HasMethod && !m.HasID:
		w.WriteHeader(http.StatusAccepted) // a notification is never answered
		return
	case m.Kind == wire.Invalid:
		writeRPCError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidRequest, "Invalid request: "+m.Problem)
		return
	}
	p, perr := parseParams(m.Params)
	meta := reqMeta{logLevel: -1}
	if perr == nil {
		meta = parseMeta(p.Meta)
	}
	if modernHdr || meta.modern {
		f.postModern(w, r, m, p, perr, meta, body)
		return
	}
	if m.Method == "initialize" && m.Kind == wire.Request {
		f.initialize(w, r, m, p, perr, len(body))
		return
	}
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidRequest, "Mcp-Session-Id header is required: send initialize first")
		return
	}
	if hs == nil {
		writeRPCError(w, http.StatusNotFound, m.ID, wire.CodeInvalidRequest, "unknown, expired or terminated session")
		return
	}
	switch m.Kind {
	case wire.Notification:
		f.s.notification(hs.state, m)
		w.WriteHeader(http.StatusAccepted)
		return
	case wire.Response:
		hs.state.answer(m, body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if perr != nil {
		writeRPCError(w, http.StatusOK, m.ID, wire.CodeInvalidParams, perr.Error())
		return
	}
	f.serveRequest(w, r, hs.state, &request{sess: hs.state, id: m.ID, method: m.Method, p: p, meta: &meta, size: len(body)})
}

// initialize creates a session and answers initialize on it.
func (f *httpFrontend) initialize(w http.ResponseWriter, r *http.Request, m wire.Message, p reqParams, perr error, size int) {
	if perr != nil {
		writeRPCError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidParams, perr.Error())
		return
	}
	res := f.sessions.reserve()
	if res == nil {
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, m.ID, wire.CodeServerBusy,
			fmt.Sprintf("too many sessions (limit %d); close one or retry later", f.sessions.max))
		return
	}
	hs := f.sessions.create(r.Context(), overHTTP, res)
	rep := f.s.serve(r.Context(), &request{sess: hs.state, id: m.ID, method: m.Method, p: p, size: size})
	w.Header().Set(headerSessionID, hs.id)
	writeJSON(w, http.StatusOK, rep.body)
}

// postModern serves a request of protocol 2026-07-28: no session, the
// version in the header and in _meta, which must agree, and the method and
// name mirrored in headers.
func (f *httpFrontend) postModern(w http.ResponseWriter, r *http.Request, m wire.Message, p reqParams, perr error, meta reqMeta, body []byte) {
	hdr := r.Header.Get(mcp.HeaderProtocolVersion)
	bad := func(code int, msg string) { writeRPCError(w, modernStatus(code), m.ID, code, msg) }
	switch {
	case m.Kind == wire.Notification || m.Kind == wire.Response:
		w.WriteHeader(http.StatusAccepted)
		return
	case perr != nil:
		bad(wire.CodeInvalidParams, perr.Error())
		return
	case r.Header.Get(mcp.HeaderLastEventID) != "":
		bad(wire.CodeHeaderMismatch, "Last-Event-ID is not supported in protocol version "+mcp.ProtocolVersion20260728+": streams are not resumable; send the request again with a new id")
		return
	case hdr == "":
		bad(wire.CodeHeaderMismatch, mcp.HeaderProtocolVersion+" header is required for requests carrying "+metaVersion)
		return
	case meta.version == "":
		bad(wire.CodeInvalidParams, "missing or invalid _meta field "+metaVersion)
		return
	case hdr != meta.version:
		bad(wire.CodeHeaderMismatch, fmt.Sprintf("%s header %s does not match request %s %s", mcp.HeaderProtocolVersion,
			wire.Truncate(hdr, 64), metaVersion, wire.Truncate(meta.version, 64)))
		return
	}
	if err := checkStandardHeaders(r.Header, m.Method, p); err != nil {
		bad(wire.CodeHeaderMismatch, err.Error())
		return
	}
	se := f.s.newSession("", AgentFrom(r.Context()), overStateless)
	se.principal = PrincipalFrom(r.Context())
	defer se.close()
	f.serveRequest(w, r, se, &request{sess: se, id: m.ID, method: m.Method, p: p, meta: &meta, size: len(body), modernByHeader: true})
}

// checkStandardHeaders compares Mcp-Method and Mcp-Name with the body.
func checkStandardHeaders(h http.Header, method string, p reqParams) error {
	hm := h.Get(mcp.HeaderMethod)
	if hm == "" {
		return fmt.Errorf("%s: missing required header", mcp.HeaderMethod)
	}
	if hm != method {
		return fmt.Errorf("%s: header value %q does not match body value %q", mcp.HeaderMethod, wire.Truncate(hm, 64), wire.Truncate(method, 64))
	}
	if !mcp.MethodRequiresNameHeader(mcp.MCPMethod(method)) {
		return nil
	}
	hn := h.Get(mcp.HeaderName)
	if hn == "" {
		return fmt.Errorf("%s: missing required header for method %q", mcp.HeaderName, method)
	}
	decoded, ok := mcp.DecodeHeaderValue(hn)
	if !ok {
		return fmt.Errorf("%s: invalid Base64 encoding", mcp.HeaderName)
	}
	name := p.Name
	if method == "resources/read" {
		name = p.URI
	}
	if decoded != name {
		return fmt.Errorf("%s: header value %q does not match body value %q", mcp.HeaderName, wire.Truncate(decoded, 64), wire.Truncate(name, 64))
	}
	return nil
}

// serveRequest serves one request on a POST: a JSON response, or an event
// stream when the request sends anything before its response.
func (f *httpFrontend) serveRequest(w http.ResponseWriter, r *http.Request, se *session, req *request) {
	f.background.Add(1)
	defer f.background.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if req.method == "subscriptions/listen" {
		// A listen stream ends at shutdown; calls in flight finish.
		defer context.AfterFunc(f.closingCtx, cancel)()
	}
	fl, done := se.begin(req.id, cancel)
	es := newEventStream(w)
	defer es.close()
	req.reply = es.event
	rep := f.s.serve(ctx, req)
	done()
	cancelled := fl.cancelled.Load()
	switch {
	case es.isStarted():
		if rep.body != nil && !cancelled {
			_ = es.event(rep.body)
		}
	case cancelled || rep.body == nil:
		// A request is answered with JSON or an event stream: a cancelled
		// one gets a stream that ends without its answer.
		es.start()
	default:
		writeJSON(w, rep.status, rep.body)
	}
	// Both writes have returned: the body was copied or sent.
	rep.done()
	if rep.after != nil {
		rep.after()
	}
}

// get opens a session's stream of notifications (before 2026-07-28).
func (f *httpFrontend) get(w http.ResponseWriter, r *http.Request) {
	hs := f.ownSession(w, r)
	if hs == nil {
		return
	}
	f.sessions.mu.Lock()
	busy := hs.streams > 0
	if !busy {
		hs.streams++
	}
	f.sessions.mu.Unlock()
	if busy {
		writeRPCError(w, http.StatusConflict, nil, wire.CodeInvalidRequest, "this session already has an open stream")
		return
	}
	defer f.sessions.stream(hs, -1)
	es := newEventStream(w)
	defer es.close()
	es.start()
	f.drain(r.Context(), es, hs.state.out)
}

// drain writes an outbox to a stream until the client leaves, the session
// ends or the server shuts down, with a comment when idle.
func (f *httpFrontend) drain(ctx context.Context, es *eventStream, o *outbox) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(f.closingCtx, cancel)()
	for {
		wctx, wcancel := context.WithTimeout(ctx, keepAlive)
		msg, ok := o.next(wctx)
		wcancel()
		if ok {
			if es.event(msg) != nil {
				return
			}
			continue
		}
		if ctx.Err() != nil || o.isClosed() || es.comment() != nil {
			return
		}
	}
}

func (f *httpFrontend) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, "Mcp-Session-Id header is required")
		return
	}
	if !f.sessions.terminate(sid, ownerOf(r.Context())) {
		writeRPCError(w, http.StatusNotFound, nil, wire.CodeInvalidRequest, "unknown, expired or terminated session")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// ownSession finds the session a GET names: 400 without an id, 404 when it
// is unknown, expired, terminated or another owner's.
func (f *httpFrontend) ownSession(w http.ResponseWriter, r *http.Request) *httpSession {
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, "Mcp-Session-Id header is required: send initialize first")
		return nil
	}
	hs, ok := f.sessions.lookup(sid, ownerOf(r.Context()))
	if !ok {
		writeRPCError(w, http.StatusNotFound, nil, wire.CodeInvalidRequest, "unknown, expired or terminated session")
		return nil
	}
	return hs
}
