package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/gmailfake"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth"
	"github.com/mcp-fleet/mcp-fleet/shared/googleauth/googleauthtest"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	gmail "google.golang.org/api/gmail/v1"
)

const pkg = "github.com/mcp-fleet/mcp-fleet/servers/gmail/cmd/gmail-mcp"

// TestDocs keeps docs/gmail.md's generated reference in step with the
// definitions (go test -run TestDocs -args -update rewrites it).
func TestDocs(t *testing.T) {
	mcptest.CheckReference(t, spec(), mcptest.RepoFile(t, "docs", "gmail.md"), mcptest.Updating())
}

func TestScopes(t *testing.T) {
	const r, c, s, m = gmail.GmailReadonlyScope, gmail.GmailComposeScope, gmail.GmailSendScope, gmail.GmailMetadataScope
	for _, tc := range []struct {
		sel  toolSelection
		want []string
	}{
		{toolSelection{}, []string{r, c}},
		{toolSelection{readOnly: true}, []string{r}},
		{toolSelection{include: []string{"send_email", "send_template_email"}}, []string{s, m}},
		{toolSelection{include: []string{"send_email", "create_draft"}}, []string{c, m}},
		{toolSelection{remove: []string{"create_draft"}}, []string{r, s}},
	} {
		served, err := tc.sel.served()
		if got := scopesFor(served); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v %v, want %v", tc.sel, got, err, tc.want)
		}
	}
	if _, err := (&toolSelection{include: []string{"sendmail"}}).served(); err == nil || !strings.Contains(err.Error(), "sendmail") {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := (&toolSelection{include: []string{"list_templates"}}).served(); err == nil {
		t.Error("no scopes needed, but accepted")
	}
}

// fakes are the authorization server and the Gmail API, for a person
// (jane@example.com) whose mailbox exists.
func fakes(t *testing.T) (*googleauthtest.Server, *gmailfake.Server, map[string]string) {
	a := googleauthtest.New(t)
	f := gmailfake.New(t, a)
	f.AddMailbox("jane@example.com")
	env := map[string]string{"GMAIL_CLIENT_ID": a.ClientID, "GMAIL_CLIENT_SECRET": a.ClientSecret, "GOOGLE_OAUTH_AUTH_URL": a.AuthURL,
		"GOOGLE_OAUTH_TOKEN_URL": a.TokenURL, "GMAIL_API_ENDPOINT": f.URL, "MCP_DATA_DIR": t.TempDir()}
	return a, f, env
}

// signIn runs `gmail-mcp auth` in this process, playing the person in the
// browser, and returns what it printed.
func signIn(t *testing.T, a *googleauthtest.Server, env map[string]string, args ...string) string {
	t.Helper()
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := a.BrowsePrinted(io.TeeReader(pr, &out), nil)
	var stderr bytes.Buffer
	code := kit.Main(spec(), append([]string{"auth"}, args...), func(k string) string { return env[k] }, strings.NewReader(""), pw, &stderr)
	pw.Close()
	if err := <-done; err != nil || code != 0 {
		t.Fatalf("auth: code %d, browser %v\n%s\n%s", code, err, out.String(), stderr.String())
	}
	return out.String()
}

// TestAuthThenServe: `gmail-mcp auth` against the fakes (PKCE, offline,
// consent checked by the fake; the scopes of the tools asked for), the
// token stored 0600 and refreshed, then the binary serving the mailbox.
func TestAuthThenServe(t *testing.T) {
	a, f, env := fakes(t)
	a.SetUser("jane@example.com")
	a.SetAccessTTL(time.Second) // every use refreshes
	a.SetRotate(true)
	signIn(t, a, env, "--read-only")
	if q := a.LastAuthRequest(); q.Get("scope") != gmail.GmailReadonlyScope || q.Get("access_type") != "offline" || q.Get("prompt") != "consent" {
		t.Errorf("read-only sign-in asked %v", q)
	}
	out := signIn(t, a, env)
	if q := a.LastAuthRequest(); q.Get("scope") != gmail.GmailReadonlyScope+" "+gmail.GmailComposeScope {
		t.Errorf("sign-in asked %q", q.Get("scope"))
	}
	tokenPath := filepath.Join(env["MCP_DATA_DIR"], "gmail", googleauth.TokenFileName)
	if !strings.Contains(out, "Signed in as jane@example.com") || !strings.Contains(out, tokenPath) {
		t.Errorf("output:\n%s", out)
	}
	info, err := os.Stat(tokenPath)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", info, err)
	}
	before, _, _ := googleauth.TokenFile{Path: tokenPath}.Load()

	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), append(envList, "MCP_LOG_LEVEL=debug"))
	var sent struct {
		ID        string `json:"id"`
		MessageID string `json:"message_id"`
	}
	mcptest.Structured(t, c.Call("send_template_email", map[string]any{"to": "client@example.org", "template_name": "follow_up",
		"template_data": []map[string]string{{"name": "client_name", "value": "Ms. Raman"}, {"name": "message", "value": "Checking in on the proposal."}}}), &sent)
	msgs := f.Messages("jane@example.com")
	if len(msgs) != 1 || msgs[0].ID != sent.ID || msgs[0].Parsed.Subject != "Following up on your flight request" {
		t.Fatalf("the fake holds %d messages", len(msgs))
	}
	after, _, err := googleauth.TokenFile{Path: tokenPath}.Load()
	if err != nil || after.RefreshToken == before.RefreshToken || !a.RefreshTokenLive(after.RefreshToken) {
		t.Errorf("the refreshed token was not persisted: %v", err)
	}
	if strings.Contains(c.Stderr(), after.RefreshToken) || strings.Contains(c.Stderr(), a.ClientSecret) {
		t.Error("a secret reached the log")
	}
	// Revoked in the Google account: a clear instruction.
	a.RevokeAll()
	b := mcptest.FailCode(t, c.Call("search_emails", map[string]any{"query": "proposal"}), mcperr.Authentication)
	if !strings.Contains(b.Message, "gmail-mcp auth") {
		t.Errorf("revoked: %s", b.Message)
	}
}

// setup parses env the way Main does and runs Setup.
func setup(t *testing.T, args []string, env map[string]string) ([]kit.Tool, *kit.Env, error) {
	t.Helper()
	return mcptest.Setup(t, spec(), args, env)
}

// TestServiceAccountDelegation: GMAIL_USER is the mailbox a service
// account acts for, checked at start-up — a missing grant or a mailbox the
// credentials cannot open stops the server.
func TestServiceAccountDelegation(t *testing.T) {
	a, f, env := fakes(t)
	f.AddMailbox("ops@jetvision.example")
	key := a.ServiceAccountKey(t, "mailer@proj.iam.gserviceaccount.com")
	keyPath := filepath.Join(t.TempDir(), "key.json")
	_ = os.WriteFile(keyPath, key, 0o600)
	env["GMAIL_SERVICE_ACCOUNT_KEY_PATH"] = keyPath
	delete(env, "GMAIL_CLIENT_ID")
	delete(env, "GMAIL_CLIENT_SECRET")
	if _, _, err := setup(t, nil, env); err == nil || !strings.Contains(err.Error(), "GMAIL_USER") {
		t.Errorf("no user: %v", err)
	}
	env["GMAIL_USER"] = "ops@jetvision.example"
	_, _, err := setup(t, nil, env)
	if err == nil || !strings.Contains(err.Error(), "domain-wide delegation") {
		t.Fatalf("without delegation: %v", err)
	}
	a.AllowDelegation("mailer@proj.iam.gserviceaccount.com", "ops@jetvision.example")
	ts, e, err := setup(t, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	if rep := e.Health.Report(context.Background()); !rep.OK || !slices.Contains(rep.Parts, "gmail") {
		t.Errorf("health %+v", rep)
	}
	srv, err := kit.New(kit.Info{Name: "gmail"}, ts, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, srv, "")
	var out struct {
		ID string `json:"id"`
	}
	mcptest.Structured(t, c.Call("send_email", map[string]any{"to": "client@example.org", "subject": "From ops", "body": "x"}), &out)
	if msgs := f.Messages("ops@jetvision.example"); len(msgs) != 1 || !strings.Contains(msgs[0].Parsed.From, "ops@jetvision.example") {
		t.Errorf("not sent from the delegated mailbox: %v", msgs)
	}
	// A person signed in as jane cannot pass for another mailbox.
	_, _, env2 := fakes(t)
	a2 := googleauthtest.New(t)
	_ = a2
	env2["GMAIL_USER"] = "boss@example.com"
	env2["GMAIL_REFRESH_TOKEN"] = "1//unknown"
	if _, _, err := setup(t, nil, env2); err == nil {
		t.Error("a mismatched GMAIL_USER started")
	}
}

func TestSetupLocal(t *testing.T) {
	dir := t.TempDir()
	ts, e, err := setup(t, []string{"--templates-dir", mcptest.RepoFile(t, "configs", "gmail", "templates")}, map[string]string{"MCP_DATA_DIR": dir})
	if err != nil || len(ts) != len(tools.Names) {
		t.Fatalf("%d tools, %v", len(ts), err)
	}
	if rep := e.Health.Report(context.Background()); !rep.OK || !slices.Contains(rep.Parts, "local-mailbox") {
		t.Errorf("health %+v", rep)
	}
	for _, d := range []string{"outbox", "mailbox/sent", "mailbox/inbox"} {
		if info, err := os.Stat(filepath.Join(dir, "gmail", d)); err != nil || !info.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, _, err := setup(t, []string{"--backend", "gmail"}, map[string]string{"MCP_DATA_DIR": dir}); err == nil || !strings.Contains(err.Error(), "CLIENT_ID") {
		t.Errorf("gmail without credentials: %v", err)
	}
	if _, _, err := setup(t, []string{"--templates-dir", dir}, map[string]string{"MCP_DATA_DIR": dir}); err != nil {
		t.Errorf("an override directory without templates: %v", err)
	}
	bad := t.TempDir()
	_ = os.WriteFile(filepath.Join(bad, "broken.json"), []byte(`{"subject":"{{.x"}`), 0o600)
	_ = os.WriteFile(filepath.Join(bad, "broken.txt"), []byte(`x`), 0o600)
	if _, _, err := setup(t, []string{"--templates-dir", bad}, map[string]string{"MCP_DATA_DIR": dir}); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a broken template: %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	mcptest.CheckCLI(t, mcptest.Build(t, pkg), nil, []mcptest.CLICase{
		{Name: "--help", Args: []string{"--help"}, Stdout: []string{"GMAIL_USER", "GMAIL_CLIENT_ID", "GOOGLE_REFRESH_TOKEN", "GMAIL_CONFIRM_SEND", "GMAIL_ALLOWED_RECIPIENTS", "auth"}},
		{Name: "--version", Args: []string{"--version"}, Stdout: []string{"gmail-mcp dev (commit unknown)"}},
		{Name: "auth --help", Args: []string{"auth", "--help"}, Stdout: []string{"--read-only", "GMAIL_CLIENT_SECRET", "--open-browser"}},
		{Name: "key without user", Env: []string{"GMAIL_SERVICE_ACCOUNT_KEY_PATH=/k.json"}, Code: 2, Stderr: []string{"GMAIL_USER"}},
		{Name: "bad user", Env: []string{"GMAIL_USER=not an address"}, Code: 2, Stderr: []string{"GMAIL_USER"}},
		{Name: "bad allowlist", Env: []string{"GMAIL_ALLOWED_RECIPIENTS=example"}, Code: 2, Stderr: []string{"GMAIL_ALLOWED_RECIPIENTS"}},
		{Name: "bad attachment cap", Args: []string{"--max-attachment-bytes", "0"}, Code: 2, Stderr: []string{"max-attachment-bytes"}},
		{Name: "templates dir missing", Args: []string{"--templates-dir", "/nonexistent/templates"}, Code: 2, Stderr: []string{"/nonexistent/templates", "a path setting is wrong"}},
		{Name: "auth without client", Args: []string{"auth"}, Code: 2, Stderr: []string{"GMAIL_CLIENT_ID or GOOGLE_CLIENT_ID"}},
		{Name: "auth for no tools", Env: []string{"GMAIL_CLIENT_ID=x", "GMAIL_CLIENT_SECRET=y"}, Args: []string{"auth", "--tools", "list_templates"}, Code: 1, Stderr: []string{"no Google access"}},
		{Name: "agent not in the ACL", Env: []string{"MCP_ACL_FILE=" + mcptest.RepoFile(t, "configs", "acl.yaml"), "MCP_AGENT=nosuch"}, Code: 2, Stderr: []string{"nosuch"}},
		{Name: "docs", Args: []string{"docs"}, Stdout: []string{"## gmail-mcp reference", "send_template_email"}},
		{Name: "empty stdin is a clean exit"},
	})
}

// TestStdioLocal: the binary with nothing configured keeps mail as .eml
// files in its data directory, and reads threads back.
func TestStdioLocal(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"MCP_DATA_DIR=" + data, "GMAIL_FROM_NAME=Charter Desk"})
	if c.Init.ServerInfo.Name != "gmail" || !strings.Contains(c.Init.Instructions, "reply_to_message_id") {
		t.Errorf("initialize %+v", c.Init.ServerInfo)
	}
	got := c.ToolNames()
	slices.Sort(got)
	if !slices.Equal(got, slices.Sorted(slices.Values(tools.Names))) {
		t.Errorf("tools %v", got)
	}
	var out struct {
		ID       string `json:"id"`
		ThreadID string `json:"thread_id"`
	}
	mcptest.Structured(t, c.Call("send_email", map[string]any{"to": "client@example.org", "subject": "Hello", "body": "<p>Hi</p>"}), &out)
	raw, err := os.ReadFile(filepath.Join(data, "gmail", "mailbox", "sent", out.ID+".eml"))
	if err != nil || !bytes.Contains(raw, []byte("From: \"Charter Desk\" <agent@mailbox.local>")) && !bytes.Contains(raw, []byte("From: Charter Desk <agent@mailbox.local>")) {
		t.Errorf("the .eml file: %v\n%.300s", err, raw)
	}
	var th struct {
		MessageCount int `json:"message_count"`
	}
	mcptest.Structured(t, c.Call("get_thread_history", map[string]any{"thread_id": out.ThreadID}), &th)
	if th.MessageCount != 1 {
		t.Errorf("thread %+v", th)
	}
}
