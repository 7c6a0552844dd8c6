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

// ServeStdio serves one client on in/out until in closes or ctx ends. It
// reads lines itself and hands each request straight to mcp-go, with no
// queue or worker hop in between: on a small machine every goroutine
// hand-off is a wake-up the caller waits for. Requests run concurrently, so
// notifications/cancelled reaches a running call; notifications run in
// order on the read loop.
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
	var notifyDone sync.WaitGroup
	notifyDone.Go(func() {
		for {
			select {
			case n := <-sess.notifications:
				w.writeJSON(n)
			case <-ctx.Done():
				return
			}
		}
	})
	defer notifyDone.Wait()

	var inflight sync.WaitGroup
	defer inflight.Wait()
	defer cancel() // a closed stdin means the client is gone: stop its calls

	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			s.dispatch(ctx, line, w, &inflight)
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errLineTooLong):
			w.writeJSON(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR,
				fmt.Sprintf("message longer than %d bytes", maxStdioLine), nil))
		default:
			return fmt.Errorf("read stdin: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (s *Server) dispatch(ctx context.Context, line []byte, w *lineWriter, inflight *sync.WaitGroup) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		w.writeJSON(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR, "Parse error", nil))
		return
	}
	hasID := len(head.ID) > 0 && string(head.ID) != "null"
	switch {
	case !hasID:
		// Notifications (cancellation among them) are handled in order,
		// at once, and answered with nothing.
		s.mcp.HandleMessage(ctx, line)
	case head.Method == "":
		// A response to a server-to-client request; this server sends none.
	default:
		msg := append([]byte(nil), line...)
		inflight.Go(func() {
			if resp := s.mcp.HandleMessage(ctx, msg); resp != nil {
				w.writeResponse(resp)
			}
		})
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
