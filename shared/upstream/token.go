package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

// Defaults of a TokenSource.
const (
	DefaultRefreshBefore     = time.Minute
	DefaultTokenFetchTimeout = 30 * time.Second
)

// Token is a bearer credential. A zero Expiry means it does not expire
// (until Invalidate).
type Token struct {
	Value  string
	Expiry time.Time
}

// TokenSource caches a bearer token and fetches a new one shortly before the
// old one expires. Concurrent callers that find the token stale share one
// fetch and its outcome, failure included: a token endpoint that refuses is
// asked once, not once per waiting request, and never in a retry loop (the
// Auth hook's errors end the request). Set Fetch, optionally the other
// fields, before first use; do not copy a TokenSource after use.
type TokenSource struct {
	// Fetch obtains a new token. It runs detached from the caller's
	// cancellation (other callers may be waiting for it) but keeps its
	// values, and is bounded by FetchTimeout. It must not send its request
	// through a Client whose Auth hook uses this TokenSource. Returning an
	// *mcperr.Error chooses what clients see (FromStatus and FromError make
	// one from the token endpoint's answer).
	Fetch func(ctx context.Context) (Token, error)
	// RefreshBefore is how long before its expiry a token is replaced, at
	// most half of its lifetime, so that a request does not set out with a
	// token that expires on the way.
	RefreshBefore time.Duration
	FetchTimeout  time.Duration
	// Clock replaces the wall clock, for tests.
	Clock retry.Clock

	mu      sync.Mutex
	tok     Token
	fetched time.Time
	flight  *tokenFlight
}

type tokenFlight struct {
	done    chan struct{}
	waiters int // callers sharing this fetch; guarded by TokenSource.mu
	tok     Token
	err     error
}

type fetchingKey struct{ s *TokenSource }

// Token returns a valid token value, fetching one if the cached token is
// missing or about to expire.
func (s *TokenSource) Token(ctx context.Context) (string, error) {
	if s.Fetch == nil {
		return "", errors.New("upstream: TokenSource.Fetch is not set")
	}
	if ctx.Value(fetchingKey{s}) != nil {
		// Waiting for our own fetch would hang until FetchTimeout.
		return "", errors.New("upstream: TokenSource.Fetch requested a token from its own TokenSource; send the token request through a Client without this Auth hook")
	}
	now := s.now()
	s.mu.Lock()
	if s.fresh(now) {
		v := s.tok.Value
		s.mu.Unlock()
		return v, nil
	}
	f := s.flight
	if f == nil {
		f = &tokenFlight{done: make(chan struct{})}
		s.flight = f
		go s.fetch(context.WithoutCancel(ctx), f)
	}
	f.waiters++
	s.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return "", f.err
		}
		return f.tok.Value, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Apply sets "Authorization: Bearer <token>" on req; it can serve as
// Config.Auth directly, or be called from a hook that adds more headers.
func (s *TokenSource) Apply(req *http.Request) error {
	v, err := s.Token(req.Context())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+v)
	return nil
}

// Invalidate drops the cached token if it is still value, e.g. after the
// upstream answered 401 to it, so the next request fetches a new one. A
// token fetched meanwhile by another request is kept.
func (s *TokenSource) Invalidate(value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.Value == value {
		s.tok = Token{}
	}
}

func (s *TokenSource) now() time.Time {
	if s.Clock != nil {
		return s.Clock.Now()
	}
	return time.Now()
}

func (s *TokenSource) fresh(now time.Time) bool {
	if s.tok.Value == "" {
		return false
	}
	if s.tok.Expiry.IsZero() {
		return true
	}
	before := s.RefreshBefore
	if before <= 0 {
		before = DefaultRefreshBefore
	}
	before = min(before, s.tok.Expiry.Sub(s.fetched)/2)
	return now.Before(s.tok.Expiry.Add(-before))
}

func (s *TokenSource) fetch(ctx context.Context, f *tokenFlight) {
	timeout := s.FetchTimeout
	if timeout <= 0 {
		timeout = DefaultTokenFetchTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, fetchingKey{s}, true), timeout)
	defer cancel()
	start := s.now()
	tok, err := s.callFetch(ctx)
	if err == nil {
		err = checkToken(tok, start)
	}
	s.mu.Lock()
	if err == nil {
		s.tok, s.fetched = tok, start
	}
	s.flight = nil
	f.tok, f.err = tok, err
	s.mu.Unlock()
	close(f.done)
}

func (s *TokenSource) callFetch(ctx context.Context) (tok Token, err error) {
	defer func() {
		// The fetch runs on its own goroutine, where a panic would take
		// the whole server down.
		if p := recover(); p != nil {
			err = fmt.Errorf("upstream: TokenSource.Fetch panicked: %v", p)
		}
	}()
	return s.Fetch(ctx)
}

func checkToken(tok Token, now time.Time) error {
	switch {
	case tok.Value == "":
		return errors.New("upstream: TokenSource.Fetch returned an empty token")
	case strings.ContainsFunc(tok.Value, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		// It goes into a header; net/http would refuse every request.
		return errors.New("upstream: TokenSource.Fetch returned a token with control characters")
	case !tok.Expiry.IsZero() && !tok.Expiry.After(now):
		return fmt.Errorf("upstream: TokenSource.Fetch returned a token that expired at %s", tok.Expiry.UTC().Format(time.RFC3339))
	}
	return nil
}
