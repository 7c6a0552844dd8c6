// Package feed tells this process's MCP clients of changes to the trips they
// subscribed to, whichever process stored them.
//
// Every avinode-mcp process — each stdio server a client spawned, an HTTP
// server, the webhook service — writes to one store, and every write to a
// trip bumps the trip's change counters in the same transaction. A Feed
// watches the trips this process's clients subscribed to (through the
// resource templates' Watch), learns that something may have changed — at
// once for writes of this process (Local), from PostgreSQL's LISTEN/NOTIFY or
// from SQLite's PRAGMA data_version for writes of other processes — and
// compares the watched trips' counters with the ones it last saw: a trip
// whose counters moved gets notifications/resources/updated for its
// resources, once per change, however it was learnt of.
package feed

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// DefaultInterval is how often SQLite is asked whether another process
// committed.
const DefaultInterval = 200 * time.Millisecond

// Feed maps store changes to resource notifications.
type Feed struct {
	n        *kit.Notifier
	st       *store.Store
	log      zerolog.Logger
	interval time.Duration

	mu      sync.Mutex
	watched map[string]*trip

	// pokes carries trips changed by this process; all asks for every
	// watched trip to be checked.
	pokes chan string
	all   chan struct{}
}

// trip is one watched trip: how many subscriptions of each resource, and
// the counters last seen.
type trip struct {
	tripSubs, quoteSubs int
	v                   store.TripVersion
}

// New returns a feed that notifies n. Attach the store before Run.
func New(n *kit.Notifier, log *zerolog.Logger) *Feed {
	f := &Feed{n: n, log: zerolog.Nop(), interval: DefaultInterval, watched: map[string]*trip{},
		pokes: make(chan string, 1024), all: make(chan struct{}, 1)}
	if log != nil {
		f.log = log.With().Str("component", "change feed").Logger()
	}
	return f
}

// Attach sets the store the feed watches (the store is opened with the
// feed's Local as its change hook, so it is made after the feed).
func (f *Feed) Attach(st *store.Store) { f.st = st }

// SetInterval changes how often SQLite is polled.
func (f *Feed) SetInterval(d time.Duration) {
	if d > 0 {
		f.interval = d
	}
}

// Local hears a change this process committed (store.Options.OnChange). It
// never blocks.
func (f *Feed) Local(c store.Change) {
	select {
	case f.pokes <- c.TripID:
	default:
		f.checkAll()
	}
}

func (f *Feed) checkAll() {
	select {
	case f.all <- struct{}{}:
	default:
	}
}

const quotesSuffix = "/quotes"

// Watch is the resource templates' Watch: it starts following the trip of
// uri for its first subscriber, and stops after its last.
func (f *Feed) Watch(uri string, vars map[string]string) (func(), error) {
	id := vars["id"]
	if id == "" || !strings.HasPrefix(id, "atrip-") {
		return nil, mcperr.New(mcperr.NotFound, "no such trip resource")
	}
	quotes := strings.HasSuffix(uri, quotesSuffix)
	f.mu.Lock()
	t := f.watched[id]
	fresh := t == nil
	if fresh {
		t = &trip{}
		f.watched[id] = t
	}
	if quotes {
		t.quoteSubs++
	} else {
		t.tripSubs++
	}
	f.mu.Unlock()
	if fresh && f.st != nil {
		// From now on a change is news.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		vs, err := f.st.TripVersions(ctx, []string{id})
		cancel()
		if err == nil {
			f.mu.Lock()
			t.v = vs[id]
			f.mu.Unlock()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if quotes {
				t.quoteSubs--
			} else {
				t.tripSubs--
			}
			if t.quoteSubs <= 0 && t.tripSubs <= 0 {
				delete(f.watched, id)
			}
		})
	}, nil
}

// Run follows the store until ctx ends, notifying subscribers of every
// watched trip that changed. It returns ctx's error.
func (f *Feed) Run(ctx context.Context) error {
	go func() {
		_ = f.st.Follow(ctx, f.interval, func(ids []string) {
			if ids == nil {
				f.checkAll()
				return
			}
			for _, id := range ids {
				select {
				case f.pokes <- id:
				default:
					f.checkAll()
				}
			}
		}, func(err error) {
			f.log.Warn().Err(err).Msg("lost the store's change feed; reconnecting (updates from other processes wait until then)")
		})
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.all:
			f.check(ctx, nil)
		case id := <-f.pokes:
			ids := map[string]bool{id: true}
			// Take what else is waiting, so a burst costs one query.
		drain:
			for len(ids) < 200 {
				select {
				case id := <-f.pokes:
					ids[id] = true
				default:
					break drain
				}
			}
			list := make([]string, 0, len(ids))
			for id := range ids {
				list = append(list, id)
			}
			f.check(ctx, list)
		}
	}
}

// check compares the counters of the given trips (nil: every watched one)
// with the last seen, and notifies the resources of those that moved.
func (f *Feed) check(ctx context.Context, ids []string) {
	f.mu.Lock()
	var want []string
	if ids == nil {
		for id := range f.watched {
			want = append(want, id)
		}
	} else {
		for _, id := range ids {
			if f.watched[id] != nil {
				want = append(want, id)
			}
		}
	}
	f.mu.Unlock()
	if len(want) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	vs, err := f.st.TripVersions(cctx, want)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn().Err(err).Msg("reading trip versions failed; the next change retries")
		}
		return
	}
	var uris []string
	f.mu.Lock()
	for _, id := range want {
		t, v := f.watched[id], vs[id]
		if t == nil {
			continue
		}
		if v.Change != t.v.Change && t.tripSubs > 0 {
			uris = append(uris, market.TripURI(id))
		}
		if v.Quotes != t.v.Quotes && t.quoteSubs > 0 {
			uris = append(uris, market.QuotesURI(id))
		}
		t.v = v
	}
	f.mu.Unlock()
	for _, u := range uris {
		f.n.Updated(u)
	}
}
