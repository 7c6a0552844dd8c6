package mailbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/gmailfake"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailbox"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

const me = "desk@jetvision.example"

// newGmail is the Gmail backend on the fake, without retries: what each
// single answer becomes is what is tested.
func newGmail(t *testing.T) (*gmailfake.Server, *mailbox.Gmail) {
	t.Helper()
	ctx := context.Background()
	a := googleauthtest.New(t)
	a.SetUser(me)
	f := gmailfake.New(t, a)
	f.AddMailbox(me)
	file := googleauth.TokenFile{Path: filepath.Join(t.TempDir(), googleauth.TokenFileName)}
	if err := file.Save(&googleauth.Stored{RefreshToken: a.IssueRefreshToken(gmailfake.ScopeReadonly, gmailfake.ScopeCompose),
		ClientID: a.ClientID, Origin: googleauth.OriginAuth}); err != nil {
		t.Fatal(err)
	}
	src, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: &googleauth.Settings{ClientID: a.ClientID,
		ClientSecret: a.ClientSecret, TokenURL: a.TokenURL}, File: file, Command: "gmail-mcp auth"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := mailbox.NewGmail(ctx, mailbox.GmailConfig{Endpoint: f.URL, TokenSource: src, AuthAdvice: "sign in again",
		Retry: retry.Policy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return f, g
}

const raw = "From: desk@jetvision.example\r\nTo: a@client.example\r\nSubject: s\r\nDate: Fri, 27 Nov 2026 10:00:00 +0000\r\n" +
	"Message-ID: <m1@jetvision.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nbody\r\n"

// TestGmailFailureAdvice: what a failed request tells an agent about
// repeating it. A send or a new draft that failed while Google handled it
// is not retryable (repeating it may send the mail twice); a rate limit, or
// a 503 that says when to come back, is, with the wait; a read's 500 is.
func TestGmailFailureAdvice(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		op         gmailfake.Op
		status     int
		reason     string
		retryAfter string
		call       func(g *mailbox.Gmail) error
		code       mcperr.Code
		retryable  bool
		unknown    bool
		words      string
	}{
		{name: "send 429 with Retry-After", op: gmailfake.OpSend, status: 429, reason: "rateLimitExceeded", retryAfter: "7",
			code: mcperr.RateLimit, retryable: true, words: "retry after 7s"},
		{name: "send 500", op: gmailfake.OpSend, status: 500, reason: "backendError",
			code: mcperr.Upstream, unknown: true, words: "search for rfc822msgid:<m1@jetvision.example>"},
		{name: "send 503", op: gmailfake.OpSend, status: 503, reason: "backendError",
			code: mcperr.Upstream, unknown: true, words: "the outcome is unknown"},
		{name: "send 503 with Retry-After", op: gmailfake.OpSend, status: 503, reason: "backendError", retryAfter: "7",
			code: mcperr.Upstream, retryable: true, words: "retry after 7s"},
		{name: "draft 500", op: gmailfake.OpDraft, status: 500, reason: "backendError",
			call: func(g *mailbox.Gmail) error { _, err := g.CreateDraft(ctx, []byte(raw), ""); return err },
			code: mcperr.Upstream, unknown: true, words: "POST request"},
		{name: "profile 500", op: gmailfake.OpProfile, status: 500, reason: "backendError",
			call: func(g *mailbox.Gmail) error { _, err := g.Profile(ctx); return err },
			code: mcperr.Upstream, retryable: true, words: "HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, g := newGmail(t)
			f.Fail(tc.op, tc.status, tc.reason, tc.retryAfter)
			call := tc.call
			if call == nil {
				call = func(g *mailbox.Gmail) error { _, err := g.Send(ctx, []byte(raw), ""); return err }
			}
			err := call(g)
			e := mcperr.Wrap(err)
			b := e.Body()
			if b.Code != tc.code || b.Data.Retryable != tc.retryable || !strings.Contains(b.Message, tc.words) {
				t.Fatalf("%s retryable=%v %q, want %s retryable=%v with %q", b.Code, b.Data.Retryable, b.Message, tc.code, tc.retryable, tc.words)
			}
			if errors.Is(err, upstream.ErrOutcomeUnknown) != tc.unknown {
				t.Errorf("ErrOutcomeUnknown in the chain: %v, want %v", !tc.unknown, tc.unknown)
			}
			if tc.retryAfter != "" && (b.Data.RetryAfterSeconds == nil || *b.Data.RetryAfterSeconds != 7) {
				t.Errorf("retry_after_seconds %v, want 7", b.Data.RetryAfterSeconds)
			}
			if f.Count(tc.op) != 1 {
				t.Errorf("%d requests of %s, want 1", f.Count(tc.op), tc.op)
			}
		})
	}
}
