package kit

import (
	"context"
	"sync"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// outbox holds what a server sends one client outside the responses to its
// requests — notifications, resource updates — until the client's stream
// takes them. A slow client makes it coalesce, not grow: updates of one URI
// collapse into one while waiting, list-changed notifications into one
// flag; other notifications queue up to a bound past which they are dropped
// and counted, never silently.
type outbox struct {
	mu      sync.Mutex
	wake    chan struct{} // capacity 1: "something to take"
	closed  bool
	urgent  [][]byte // messages that must not be dropped (requests, answers)
	queue   [][]byte // droppable notifications, oldest first
	uris    []string // resource updates pending, in order of first update
	pending map[string]bool
	listChg bool
	// subID tags every notification with the subscriptions/listen request
	// that opened the stream (protocol 2026-07-28); nil otherwise.
	subID []byte
	// maxQueue and maxURIs bound the queue and the pending updates.
	maxQueue, maxURIs int
	dropped           func(n int)
}

const (
	defaultMaxQueue = 256
	defaultMaxURIs  = 10_000
)

func newOutbox(dropped func(int)) *outbox {
	return &outbox{wake: make(chan struct{}, 1), pending: map[string]bool{},
		maxQueue: defaultMaxQueue, maxURIs: defaultMaxURIs, dropped: dropped}
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// pushUrgent queues a message that must be delivered (a request to the
// client, or, on the 2024-11-05 SSE transport, a response).
func (o *outbox) pushUrgent(msg []byte) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	o.urgent = append(o.urgent, msg)
	o.mu.Unlock()
	o.signal()
	return true
}

// push queues a droppable notification.
func (o *outbox) push(msg []byte) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if len(o.queue) >= o.maxQueue {
		o.mu.Unlock()
		o.drop(1)
		return
	}
	o.queue = append(o.queue, msg)
	o.mu.Unlock()
	o.signal()
}

// updated records that uri changed; an update already waiting covers it.
func (o *outbox) updated(uri string) {
	o.mu.Lock()
	if o.closed || o.pending[uri] {
		o.mu.Unlock()
		return
	}
	if len(o.uris) >= o.maxURIs {
		o.mu.Unlock()
		o.drop(1)
		return
	}
	o.pending[uri] = true
	o.uris = append(o.uris, uri)
	o.mu.Unlock()
	o.signal()
}

// listChanged records that the resource list changed.
func (o *outbox) listChanged() {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.listChg = true
	o.mu.Unlock()
	o.signal()
}

func (o *outbox) drop(n int) {
	if o.dropped != nil {
		o.dropped(n)
	}
}

// next returns the next message to send, waiting for one until ctx ends or
// the outbox closes (then ok is false).
func (o *outbox) next(ctx context.Context) (msg []byte, ok bool) {
	for {
		o.mu.Lock()
		if msg := o.takeLocked(); msg != nil {
			o.mu.Unlock()
			return msg, true
		}
		closed := o.closed
		o.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-o.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// takeLocked returns the next message without waiting, or nil.
func (o *outbox) takeLocked() []byte {
	switch {
	case len(o.urgent) > 0:
		m := o.urgent[0]
		o.urgent[0] = nil
		o.urgent = o.urgent[1:]
		return m
	case len(o.queue) > 0:
		m := o.queue[0]
		o.queue[0] = nil
		o.queue = o.queue[1:]
		return o.tag(m)
	case len(o.uris) > 0:
		uri := o.uris[0]
		o.uris[0] = ""
		o.uris = o.uris[1:]
		delete(o.pending, uri)
		if len(o.uris) == 0 {
			o.uris = nil // let a burst's backing array go
		}
		params := wire.AppendString([]byte(`{"uri":`), uri)
		params = o.appendMeta(params)
		return wire.AppendNotification(nil, "notifications/resources/updated", append(params, '}'))
	case o.listChg:
		o.listChg = false
		params := o.appendMeta([]byte(`{`))
		if len(params) > 1 && params[1] == ',' {
			params = append(params[:1], params[2:]...)
		}
		return wire.AppendNotification(nil, "notifications/resources/list_changed", append(params, '}'))
	}
	return nil
}

// appendMeta adds the subscription tag to notification params being built.
func (o *outbox) appendMeta(params []byte) []byte {
	if o.subID == nil {
		return params
	}
	params = append(params, `,"_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	params = append(params, o.subID...)
	return append(params, '}')
}

// tag adds the subscription tag to a queued notification, if any. Queued
// notifications are built with a params object.
func (o *outbox) tag(msg []byte) []byte {
	if o.subID == nil {
		return msg
	}
	return retag(msg, o.subID)
}

// close stops the outbox; waiting and later messages are discarded.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.urgent, o.queue, o.uris, o.pending = nil, nil, nil, map[string]bool{}
	o.mu.Unlock()
	o.signal()
}

// waiting reports how many messages wait, for tests and health.
func (o *outbox) waiting() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.urgent) + len(o.queue) + len(o.uris)
	if o.listChg {
		n++
	}
	return n
}

// retag inserts the subscription tag into a notification's params.
func retag(msg, subID []byte) []byte {
	m, err := wire.Parse(msg)
	if err != nil || m.Kind != wire.Notification {
		return msg
	}
	meta := append([]byte(`"_meta":{"io.modelcontextprotocol/subscriptionId":`), subID...)
	meta = append(meta, '}')
	var params []byte
	if len(m.Params) < 2 || m.Params[0] != '{' {
		params = append(append([]byte{'{'}, meta...), '}')
	} else {
		params = append([]byte{'{'}, meta...)
		if body := m.Params[1:]; len(body) > 0 && body[0] != '}' {
			params = append(params, ',')
		}
		params = append(params, m.Params[1:]...)
	}
	return wire.AppendNotification(nil, m.Method, params)
}

func (o *outbox) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}
