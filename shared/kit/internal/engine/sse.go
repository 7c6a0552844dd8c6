package engine

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// The 2024-11-05 HTTP+SSE transport: GET /sse opens a session's one event
// stream and names the endpoint for its messages; POST /message?sessionId=…
// carries each client message, answered 202 at once, with every response
// sent on the stream. Sessions are counted against the same cap and bound
// to the owner that opened the stream, as streamable HTTP sessions are.

func (f *httpFrontend) sseStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeHTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	res := f.sessions.reserve()
	if res == nil {
		w.Header().Set("Retry-After", "5")
		writeHTTPError(w, http.StatusServiceUnavailable, "too many sessions; close one or retry later")
		return
	}
	hs := f.sessions.create(r.Context(), overSSE, res)
	f.sessions.stream(hs, +1)
	defer f.sessions.terminate(hs.id, hs.owner)
	defer f.sessions.stream(hs, -1)
	es := newEventStream(w)
	defer es.close()
	if es.raw("endpoint", []byte("/message?sessionId="+hs.id)) != nil {
		return
	}
	f.drain(r.Context(), es, hs.state.out)
}

func (f *httpFrontend) sseMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeHTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if !jsonContent(w, r) {
		return
	}
	hs, ok := f.sessions.lookup(r.URL.Query().Get("sessionId"), ownerOf(r.Context()))
	if !ok {
		writeRPCError(w, http.StatusNotFound, nil, wire.CodeInvalidRequest, "unknown, expired or terminated session")
		return
	}
	body, release := f.readBody(w, r, hs.state.budget)
	if body == nil {
		return
	}
	m, err := wire.Parse(body)
	switch {
	case errors.Is(err, wire.ErrBatch):
		release()
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, err.Error())
		return
	case err != nil:
		release()
		writeRPCError(w, http.StatusBadRequest, nil, wire.CodeParseError, "Parse error: "+err.Error())
		return
	}
	se := hs.state
	switch m.Kind {
	case wire.Notification:
		f.s.notification(se, m)
	case wire.Response:
		se.answer(m, body)
	case wire.Invalid:
		if !m.HasMethod || m.HasID {
			se.out.pushUrgent(wire.AppendError(nil, m.ID, wire.CodeInvalidRequest, "Invalid request: "+m.Problem, nil))
		}
	case wire.Request:
		p, perr := parseParams(m.Params)
		if perr != nil {
			se.out.pushUrgent(wire.AppendError(nil, m.ID, wire.CodeInvalidParams, perr.Error(), nil))
			break
		}
		// Answered on the stream, after this POST returns.
		f.background.Add(1)
		go func() {
			defer f.background.Done()
			defer release()
			f.serveOnStream(se, &request{sess: se, id: m.ID, method: m.Method, p: p, size: len(body)})
		}()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	release()
	w.WriteHeader(http.StatusAccepted)
}

// serveOnStream serves a request whose messages and response all go on the
// session's stream.
func (f *httpFrontend) serveOnStream(se *session, req *request) {
	ctx, cancel := context.WithCancel(f.workCtx)
	defer cancel()
	fl, done := se.begin(req.id, cancel)
	req.reply = func(msg []byte) error {
		if !se.out.pushUrgent(msg) {
			return errStreamClosed
		}
		return nil
	}
	rep := f.s.serve(ctx, req)
	done()
	if rep.body != nil && !fl.cancelled.Load() {
		se.out.pushUrgent(rep.body)
	}
	if rep.after != nil {
		rep.after()
	}
}
