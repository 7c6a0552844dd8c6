package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// errShuttingDown is the cause with which a stdio server cancels the calls
// in flight when it is told to stop: their errors then say why.
var errShuttingDown = errors.New("the server is shutting down")

// ServeStdio serves one client on in/out until in closes or ctx ends. The
// client acts as agent (from MCP_AGENT; "" without a policy).
//
// Reading is a turn passed between goroutines (leader/follower): the one
// holding the turn reads a line and, if it is a request, serves it itself.
// A request that finishes quickly (most do) keeps the turn, so the next line
// is read by the same goroutine with no wake-up on the client's path — on a
// small machine each hand-off is one the client waits for. A request still
// running after handoffAfter hands the turn to an idle goroutine (starting
// one if none is idle), so slow calls run concurrently and the next line —
// a ping, or notifications/cancelled for this very call — is read at once.
// Notifications and resource updates are written by one more goroutine that
// drains the session's outbox.
func (s *Server) ServeStdio(ctx context.Context, agent string, in io.Reader, out io.Writer) error {
	stop := ctx
	// Calls run under their own context, cancelled at once both when stdin
	// closes (the client is gone) and at a shutdown signal (stop): a stdio
	// server stops because its one client, or whoever started it for that
	// client, is done with it, so no one will read what a call would still
	// produce. At a signal the cause says so (errShuttingDown) and the
	// calls' errors read "the server is shutting down".
	ctx, cancelCause := context.WithCancelCause(context.WithoutCancel(ctx))
	cancel := func() { cancelCause(context.Canceled) }
	defer cancel()
	w := &lineWriter{w: out, room: defaultPipe}
	sess := s.newSession("stdio", agent, overStdio)
	defer sess.close()
	var wg sync.WaitGroup
	defer wg.Wait()
	inflight := newTracker()
	defer inflight.closeAndWait()
	defer cancel() // a closed stdin means the client is gone: stop its calls
	wg.Go(func() {
		for {
			msg, ok := sess.out.next(ctx)
			if !ok {
				return
			}
			if w.writeLine(msg) != nil {
				return
			}
		}
	})
	l := &stdioLoop{s: s, ctx: ctx, stop: stop, sess: sess, w: w, r: bufio.NewReaderSize(in, 64<<10),
		turn: make(chan struct{}, 1), done: make(chan error, 1), inflight: inflight}
	l.turn <- struct{}{}
	l.spawn()
	select {
	case err := <-l.done:
		return err
	case <-stop.Done():
	}
	// Shutting down: admit no new request and cancel those in flight; a
	// handler that ignores its context gets the grace period to return.
	cancelCause(errShuttingDown)
	done := make(chan struct{})
	go func() { inflight.closeAndWait(); close(done) }()
	timer := time.NewTimer(s.grace())
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
		<-done
		return fmt.Errorf("calls still ran more than the %s grace period after they were cancelled at shutdown", s.grace())
	}
}

type stdioLoop struct {
	s   *Server
	ctx context.Context
	// stop ends at shutdown: listen streams end then; calls get the grace.
	stop context.Context
	sess *session
	w    *lineWriter
	r    *bufio.Reader
	turn chan struct{} // holding it means: you read the next line
	idle atomic.Int32  // goroutines waiting for the turn
	done chan error    // the reader that met the end of input reports here
	// inflight counts requests being served.
	inflight *tracker
}

// handoffAfter is how long a request may run while its goroutine holds the
// read turn. It is short enough that a ping or a cancellation behind a slow
// call waits no longer, and long enough that a file read or a list never
// pays for a hand-off.
const handoffAfter = 500 * time.Microsecond

func (l *stdioLoop) spawn() { go l.run() }

// passTurn gives the read turn to an idle goroutine, starting one if none is.
func (l *stdioLoop) passTurn() {
	if l.idle.Load() == 0 {
		l.spawn()
	}
	l.turn <- struct{}{}
}

func (l *stdioLoop) run() {
	// One timer per goroutine, reset for each request it serves.
	handoff := time.AfterFunc(time.Hour, l.passTurn)
	handoff.Stop()
	defer handoff.Stop()
	for {
		l.idle.Add(1)
		select {
		case <-l.turn:
			l.idle.Add(-1)
		case <-l.ctx.Done():
			l.idle.Add(-1)
			return
		}
		for {
			line, err := readLine(l.r, l.s.budget.Limits.MaxMessageBytes)
			if err != nil && !errors.Is(err, errLineTooLong) {
				if len(bytes.TrimSpace(line)) > 0 {
					l.handle(line, nil) // a last line without a newline still counts
				}
				if errors.Is(err, io.EOF) {
					err = nil
				} else {
					err = fmt.Errorf("read stdin: %w", err)
				}
				l.done <- err
				return
			}
			if errors.Is(err, errLineTooLong) {
				_ = l.w.writeLine(wire.AppendError(nil, nil, wire.CodeInvalidRequest,
					fmt.Sprintf("message longer than %d bytes (--max-message-bytes)", l.s.budget.Limits.MaxMessageBytes), nil))
				continue
			}
			if l.handle(line, handoff) {
				break // the turn was passed on while serving; wait for it again
			}
		}
	}
}

// handle processes one line. For a request it arms handoff, which passes
// the read turn on if the request runs long, and reports whether it did.
func (l *stdioLoop) handle(line []byte, handoff *time.Timer) (passed bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	m, err := wire.Parse(line)
	switch {
	case errors.Is(err, wire.ErrBatch):
		_ = l.w.writeLine(wire.AppendError(nil, nil, wire.CodeInvalidRequest, err.Error(), nil))
		return false
	case err != nil:
		_ = l.w.writeLine(wire.AppendError(nil, nil, wire.CodeParseError, "Parse error: "+err.Error(), nil))
		return false
	}
	switch m.Kind {
	case wire.Notification:
		l.s.notification(l.sess, m)
		return false
	case wire.Response:
		l.sess.answer(m, line)
		return false
	case wire.Invalid:
		if m.HasMethod && !m.HasID {
			// A notification is never answered, malformed or not.
			l.s.log.Debug().Str("problem", m.Problem).Msg("malformed notification ignored")
			return false
		}
		_ = l.w.writeLine(wire.AppendError(nil, m.ID, wire.CodeInvalidRequest, "Invalid request: "+m.Problem, nil))
		return false
	}
	release := l.s.budget.AcquireBytes(l.sess.budget, int64(len(line)))
	if release == nil {
		_ = l.w.writeLine(busyError(m.ID))
		l.s.metrics.Count("messages_refused", "Messages refused because the in-flight byte budget was spent.", 1)
		return false
	}
	if !l.inflight.begin() {
		release()
		return false // shutting down
	}
	var blocking func()
	if handoff != nil {
		handoff.Reset(handoffAfter)
		// A request about to wait gives the turn away at once rather than
		// after handoffAfter; Stop false below then reads as "passed".
		blocking = func() {
			if handoff.Stop() {
				l.passTurn()
			}
		}
	}
	l.serve(m, len(line), release, blocking)
	l.inflight.end()
	// Stop reports false when the timer fired: the turn is someone else's.
	return handoff != nil && !handoff.Stop()
}

// busyError is the JSON-RPC answer to a message refused for lack of budget.
func busyError(id []byte) []byte {
	return wire.AppendError(nil, id, wire.CodeServerBusy,
		"the server is busy: too much work in flight; retry in a second", []byte(`{"retryAfterSeconds":1}`))
}

// serve answers a request, unless the client cancelled it meanwhile. The
// message's bytes are released (release) once it is served, before the
// answer is written, so a client that waits for the answer finds the budget
// back.
func (l *stdioLoop) serve(m wire.Message, size int, release, blocking func()) {
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	if m.Method == "subscriptions/listen" {
		defer context.AfterFunc(l.stop, cancel)()
	}
	fl, done := l.sess.begin(m.ID, cancel)
	p, err := parseParams(m.Params)
	if err != nil {
		done()
		release()
		_ = l.w.writeLine(wire.AppendError(nil, m.ID, wire.CodeInvalidParams, err.Error(), nil))
		return
	}
	r := &request{sess: l.sess, id: m.ID, method: m.Method, p: p, reply: l.w.writeLine, size: size, blocking: blocking}
	rep := l.s.serve(ctx, r)
	done()
	release()
	if rep.body != nil && (!fl.cancelled.Load() || m.Method == "initialize") {
		_ = l.w.writeLine(rep.body) // a copy
	}
	rep.done()
	if rep.after != nil {
		rep.after()
	}
}

// tracker counts requests in flight; once closed it admits no more, so
// waiting for the count to reach zero cannot race with a new request.
type tracker struct {
	mu     sync.Mutex
	zero   *sync.Cond
	n      int
	closed bool
}

func newTracker() *tracker {
	t := &tracker{}
	t.zero = sync.NewCond(&t.mu)
	return t
}

func (t *tracker) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

func (t *tracker) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n--; t.n == 0 {
		t.zero.Broadcast()
	}
}

func (t *tracker) closeAndWait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for t.n > 0 {
		t.zero.Wait()
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns one newline-terminated line (without the newline),
// refusing lines over max bytes and skipping the rest of such a line.
func readLine(r *bufio.Reader, max int64) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if int64(len(buf)+len(chunk)) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		if buf == nil && err == nil {
			// The common case: the whole line is in the reader's buffer.
			return bytes.TrimRight(append([]byte(nil), chunk...), "\r\n"), nil
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

// lineWriter writes whole JSON-RPC messages, one per line, one write each.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	// room is the largest message w takes in one write as far as known: a
	// pipe's size, grown (growPipe) when a larger message comes.
	room int
}

// defaultPipe is a pipe's size on Linux until it is grown; maxPipe the
// most it is grown to.
const (
	defaultPipe = 64 << 10
	maxPipe     = 1 << 20
)

func (lw *lineWriter) writeLine(msg []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.buf = append(append(lw.buf[:0], msg...), '\n')
	if len(lw.buf) > lw.room {
		lw.room = growPipe(lw.w, len(lw.buf))
	}
	_, err := lw.w.Write(lw.buf)
	if cap(lw.buf) > 1<<20 {
		lw.buf = nil // do not keep a large message's buffer
	}
	return err
}
