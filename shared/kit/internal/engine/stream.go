package engine

import (
	"errors"
	"net/http"
	"sync"
)

// eventStream writes server-sent events on one HTTP response: the answer
// to a POST that needs to send more than its response (progress, requests
// to the client), a session's GET stream, or the 2024-11-05 SSE stream.
// It starts lazily, so a POST answered at once stays a plain JSON response.
type eventStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	closed  bool
}

var errStreamClosed = errors.New("the event stream is closed")

func newEventStream(w http.ResponseWriter) *eventStream {
	return &eventStream{w: w}
}

func (e *eventStream) startLocked() {
	if e.started {
		return
	}
	e.started = true
	e.rc = http.NewResponseController(e.w)
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	e.w.WriteHeader(http.StatusOK)
}

// start sends the stream's headers now.
func (e *eventStream) start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.startLocked()
	_ = e.rc.Flush()
}

// event sends one JSON-RPC message as an event.
func (e *eventStream) event(msg []byte) error {
	return e.raw("message", msg)
}

func (e *eventStream) raw(name string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errStreamClosed
	}
	e.startLocked()
	buf := make([]byte, 0, len(data)+len(name)+16)
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := e.w.Write(buf); err != nil {
		e.closed = true
		return err
	}
	if err := e.rc.Flush(); err != nil {
		e.closed = true
		return err
	}
	return nil
}

// comment sends an SSE comment, which keeps idle proxies from closing the
// connection.
func (e *eventStream) comment() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || !e.started || e.rc == nil {
		return errStreamClosed
	}
	if _, err := e.w.Write([]byte(": keepalive\n\n")); err != nil {
		e.closed = true
		return err
	}
	return e.rc.Flush()
}

// close forbids further writes: the handler that owns w is returning.
func (e *eventStream) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
}

func (e *eventStream) isStarted() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}
