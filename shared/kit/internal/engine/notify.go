package engine

import (
	"sync"
)

// Notifier tells subscribed clients that resources changed. Tools and
// background workers hold it and call Updated(uri) after every change they
// make or observe; it delivers notifications/resources/updated to every
// session subscribed to that URI — on stdio, on the streamable HTTP GET
// stream, on a subscriptions/listen stream (protocol 2026-07-28) and on the
// 2024-11-05 SSE transport — and ListChanged to every session that may hear
// it. A slow client's updates coalesce by URI (see outbox); what cannot wait
// is dropped and counted in mcp_notifications_dropped_total.
//
// A Notifier is made before the server (kit.Env has one during Setup) and
// used by exactly one Server.
type Notifier struct {
	mu sync.RWMutex
	// subs maps a URI to the outboxes subscribed to it.
	subs map[string]map[*outbox]struct{}
	// listeners hear list_changed.
	listeners map[*outbox]struct{}
	// watch is told when a URI gains its first subscriber (on=true; an
	// error refuses the subscription) and loses its last; the server
	// connects it to resource templates.
	watch func(uri string, on bool) error
}

// NewNotifier returns a Notifier with no subscribers.
func NewNotifier() *Notifier {
	return &Notifier{subs: map[string]map[*outbox]struct{}{}, listeners: map[*outbox]struct{}{}}
}

// Updated tells every client subscribed to uri that it changed.
func (n *Notifier) Updated(uri string) {
	if n == nil {
		return
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for o := range n.subs[uri] {
		o.updated(uri)
	}
}

// ListChanged tells clients that the list of resources changed.
func (n *Notifier) ListChanged() {
	if n == nil {
		return
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for o := range n.listeners {
		o.listChanged()
	}
}

// Subscribed reports whether any client is subscribed to uri, so a worker
// can skip work nobody waits for.
func (n *Notifier) Subscribed(uri string) bool {
	if n == nil {
		return false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.subs[uri]) > 0
}

func (n *Notifier) subscribe(o *outbox, uri string) error {
	n.mu.Lock()
	set := n.subs[uri]
	if set == nil {
		set = map[*outbox]struct{}{}
		n.subs[uri] = set
	}
	_, had := set[o]
	set[o] = struct{}{}
	first := len(set) == 1 && !had
	watch := n.watch
	n.mu.Unlock()
	if first && watch != nil {
		if err := watch(uri, true); err != nil {
			n.unsubscribe(o, uri)
			return err
		}
	}
	return nil
}

func (n *Notifier) unsubscribe(o *outbox, uri string) {
	n.mu.Lock()
	set := n.subs[uri]
	_, had := set[o]
	delete(set, o)
	last := had && len(set) == 0
	if last {
		delete(n.subs, uri)
	}
	watch := n.watch
	n.mu.Unlock()
	if last && watch != nil {
		_ = watch(uri, false)
	}
}

func (n *Notifier) listen(o *outbox, on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if on {
		n.listeners[o] = struct{}{}
	} else {
		delete(n.listeners, o)
	}
}

// drop forgets an outbox entirely (its session or stream ended).
func (n *Notifier) drop(o *outbox, uris []string) {
	for _, u := range uris {
		n.unsubscribe(o, u)
	}
	n.listen(o, false)
}
