package oauth

import (
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
// introspectTTL, a refusal for refusedTTL; calls for tokens not in the
// cache are rate limited, so a flood of made-up tokens cannot turn the
// server against the authorization server.
const (
	introspectTTL   = time.Minute
	refusedTTL      = 10 * time.Second
	introspectCache = 10000
	introspectRate  = 20 // calls per second, burst twice that
)

type introspector struct {
	cfg      Config
	endpoint string
	client   *http.Client
	limit    *rate.Limiter

	mu    sync.Mutex
	cache map[[32]byte]introspected
}

type introspected struct {
	id    Identity
	err   error
	until time.Time
}

func newIntrospector(cfg Config, endpoint string, client *http.Client) *introspector {
	return &introspector{cfg: cfg, endpoint: endpoint, client: client,
		limit: rate.NewLimiter(introspectRate, 2*introspectRate), cache: map[[32]byte]introspected{}}
}

// check returns the identity of an opaque token, from the cache or the
// authorization server. identity turns the introspection response (whose
// members are JWT claim names, RFC 7662 §2.2) into an Identity.
func (in *introspector) check(ctx context.Context, raw string, identity func(map[string]any) Identity, now time.Time) (Identity, error) {
	key := sha256.Sum256([]byte(raw))
	in.mu.Lock()
	e, ok := in.cache[key]
	in.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.id, e.err
	}
	if !in.limit.Allow() {
		return Identity{}, ErrUnavailable
	}
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
	in.mu.Unlock()
	return id, err
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
