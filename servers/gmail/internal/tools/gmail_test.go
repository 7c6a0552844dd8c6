package tools_test

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/gmailfake"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestGmailFailures: reads back off on 429, 403 rate limits and 5xx and
// succeed; a send is never repeated, its rate limit is RATE_LIMIT_ERROR
// with the wait, a 5xx says how to check whether it went; credentials and
// scope failures say what to do; a search with one failed fetch fails whole.
func TestGmailFailures(t *testing.T) {
	s := gmailServer(t)
	c := s.connect(t, nil, "")
	first := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Quote", "body": "x", "body_type": "text"})

	s.fake.Fail(gmailfake.OpGet, 429, "rateLimitExceeded", "")
	s.fake.Fail(gmailfake.OpGet, 403, "userRateLimitExceeded", "")
	before := s.fake.Count(gmailfake.OpGet)
	mcptest.OK(t, c.Call("get_email", map[string]any{"message_id": first.ID}), nil)
	if n := s.fake.Count(gmailfake.OpGet) - before; n != 3 {
		t.Errorf("get took %d requests, want 3 (two backed off)", n)
	}
	s.fake.Fail(gmailfake.OpList, 503, "backendError", "")
	mcptest.OK(t, c.Call("search_emails", map[string]any{"query": "quote"}), nil)

	// A read still limited after the retries: the wait is surfaced.
	for range 3 {
		s.fake.Fail(gmailfake.OpThread, 429, "rateLimitExceeded", "120")
	}
	b := mcptest.FailCode(t, c.Call("get_thread_history", map[string]any{"thread_id": first.ThreadID}), mcperr.RateLimit)
	if b.Data.RetryAfterSeconds == nil || *b.Data.RetryAfterSeconds < 100 {
		t.Errorf("retry_after %+v", b)
	}

	sends := s.fake.Count(gmailfake.OpSend)
	s.fake.Fail(gmailfake.OpSend, 429, "rateLimitExceeded", "30")
	b = mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b"}), mcperr.RateLimit)
	if !b.Data.Retryable || b.Data.RetryAfterSeconds == nil || *b.Data.RetryAfterSeconds != 30 || s.fake.Count(gmailfake.OpSend)-sends != 1 {
		t.Errorf("rate-limited send: %+v after %d requests", b, s.fake.Count(gmailfake.OpSend)-sends)
	}
	s.fake.Fail(gmailfake.OpSend, 403, "rateLimitExceeded", "")
	mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b"}), mcperr.RateLimit)
	s.fake.Fail(gmailfake.OpSend, 500, "backendError", "")
	b = mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b"}), mcperr.Upstream)
	if b.Data.Retryable || !strings.Contains(b.Message, "rfc822msgid:<") || s.fake.Count(gmailfake.OpSend)-sends != 3 {
		t.Errorf("failed send: %+v after %d requests", b, s.fake.Count(gmailfake.OpSend)-sends)
	}

	s.fake.Fail(gmailfake.OpGet, 401, "authError", "")
	b = mcptest.FailCode(t, c.Call("get_email", map[string]any{"message_id": first.ID}), mcperr.Authentication)
	if !strings.Contains(b.Message, "gmail-mcp auth") {
		t.Errorf("401: %s", b.Message)
	}
	mcptest.FailCode(t, c.Call("get_email", map[string]any{"message_id": "nope"}), mcperr.NotFound)

	// Access revoked in the Google account: sign in again.
	s.auth.RevokeAll()
	s.auth.SetAccessTTL(1)
	b = mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b"}), mcperr.Authentication)
	if !strings.Contains(b.Message, "`gmail-mcp auth`") {
		t.Errorf("revoked: %s", b.Message)
	}
}

// TestGmailPartialSearch: one message of a search page cannot be read
// (after the retries): the search fails rather than answer with a hole.
func TestGmailPartialSearch(t *testing.T) {
	s := gmailServer(t)
	c := s.connect(t, nil, "")
	send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Quote", "body": "x"})
	// One message of a search page cannot be read: the search fails.
	send(t, c, "send_email", map[string]any{"to": "b@client.example", "subject": "Quote 2", "body": "y"})
	for range 6 { // both messages, every attempt
		s.fake.Fail(gmailfake.OpGet, 500, "backendError", "")
	}
	mcptest.FailCode(t, c.Call("search_emails", map[string]any{"query": "quote"}), mcperr.Upstream)

}

func TestGmailScopes(t *testing.T) {
	// Read-only sign-in: sending is refused by Gmail and explained.
	s := gmailServerScopes(t, gmailfake.ScopeReadonly)
	c := s.connect(t, nil, "")
	b := mcptest.FailCode(t, c.Call("send_email", map[string]any{"to": "a@client.example", "subject": "s", "body": "b"}), mcperr.PermissionDeny)
	if !strings.Contains(b.Message, "scope") || !strings.Contains(b.Message, "gmail-mcp auth") {
		t.Errorf("%s", b.Message)
	}
	// Send-only with metadata (the smallest sending grant): sending and
	// replying work; reading bodies does not.
	s = gmailServerScopes(t, gmailfake.ScopeSend, gmailfake.ScopeMetadata)
	c = s.connect(t, nil, "")
	out := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Hello", "body": "b"})
	reply := send(t, c, "send_email", map[string]any{"to": "a@client.example", "body": "again", "reply_to_message_id": out.ID})
	if reply.ThreadID != out.ThreadID || reply.Subject != "Re: Hello" {
		t.Errorf("reply with metadata scope: %+v", reply)
	}
	mcptest.FailCode(t, c.Call("get_email", map[string]any{"message_id": out.ID}), mcperr.PermissionDeny)
}

// TestGmailLargeAndReplacedIDs: a message over 4 MB goes up as a media
// upload; a Message-ID Gmail replaced is the one reported.
func TestGmailLargeAndReplacedIDs(t *testing.T) {
	s := gmailServer(t)
	s.fake.ReplaceMessageIDs(true)
	c := s.connect(t, nil, "")
	big := make([]byte, 5<<20)
	_, _ = rand.Read(big)
	out := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Big", "body": "see attached",
		"attachments": []map[string]any{{"filename": "scan.bin", "content": base64.StdEncoding.EncodeToString(big)}}})
	msgs := s.fake.Messages(me)
	last := msgs[len(msgs)-1]
	if last.Upload != "multipart" || len(last.Parsed.Parts) != 1 || string(last.Parsed.Parts[0].Data()) != string(big) {
		t.Fatalf("upload %q, parts %d", last.Upload, len(last.Parsed.Parts))
	}
	if !strings.HasPrefix(out.MessageID, "<CA+fake") || out.MessageID != last.Parsed.MessageID {
		t.Errorf("message id %q, stored %q", out.MessageID, last.Parsed.MessageID)
	}
	// The reply cites the id recipients got.
	reply := send(t, c, "send_email", map[string]any{"to": "a@client.example", "body": "x", "reply_to_message_id": out.ID})
	if reply.InReplyTo != out.MessageID || reply.ThreadID != out.ThreadID {
		t.Errorf("reply %+v", reply)
	}
	d := send(t, c, "create_draft", map[string]any{"to": "a@client.example", "subject": "Big draft", "body": "x",
		"attachments": []map[string]any{{"filename": "scan.bin", "content": base64.StdEncoding.EncodeToString(big)}}})
	if d.DraftID == "" || s.fake.Messages(me)[len(s.fake.Messages(me))-1].Upload != "multipart" {
		t.Errorf("draft %+v", d)
	}
}
