package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

// issuer hands out numbered tokens valid for life, counting fetches.
type issuer struct {
	clock *fakeClock
	life  time.Duration
	n     atomic.Int32
	err   error
}

func (i *issuer) fetch(context.Context) (Token, error) {
	n := i.n.Add(1)
	if i.err != nil {
		return Token{}, i.err
	}
	tok := Token{Value: fmt.Sprintf("token-%d", n)}
	if i.life > 0 {
		tok.Expiry = i.clock.Now().Add(i.life)
	}
	return tok, nil
}

func TestTokenSourceCachesAndRefreshesBeforeExpiry(t *testing.T) {
	clock := newFakeClock()
	iss := &issuer{clock: clock, life: 10 * time.Minute}
	ts := &TokenSource{Fetch: iss.fetch, Clock: clock}
	ctx := context.Background()
	want := func(v string) {
		t.Helper()
		got, err := ts.Token(ctx)
		if err != nil || got != v {
			t.Fatalf("Token = %q, %v; want %q", got, err, v)
		}
	}
	want("token-1")
	clock.Advance(8 * time.Minute)
	want("token-1") // still more than a minute left
	clock.Advance(time.Minute)
	want("token-2") // within the default minute before expiry
	ts.Invalidate("token-1")
	want("token-2") // an old token's invalidation keeps the new one
	ts.Invalidate("token-2")
	want("token-3")
	if iss.n.Load() != 3 {
		t.Fatalf("%d fetches, want 3", iss.n.Load())
	}
}

func TestTokenSourceShortLivedTokens(t *testing.T) {
	clock := newFakeClock()
	// With a 30s lifetime, refreshing a minute early would refetch on every
	// call; half the lifetime is the most that is taken off.
	iss := &issuer{clock: clock, life: 30 * time.Second}
	ts := &TokenSource{Fetch: iss.fetch, Clock: clock, RefreshBefore: time.Hour}
	ts.Token(context.Background())
	clock.Advance(14 * time.Second)
	if v, _ := ts.Token(context.Background()); v != "token-1" {
		t.Fatalf("refetched at 14s of 30s: %q", v)
	}
	clock.Advance(time.Second)
	if v, _ := ts.Token(context.Background()); v != "token-2" {
		t.Fatalf("not refetched at half the lifetime: %q", v)
	}
}

func TestTokenSourceNoExpiry(t *testing.T) {
	clock := newFakeClock()
	iss := &issuer{clock: clock}
	ts := &TokenSource{Fetch: iss.fetch}
	for i := 0; i < 3; i++ {
		if v, err := ts.Token(context.Background()); err != nil || v != "token-1" {
			t.Fatalf("Token = %q, %v", v, err)
		}
	}
}

// waitForWaiters blocks until n callers share the fetch in flight.
func waitForWaiters(ts *TokenSource, n int) {
	for {
		ts.mu.Lock()
		ok := ts.flight != nil && ts.flight.waiters >= n
		ts.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestTokenSourceSharesOneFetchAndItsFailure(t *testing.T) {
	release := make(chan struct{})
	var fetches atomic.Int32
	ts := &TokenSource{Fetch: func(ctx context.Context) (Token, error) {
		fetches.Add(1)
		<-release
		return Token{}, errBoom
	}}
	const callers = 8
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ts.Token(context.Background())
			errs <- err
		}()
	}
	waitForWaiters(ts, callers)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, errBoom) {
			t.Fatalf("caller got %v, want the shared failure", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for %d concurrent callers, want 1", n, callers)
	}
	// The failure is not cached: the next caller asks again.
	if _, err := ts.Token(context.Background()); !errors.Is(err, errBoom) || fetches.Load() != 2 {
		t.Fatalf("next caller: %v after %d fetches", err, fetches.Load())
	}
}

func TestTokenSourceCallerCancelDoesNotCancelFetch(t *testing.T) {
	release := make(chan struct{})
	var fetchErr atomic.Value
	ts := &TokenSource{Fetch: func(ctx context.Context) (Token, error) {
		<-release
		fetchErr.Store(fmt.Sprint(ctx.Err()))
		return Token{Value: "shared-token"}, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := ts.Token(ctx); done <- err }()
	waitForWaiters(ts, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v", err)
	}
	close(release)
	if v, err := ts.Token(context.Background()); err != nil || v != "shared-token" {
		t.Fatalf("Token after the detached fetch = %q, %v", v, err)
	}
	if fetchErr.Load() != "<nil>" {
		t.Fatalf("fetch context was %v", fetchErr.Load())
	}
}

func TestTokenSourceRejectsBadTokens(t *testing.T) {
	clock := newFakeClock()
	for _, tc := range []struct {
		name  string
		tok   Token
		panic bool
		want  string
	}{
		{"empty", Token{}, false, "empty token"},
		{"header injection", Token{Value: "abc\r\nX-Evil: 1"}, false, "control characters"},
		{"already expired", Token{Value: "abc", Expiry: clock.Now().Add(-time.Second)}, false, "expired at"},
		{"panic", Token{}, true, "panicked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := &TokenSource{Clock: clock, Fetch: func(context.Context) (Token, error) {
				if tc.panic {
					panic("bug")
				}
				return tc.tok, nil
			}}
			if _, err := ts.Token(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := (&TokenSource{}).Token(context.Background()); err == nil || !strings.Contains(err.Error(), "Fetch is not set") {
		t.Fatalf("no Fetch: %v", err)
	}
}

func TestTokenSourceRecursionRefused(t *testing.T) {
	ts := &TokenSource{}
	ts.Fetch = func(ctx context.Context) (Token, error) {
		// A token endpoint called through the same Auth hook.
		_, err := ts.Token(ctx)
		return Token{}, err
	}
	if _, err := ts.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "its own TokenSource") {
		t.Fatalf("err = %v", err)
	}
}

func TestTokenSourceAsAuthHook(t *testing.T) {
	clock := newFakeClock()
	t.Run("bearer header on every attempt", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503})
		iss := &issuer{clock: clock, life: time.Hour}
		ts := &TokenSource{Fetch: iss.fetch, Clock: clock}
		cfg := testConfig(clock)
		cfg.Auth = ts.Apply
		c := newTestClient(t, cfg)
		if _, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil); err != nil {
			t.Fatal(err)
		}
		for _, s := range up.Seen() {
			if s.Header.Get("Authorization") != "Bearer token-1" {
				t.Fatalf("Authorization %q", s.Header.Get("Authorization"))
			}
		}
		if iss.n.Load() != 1 {
			t.Fatalf("%d fetches for one token", iss.n.Load())
		}
	})
	t.Run("a failed refresh ends the request, once", func(t *testing.T) {
		up := retrytest.NewUpstream(t)
		iss := &issuer{clock: clock, err: errors.New("token endpoint: 503")}
		ts := &TokenSource{Fetch: iss.fetch, Clock: clock}
		cfg := testConfig(clock)
		cfg.Auth = ts.Apply
		c := newTestClient(t, cfg)
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		err := c.DoJSON(req, nil)
		e := mustMCP(t, "avinode", err, mcperr.Authentication, false)
		if !strings.Contains(e.Message, `credentials for upstream "avinode"`) {
			t.Fatalf("message %q", e.Message)
		}
		if iss.n.Load() != 1 || up.Hits() != 0 {
			t.Fatalf("%d fetches, %d hits; want the refresh tried once and nothing sent", iss.n.Load(), up.Hits())
		}
	})
}
