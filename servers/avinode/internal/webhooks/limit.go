package webhooks

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
)

// DefaultRate is the receiver's per-source limit: far above what one
// Avinode account sends (a notification per quote or message), low enough
// that a flood from one address cannot fill the event store.
var DefaultRate = ratelimit.Rate{PerMinute: 1200, Burst: 200}

// maxSources bounds the sources the limiter remembers; a flood from more
// addresses than this shares one bucket.
const maxSources = 10_000

// limiter holds a token bucket per source address (IPv6 by /64, since one
// host commonly owns the whole prefix), in bounded memory.
type limiter struct {
	rate     ratelimit.Rate
	mu       sync.Mutex
	sources  map[netip.Addr]*source
	overflow *rate.Limiter
}

type source struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(r ratelimit.Rate) *limiter {
	if r.PerMinute <= 0 {
		return nil
	}
	r.Burst = max(r.Burst, 1)
	return &limiter{rate: r, sources: map[netip.Addr]*source{},
		overflow: rate.NewLimiter(rate.Limit(r.PerMinute/60), r.Burst)}
}

// sourceKey is the address a bucket is kept for.
func sourceKey(a netip.Addr) netip.Addr {
	if a.Is6() && !a.Is4In6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.Addr()
		}
	}
	return a.Unmap()
}

// allow takes a token for the source; when none is left it reports how long
// until one is.
func (l *limiter) allow(a netip.Addr, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	key := sourceKey(a)
	l.mu.Lock()
	s := l.sources[key]
	if s == nil {
		if len(l.sources) >= maxSources {
			l.prune(now)
		}
		if len(l.sources) < maxSources {
			s = &source{lim: rate.NewLimiter(rate.Limit(l.rate.PerMinute/60), l.rate.Burst)}
			l.sources[key] = s
		}
	}
	lim := l.overflow
	if s != nil {
		s.seen = now
		lim = s.lim
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// prune forgets the sources whose bucket has refilled: forgetting them
// loses nothing.
func (l *limiter) prune(now time.Time) {
	refill := time.Duration(float64(l.rate.Burst) / (l.rate.PerMinute / 60) * float64(time.Second))
	for k, s := range l.sources {
		if now.Sub(s.seen) > refill {
			delete(l.sources, k)
		}
	}
}

// clientAddr is the address a request comes from: the peer's, or — when the
// peer is a trusted proxy — the last address in X-Forwarded-For that is not
// a trusted proxy itself.
func clientAddr(r *http.Request, trusted []netip.Prefix) (netip.Addr, error) {
	peer, err := parseHost(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("the peer address %q: %w", r.RemoteAddr, err)
	}
	if !inAny(trusted, peer) {
		return peer, nil
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	addr := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHost(hops[i])
		if err != nil {
			return netip.Addr{}, fmt.Errorf("X-Forwarded-For holds %q, which is not an address", hops[i])
		}
		addr = a
		if !inAny(trusted, a) {
			break
		}
	}
	return addr, nil
}

// parseHost reads an address with or without a port.
func parseHost(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, err
	}
	return a.Unmap(), nil
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParsePrefixes reads networks in CIDR notation; a bare address is a
// network of one.
func ParsePrefixes(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		if p, err := netip.ParsePrefix(it); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(it)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a network (203.0.113.0/24) nor an address", it)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
