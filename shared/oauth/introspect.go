package oauth

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Opaque access tokens are checked at the authorization server's
// introspection endpoint (RFC 7662). Answers are cached by the token's
// sha256 (never the token), a valid one until its exp but at most
// introspectTTL, a refusal for refusedTTL. Calls for tokens not in the
// cache are rate limited per client (its remote address, WithClient) and
// then overall, so a flood of made-up tokens from one client neither turns
// the server against the authorization server nor uses up the calls other
// clients need; requests for a token already being introspected wait for
// that call.
const (
	introspectTTL   = time.Minute
	refusedTTL      = 10 * time.Second
	introspectCache = 10000
	introspectRate  = 20 // calls per second overall, burst twice that
	// clientRate is each client's share: one client can take at most a
	// quarter of the overall burst.
	clientRate = 5 // calls per second, burst twice that
	// clientLimiters bounds the clients remembered; the least recently
	// seen is forgotten first.
	clientLimiters = 4096
)

type introspector struct {
	cfg      Config
	endpoint string
	client   *http.Client
	limit    *rate.Limiter

	mu       sync.Mutex
	cache    map[[32]byte]introspected
	inflight map[[32]byte]*flight
	clients  *limiters
}

type introspected struct {
	id    Identity
	err   error
	until time.Time
}

// flight is an introspection call under way; done closes when id and err
// are set.
type flight struct {
	done chan struct{}
	id   Identity
	err  error
}

func newIntrospector(cfg Config, endpoint string, client *http.Client) *introspector {
	return &introspector{cfg: cfg, endpoint: endpoint, client: noRedirects(client),
		limit: rate.NewLimiter(introspectRate, 2*introspectRate), cache: map[[32]byte]introspected{},
		inflight: map[[32]byte]*flight{}, clients: newLimiters(clientLimiters, clientRate, 2*clientRate)}
}

type clientKey struct{}

// WithClient names the caller (its remote address) for the per-client
// introspection limit. Callers without one share a single limit.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// check returns the identity of an opaque token, from the cache, from a
// call under way for the same token, or the authorization server.
// identity turns the introspection response (whose members are JWT claim
// names, RFC 7662 §2.2) into an Identity.
func (in *introspector) check(ctx context.Context, raw string, identity func(map[string]any) Identity, now time.Time) (Identity, error) {
	key := sha256.Sum256([]byte(raw))
	in.mu.Lock()
	if e, ok := in.cache[key]; ok && now.Before(e.until) {
		in.mu.Unlock()
		return e.id, e.err
	}
	if f, ok := in.inflight[key]; ok {
		in.mu.Unlock()
		select {
		case <-f.done:
			return f.id, f.err
		case <-ctx.Done():
			return Identity{}, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
		}
	}
	// The client's limit comes first: a refused client takes nothing
	// from the overall one.
	if !in.clients.allow(clientOf(ctx)) || !in.limit.Allow() {
		in.mu.Unlock()
		return Identity{}, ErrUnavailable
	}
	f := &flight{done: make(chan struct{})}
	in.inflight[key] = f
	in.mu.Unlock()

	// The call outlives the request that started it (others may be
	// waiting for it); the client's timeout bounds it.
	f.id, f.err = in.introspect(context.WithoutCancel(ctx), key, raw, identity, now)
	in.mu.Lock()
	delete(in.inflight, key)
	in.mu.Unlock()
	close(f.done)
	return f.id, f.err
}

// introspect asks the authorization server and caches its judgement (not
// a failure to reach it).
func (in *introspector) introspect(ctx context.Context, key [sha256.Size]byte, raw string, identity func(map[string]any) Identity, now time.Time) (Identity, error) {
	resp, err := in.post(ctx, raw)
	if err != nil {
		return Identity{}, err
	}
	id, err := in.judge(resp, identity, now)
	until := now.Add(refusedTTL)
	if err == nil {
		until = now.Add(introspectTTL)
		if !id.Expiry.IsZero() && id.Expiry.Before(until) {
			until = id.Expiry
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= introspectCache {
		for k, e := range in.cache {
			if !now.Before(e.until) {
				delete(in.cache, k)
			}
		}
		if len(in.cache) >= introspectCache {
			clear(in.cache)
		}
	}
	in.cache[key] = introspected{id: id, err: err, until: until}
	return id, err
}

// limiters are rate limiters per client, at most max of them, the least
// recently used forgotten first. Not safe for concurrent use: the
// introspector's mutex guards it.
type limiters struct {
	max   int
	rate  rate.Limit
	burst int
	order *list.List // of *clientLimiter, most recent first
	byKey map[string]*list.Element
}

type clientLimiter struct {
	key string
	lim *rate.Limiter
}

func newLimiters(max int, r rate.Limit, burst int) *limiters {
	return &limiters{max: max, rate: r, burst: burst, order: list.New(), byKey: map[string]*list.Element{}}
}

func (l *limiters) allow(key string) bool {
	if e, ok := l.byKey[key]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*clientLimiter).lim.Allow()
	}
	if l.order.Len() >= l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.byKey, oldest.Value.(*clientLimiter).key)
	}
	c := &clientLimiter{key: key, lim: rate.NewLimiter(l.rate, l.burst)}
	l.byKey[key] = l.order.PushFront(c)
	return c.lim.Allow()
}

// post asks the authorization server about the token, authenticating as
// the configured client (HTTP Basic, RFC 6749 §2.3.1).
func (in *introspector) post(ctx context.Context, raw string) (map[string]any, error) {
	form := url.Values{"token": {raw}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.cfg.IntrospectionClientID), url.QueryEscape(in.cfg.IntrospectionSecret))
	resp, err := in.client.Do(req)
	if err != nil {
		// The error names the endpoint, never the token (it is in the body).
		return nil, fmt.Errorf("%w: introspection: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// A redirect ends here too: the token is not sent on.
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("%w: introspection answered %d", ErrUnavailable, resp.StatusCode)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: introspection answer is not JSON: %v", ErrUnavailable, err)
	}
	return m, nil
}

// judge applies to an introspection answer the checks a JWT gets: active,
// issuer, audience (RFC 8707: an opaque token must name this resource
// too), exp and nbf with leeway, and a subject.
func (in *introspector) judge(m map[string]any, identity func(map[string]any) Identity, now time.Time) (Identity, error) {
	if active, _ := m["active"].(bool); !active {
		return Identity{}, invalid("inactive", "token inactive", nil)
	}
	if iss, ok := m["iss"]; ok && iss != in.cfg.Issuer {
		return Identity{}, invalid("iss", "issuer mismatch", nil)
	}
	sub, _ := m["sub"].(string)
	refused := func(reason, desc string) (Identity, error) {
		e := invalid(reason, desc, nil)
		e.Subject = sub
		return Identity{}, e
	}
	accepted := append([]string{in.cfg.Resource}, in.cfg.Audiences...)
	aud := strs(m["aud"])
	match := false
	for _, a := range aud {
		match = match || contains(accepted, a)
	}
	if !match {
		return refused("aud", "audience mismatch")
	}
	skew := in.cfg.ClockSkew
	if exp, ok := m["exp"].(float64); ok && !now.Before(time.Unix(int64(exp), 0).Add(skew)) {
		return refused("exp", "token expired")
	}
	if nbf, ok := m["nbf"].(float64); ok && now.Add(skew).Before(time.Unix(int64(nbf), 0)) {
		return refused("nbf", "token not valid yet")
	}
	if _, ok := m["iss"]; !ok {
		m["iss"] = in.cfg.Issuer
	}
	id := identity(m)
	if id.Name == "" {
		id.Name, _ = m["username"].(string)
	}
	if id.Subject == "" {
		return Identity{}, invalid("sub", "required claim missing", nil)
	}
	return id, nil
}
