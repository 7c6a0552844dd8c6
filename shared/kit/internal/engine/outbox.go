package engine

import (
	"context"
	"sync"

	"github.com/mcp-fleet/mcp-fleet/shared/jsontext"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
)

// outbox holds what a server sends one client outside the responses to its
// requests — resource updates, list changes, and on the 2024-11-05 SSE
// transport everything — until the client's stream takes them. A slow client
// makes it coalesce, not grow: updates of one URI collapse into one while
// waiting, list-changed notifications into one flag. Past a bound of
// distinct URIs pending, updates are dropped and counted, never silently.
type outbox struct {
	mu      sync.Mutex
	wake    chan struct{} // capacity 1: "something to take"
	closed  bool
	urgent  [][]byte // messages that must not be dropped (requests, answers)
	uris    []string // resource updates pending, in order of first update
	pending map[string]bool
	listChg bool
	// subID tags every notification with the subscriptions/listen request
	// that opened the stream (protocol 2026-07-28); nil otherwise.
	subID []byte
	// maxURIs bounds the pending updates.
	maxURIs int
	dropped func(n int)
}

const defaultMaxURIs = 10_000

func newOutbox(dropped func(int)) *outbox {
	return &outbox{wake: make(chan struct{}, 1), pending: map[string]bool{}, maxURIs: defaultMaxURIs, dropped: dropped}
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
	case len(o.uris) > 0:
		uri := o.uris[0]
		o.uris[0] = ""
		o.uris = o.uris[1:]
		delete(o.pending, uri)
		if len(o.uris) == 0 {
			o.uris = nil // let a burst's backing array go
		}
		params := jsontext.AppendString([]byte(`{"uri":`), uri)
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
	params = append(params, `,"_meta":{"`+metaSubID+`":`...)
	params = append(params, o.subID...)
	return append(params, '}')
}

// close stops the outbox; waiting and later messages are discarded.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.urgent, o.uris, o.pending = nil, nil, map[string]bool{}
	o.mu.Unlock()
	o.signal()
}

func (o *outbox) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}
