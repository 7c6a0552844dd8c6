package kit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxStdioLine bounds one JSON-RPC message on stdin. The largest legitimate
// message is a file write at its cap, base64-encoded; anything longer is
// refused rather than buffered without end.
const maxStdioLine = 64 << 20

// stdioSession is the one client of a stdio server. It is per ServeStdio
// call (mcp-go's own stdio session is a process-wide global).
type stdioSession struct {
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
	level         atomic.Value // mcp.LoggingLevel
	info          atomic.Value // mcp.Implementation
	caps          atomic.Value // mcp.ClientCapabilities
}

func (s *stdioSession) SessionID() string { return "stdio" }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.notifications
}
func (s *stdioSession) Initialize()                                    { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool                              { return s.initialized.Load() }
func (s *stdioSession) SetLogLevel(l mcp.LoggingLevel)                 { s.level.Store(l) }
func (s *stdioSession) SetClientInfo(i mcp.Implementation)             { s.info.Store(i) }
func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps.Store(c) }
func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := s.level.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}
func (s *stdioSession) GetClientInfo() mcp.Implementation {
	i, _ := s.info.Load().(mcp.Implementation)
	return i
}
func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	c, _ := s.caps.Load().(mcp.ClientCapabilities)
	return c
}

// ServeStdio serves one client on in/out until in closes or ctx ends.
//
// Reading is a turn passed between goroutines (leader/follower): the one
// holding the turn reads a line; if it is a request, it hands the turn to
// an idle goroutine (starting one if none is idle) and serves the request
// itself, then goes idle. The request is thus read, handled and answered
// on one goroutine with no hand-off on its path — on a small machine each
// hand-off is a wake-up the client waits for — while the next line, such
// as notifications/cancelled for this very request, is read at once.
// Long-lived goroutines also keep the stacks JSON encoding has grown.
func (s *Server) ServeStdio(ctx context.Context, agent string, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sess := &stdioSession{notifications: make(chan mcp.JSONRPCNotification, 64)}
	if err := s.mcp.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register stdio session: %w", err)
	}
	defer s.mcp.UnregisterSession(context.Background(), sess.SessionID())
	ctx = s.mcp.WithContext(withStdio(WithAgent(ctx, agent)), sess)

	w := &lineWriter{w: out}
	var wg sync.WaitGroup
	defer wg.Wait()
	inflight := newTracker()
	defer inflight.closeAndWait()
	defer cancel() // a closed stdin means the client is gone: stop its calls
	wg.Go(func() {
		for {
			select {
			case n := <-sess.notifications:
				w.writeJSON(n)
			case <-ctx.Done():
				return
			}
		}
	})

	// Only served requests are waited for: a goroutine blocked reading
	// stdin when a signal ends ctx is left behind, as the process is ending.
	l := &stdioLoop{s: s, ctx: ctx, w: w, r: bufio.NewReaderSize(in, 64<<10),
		turn: make(chan struct{}, 1), done: make(chan error, 1), inflight: inflight, pending: newPendingRequests()}
	l.turn <- struct{}{}
	l.spawn()
	select {
	case err := <-l.done:
		return err
	case <-ctx.Done():
		return nil
	}
}

type stdioLoop struct {
	s    *Server
	ctx  context.Context
	w    *lineWriter
	r    *bufio.Reader
	turn chan struct{} // holding it means: you read the next line
	idle atomic.Int32  // goroutines waiting for the turn
	done chan error    // the reader that met the end of input reports here
	// inflight counts requests being served.
	inflight *tracker
	// pending lets notifications/cancelled suppress a request's answer.
	pending *pendingRequests
}

func (l *stdioLoop) spawn() { go l.run() }

func (l *stdioLoop) run() {
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
			line, err := readLine(l.r)
			if err != nil && !errors.Is(err, errLineTooLong) {
				l.dispatch(line) // a last line without a newline still counts
				if errors.Is(err, io.EOF) {
					err = nil
				} else {
					err = fmt.Errorf("read stdin: %w", err)
				}
				l.done <- err
				return
			}
			if errors.Is(err, errLineTooLong) {
				l.w.writeJSON(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR,
					fmt.Sprintf("message longer than %d bytes", maxStdioLine), nil))
				continue
			}
			switch kind, head := classify(line); kind {
			case lineRequest:
				if !l.inflight.begin() {
					return // shutting down
				}
				// Pass the turn on, then serve this request here.
				if l.idle.Load() == 0 {
					l.spawn()
				}
				l.turn <- struct{}{}
				l.serve(line, head)
				l.inflight.end()
			case lineNotification:
				l.notify(line, head) // notifications run in order, on the reader
				continue
			case lineInvalid:
				l.w.writeJSON(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR, "Parse error", nil))
				continue
			default:
				continue // blank, or a response to a request this server never sends
			}
			break
		}
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

type lineKind int

const (
	lineSkip lineKind = iota
	lineInvalid
	lineNotification
	lineRequest
)

// lineHead is the part of a line the loop reads; mcp-go parses the rest.
type lineHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// classify looks at a line's id and method only.
func classify(line []byte) (lineKind, lineHead) {
	var head lineHead
	if len(bytes.TrimSpace(line)) == 0 {
		return lineSkip, head
	}
	if json.Unmarshal(line, &head) != nil {
		return lineInvalid, head
	}
	hasID := len(head.ID) > 0 && string(head.ID) != "null"
	switch {
	case head.Method == "":
		return lineSkip, head
	case hasID:
		return lineRequest, head
	}
	return lineNotification, head
}

// dispatch serves a request or a notification, and skips anything else.
func (l *stdioLoop) dispatch(line []byte) {
	switch kind, head := classify(line); kind {
	case lineRequest:
		l.serve(line, head)
	case lineNotification:
		l.notify(line, head)
	}
}

// serve answers a request, unless the client cancelled it meanwhile.
// (initialize cannot be cancelled, so it is not tracked.)
func (l *stdioLoop) serve(line []byte, head lineHead) {
	if head.Method == string(mcp.MethodInitialize) {
		l.handle(line)
		return
	}
	l.pending.begin("", head.ID)
	resp := l.s.mcp.HandleMessage(l.ctx, line)
	if cancelled := l.pending.done("", head.ID); resp != nil && !cancelled {
		l.w.writeResponse(resp)
	}
}

// notify hands a notification to mcp-go; a cancellation first marks its
// request, so that the answer its handler still returns is dropped.
func (l *stdioLoop) notify(line []byte, head lineHead) {
	if isCancelNotification(head.Method) {
		l.pending.cancel("", cancelledRequestID(line))
	}
	l.handle(line)
}

func (l *stdioLoop) handle(line []byte) {
	if resp := l.s.mcp.HandleMessage(l.ctx, line); resp != nil {
		l.w.writeResponse(resp)
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns one newline-terminated line (without the newline),
// refusing lines over maxStdioLine and skipping the rest of such a line.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxStdioLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
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
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) write(b []byte) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, _ = lw.w.Write(b)
}

func (lw *lineWriter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	lw.write(append(b, '\n'))
}

// writeResponse encodes a tool result once: encoding/json would re-validate
// and re-compact the result's own MarshalJSON output inside the envelope,
// a second pass over what is often the largest part of the message.
func (lw *lineWriter) writeResponse(resp mcp.JSONRPCMessage) {
	r, ok := resp.(mcp.JSONRPCResponse)
	var result json.Marshaler
	if ok {
		result, _ = r.Result.(json.Marshaler)
	}
	if result == nil {
		lw.writeJSON(resp)
		return
	}
	id, err1 := json.Marshal(r.ID)
	body, err2 := result.MarshalJSON()
	if err1 != nil || err2 != nil {
		lw.writeJSON(resp)
		return
	}
	b := make([]byte, 0, len(body)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, body...)
	b = append(b, "}\n"...)
	lw.write(b)
}
