package logging

import (
	"io"
	"sync"
	"time"
)

// BatchWriter writes log lines to w from one goroutine, at most every
// batchDelay: the lines written meanwhile go out in one write. A server that
// answers a call every hundred microseconds thus makes one write (and wakes
// one goroutine) per few dozen audit lines instead of one per call; an idle
// server's line goes out batchDelay after it was logged. Nothing is dropped:
// past maxPending bytes waiting, Write blocks until the writer catches up.
type BatchWriter struct {
	w       io.Writer
	mu      sync.Mutex
	room    *sync.Cond
	pending []byte
	spare   []byte
	wake    chan struct{}
	done    chan struct{}
	closed  bool
	writing bool
	timer   *time.Timer
}

const (
	maxPending = 1 << 20
	batchDelay = 2 * time.Millisecond
)

// NewBatchWriter starts the writer goroutine; Close stops it after writing
// what is pending.
func NewBatchWriter(w io.Writer) *BatchWriter {
	b := &BatchWriter{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	b.room = sync.NewCond(&b.mu)
	b.timer = time.AfterFunc(time.Hour, b.signal)
	b.timer.Stop()
	go b.run()
	return b
}

// Write queues p (one whole log line).
func (b *BatchWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	for len(b.pending) > maxPending && !b.closed {
		b.room.Wait()
	}
	if b.closed {
		b.mu.Unlock()
		return b.w.Write(p)
	}
	first := len(b.pending) == 0
	b.pending = append(b.pending, p...)
	full := len(b.pending) > maxPending/2
	b.mu.Unlock()
	switch {
	case full:
		b.signal()
	case first:
		b.timer.Reset(batchDelay)
	}
	return len(p), nil
}

func (b *BatchWriter) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *BatchWriter) run() {
	defer close(b.done)
	for {
		b.mu.Lock()
		for len(b.pending) == 0 {
			if b.closed {
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			<-b.wake
			b.mu.Lock()
		}
		out := b.pending
		b.pending, b.spare = b.spare[:0], nil
		b.writing = true
		b.mu.Unlock()
		b.room.Broadcast()
		_, _ = b.w.Write(out)
		b.mu.Lock()
		b.writing = false
		if cap(out) <= maxPending {
			b.spare = out[:0]
		}
		b.room.Broadcast()
		b.mu.Unlock()
	}
}

// Flush waits until every line written so far has been written out.
func (b *BatchWriter) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for (len(b.pending) > 0 || b.writing) && !b.closed {
		select {
		case b.wake <- struct{}{}:
		default:
		}
		b.room.Wait()
	}
}

// Close writes what is pending and stops the writer; later writes go
// straight to w.
func (b *BatchWriter) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	<-b.done
	b.room.Broadcast()
	return nil
}
