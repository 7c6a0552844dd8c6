package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/gmailfake"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailbox"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/templates"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

var ctx = context.Background()

const me = "desk@jetvision.example"

// server is the gmail tools on one backend.
type server struct {
	name string
	deps tools.Deps
	fake *gmailfake.Server
	auth *googleauthtest.Server
	dir  string
	// maxResult, when set, is the result budget (--max-result-bytes).
	maxResult int
}

func baseDeps(t testing.TB, mb mailbox.Backend) tools.Deps {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return tools.Deps{Mailbox: mb, Templates: set, FromName: "Jetvision Charter Desk", OutboxDir: filepath.Join(dir, "outbox"),
		AttachmentsDir: filepath.Join(dir, "attachments"), BlockedExtensions: tools.DefaultBlockedExtensions}
}

func localServer(t testing.TB) *server {
	t.Helper()
	dir := t.TempDir()
	l, err := mailbox.OpenLocal(ctx, mailbox.LocalConfig{Dir: filepath.Join(dir, "mailbox"), Address: me})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return &server{name: "local", deps: baseDeps(t, l), dir: dir}
}

// userToken is a user-credentials token source for the fake's user.
func userToken(t testing.TB, a *googleauthtest.Server, scopes ...string) *googleauth.UserSource {
	t.Helper()
	file := googleauth.TokenFile{Path: filepath.Join(t.TempDir(), googleauth.TokenFileName)}
	if err := file.Save(&googleauth.Stored{RefreshToken: a.IssueRefreshToken(scopes...), ClientID: a.ClientID, Origin: googleauth.OriginAuth}); err != nil {
		t.Fatal(err)
	}
	src, err := googleauth.NewUserSource(googleauth.UserConfig{Settings: &googleauth.Settings{ClientID: a.ClientID, ClientSecret: a.ClientSecret,
		TokenURL: a.TokenURL}, File: file, Command: "gmail-mcp auth"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func gmailServer(t testing.TB) *server {
	t.Helper()
	return gmailServerScopes(t, gmailfake.ScopeReadonly, gmailfake.ScopeCompose)
}

func gmailServerScopes(t testing.TB, scopes ...string) *server {
	t.Helper()
	a := googleauthtest.New(t)
	a.SetUser(me)
	f := gmailfake.New(t, a)
	f.AddMailbox(me)
	g, err := mailbox.NewGmail(ctx, mailbox.GmailConfig{Endpoint: f.URL, TokenSource: userToken(t, a, scopes...),
		AuthAdvice: "run `gmail-mcp auth` to sign in again",
		Retry:      retry.Policy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxRetryAfter: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Profile(ctx); err != nil {
		t.Fatal(err)
	}
	d := baseDeps(t, g)
	d.OpenWorld = true
	return &server{name: "gmail", deps: d, fake: f, auth: a, dir: t.TempDir()}
}

func backends() map[string]func(testing.TB) *server {
	return map[string]func(testing.TB) *server{"local": localServer, "gmail": gmailServer}
}

// connect serves the tools as agent (no policy when p is nil).
func (s *server) connect(t testing.TB, p *acl.Policy, agent string, opts ...client.ClientOption) *mcptest.Client {
	t.Helper()
	srv, err := kit.New(kit.Info{Name: "gmail"}, tools.All(s.deps), kit.Options{Policy: p, Grace: 200 * time.Millisecond,
		Limits: kit.Limits{MaxResultBytes: s.maxResult}})
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, srv, agent, opts...)
}

type sent struct {
	Status      string   `json:"status"`
	ID          string   `json:"id"`
	DraftID     string   `json:"draft_id"`
	ThreadID    string   `json:"thread_id"`
	MessageID   string   `json:"message_id"`
	InReplyTo   string   `json:"in_reply_to"`
	SentAt      string   `json:"sent_at"`
	Subject     string   `json:"subject"`
	Template    string   `json:"template"`
	Notes       []string `json:"notes"`
	Recipients  struct{ To, Cc, Bcc []string }
	Attachments []struct {
		Filename    string `json:"filename"`
		ContentType string `json:"content_type"`
		Size        int    `json:"size"`
	}
}

func send(t testing.TB, c *mcptest.Client, tool string, args map[string]any) sent {
	t.Helper()
	var out sent
	mcptest.Structured(t, c.Call(tool, args), &out)
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// pairs writes template data as send_template_email takes it: name/value
// pairs sorted by name, numbers in digits, lists and objects as JSON.
func pairs(m map[string]any) []map[string]string {
	out := []map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var v string
		switch x := m[k].(type) {
		case string:
			v = x
		case int, float64, bool:
			v = fmt.Sprint(x)
		default:
			v = mustJSON(x)
		}
		out = append(out, map[string]string{"name": k, "value": v})
	}
	return out
}

// onEveryBackend runs test once per backend, each in a subtest with a
// fresh server.
func onEveryBackend(t *testing.T, test func(t *testing.T, s *server)) {
	t.Helper()
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}
