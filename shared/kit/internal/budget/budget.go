// Package budget bounds the work and memory of a server process: call slots
// per process, per session and per tool, with a short wait for a free one;
// bytes of messages being served at once, per process and per session,
// refused rather than waited for; and the largest message and result.
package budget

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound the work a server takes on at once, so that no burst of
// requests — hostile or not — can take its memory or starve a ping. A call
// past a limit waits up to QueueWait for room, then fails with a retryable
// error (RATE_LIMIT_ERROR in a tool result, HTTP 503 with Retry-After or the
// JSON-RPC error -32000 for whole messages).
type Limits struct {
	// MaxCalls caps tool calls and resource reads running at once in the
	// process; MaxSessionCalls caps them per session.
	MaxCalls        int
	MaxSessionCalls int
	// QueueWait is how long a call may wait for a free slot.
	QueueWait time.Duration
	// MaxMessageBytes caps one JSON-RPC message (a stdio line, an HTTP body).
	MaxMessageBytes int64
	// MaxInflightBytes caps the bytes of messages being served at once in
	// the process; MaxSessionBytes per session. Small messages (pings,
	// cancellations, most calls) are never refused for bytes.
	MaxInflightBytes int64
	MaxSessionBytes  int64
	// MaxResultBytes caps one tool result as sent: its text and its
	// structuredContent together. The official TypeScript client ends a
	// stdio session whose line outgrows its buffer, and a model's context
	// is smaller still, so tools page or cut their output to fit.
	MaxResultBytes int
}

// Defaults of Limits.
const (
	DefaultMaxCalls         = 64
	DefaultMaxSessionCalls  = 16
	DefaultQueueWait        = 2 * time.Second
	DefaultMaxMessageBytes  = 16 << 20
	DefaultMaxInflightBytes = 64 << 20
	DefaultMaxSessionBytes  = 32 << 20
	DefaultMaxResultBytes   = 512 << 10
	// minResultBytes keeps room for an error body and a page of content.
	minResultBytes = 16 << 10
	// freeMessageBytes: messages this small skip the byte budget, so a ping
	// or a cancellation always gets through.
	freeMessageBytes = 64 << 10
)

// WithDefaults fills the zero fields and keeps the limits consistent (a
// session's share within the process's, a message within a session's).
func (l Limits) WithDefaults() Limits {
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.MaxSessionCalls <= 0 {
		l.MaxSessionCalls = DefaultMaxSessionCalls
	}
	if l.QueueWait <= 0 {
		l.QueueWait = DefaultQueueWait
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.MaxInflightBytes <= 0 {
		l.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if l.MaxSessionBytes <= 0 {
		l.MaxSessionBytes = DefaultMaxSessionBytes
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	l.MaxResultBytes = max(l.MaxResultBytes, minResultBytes)
	if l.MaxSessionBytes > l.MaxInflightBytes {
		l.MaxSessionBytes = l.MaxInflightBytes
	}
	if l.MaxMessageBytes > l.MaxSessionBytes {
		l.MaxMessageBytes = l.MaxSessionBytes
	}
	return l
}

// Process enforces Limits for the process.
type Process struct {
	// Limits are the limits in force, defaults applied.
	Limits Limits
	calls  chan struct{}
	bytes  weighted
	// giveBack returns the memory of large messages to the system once the
	// process is idle again (see scheduleGiveBack).
	giveBack *time.Timer
	mu       sync.Mutex
}

// Large messages leave their memory with the Go runtime, which keeps it
// until the next collection and returns it to the system only slowly; a
// server that just refused a 15 MiB request should not sit at 100 MiB for
// the rest of the day. After a message of bigMessage bytes or more, once no
// message is in flight for giveBackAfter, the kit collects and returns the
// memory at once.
const (
	bigMessage    = 1 << 20
	giveBackAfter = time.Second
)

// New returns the budget of a process under l (zero fields take defaults).
func New(l Limits) *Process {
	l = l.WithDefaults()
	b := &Process{Limits: l, calls: make(chan struct{}, l.MaxCalls), bytes: weighted{max: l.MaxInflightBytes}}
	b.giveBack = time.AfterFunc(time.Hour, b.giveBackIfIdle)
	b.giveBack.Stop()
	return b
}

func (b *Process) scheduleGiveBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.giveBack.Reset(giveBackAfter)
}

func (b *Process) giveBackIfIdle() {
	if b.bytes.used.Load() != 0 {
		b.scheduleGiveBack() // still busy: look again later
		return
	}
	debug.FreeOSMemory()
}

// Session is one session's share of the process's budget.
type Session struct {
	calls chan struct{}
	bytes weighted
}

// Session returns a new session's share.
func (b *Process) Session() *Session {
	return &Session{calls: make(chan struct{}, b.Limits.MaxSessionCalls), bytes: weighted{max: b.Limits.MaxSessionBytes}}
}

// Slots are the call slots one call holds.
type Slots [3]chan struct{}

// Release gives the slots back.
func (h Slots) Release() {
	for _, s := range h {
		if s != nil {
			<-s
		}
	}
}

// AcquireCall takes a call slot in the process, in the session (when not
// nil) and in tool (a tool's own cap, when not nil), waiting up to QueueWait
// in all; blocking, when set, is told before the first wait. ok is false
// when there was no room in time (nothing is then held).
func (b *Process) AcquireCall(ctx context.Context, blocking func(), session *Session, tool chan struct{}) (held Slots, ok bool) {
	process := b.calls
	var sessionCalls chan struct{}
	if session != nil {
		sessionCalls = session.calls
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for i, s := range [3]chan struct{}{process, sessionCalls, tool} {
		if s == nil {
			continue
		}
		select {
		case s <- struct{}{}:
			held[i] = s
			continue
		default:
		}
		if timer == nil {
			if blocking != nil {
				blocking()
			}
			timer = time.NewTimer(b.Limits.QueueWait)
		}
		select {
		case s <- struct{}{}:
			held[i] = s
		case <-timer.C:
			held.Release()
			return Slots{}, false
		case <-ctx.Done():
			held.Release()
			return Slots{}, false
		}
	}
	return held, true
}

// AcquireBytes charges a message of n bytes to the process and session
// (when not nil) budgets without waiting; it returns the release, or nil when
// either is spent. Small messages are free.
func (b *Process) AcquireBytes(se *Session, n int64) func() {
	if n <= freeMessageBytes {
		return func() {}
	}
	if !b.bytes.try(n) {
		return nil
	}
	if se != nil && !se.bytes.try(n) {
		b.bytes.release(n)
		return nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.bytes.release(n)
			if se != nil {
				se.bytes.release(n)
			}
			if n >= bigMessage {
				b.scheduleGiveBack()
			}
		})
	}
}

// weighted is a non-blocking counting budget.
type weighted struct {
	max  int64
	used atomic.Int64
}

func (w *weighted) try(n int64) bool {
	for {
		cur := w.used.Load()
		if cur+n > w.max {
			return false
		}
		if w.used.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (w *weighted) release(n int64) { w.used.Add(-n) }
