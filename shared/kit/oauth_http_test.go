package kit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth/oauthtest"
)

const oauthResource = "https://mcp.example.com/mcp"

// modernCall is a protocol 2026-07-28 tools/call of echo: it needs no
// session, so a request that passed authentication would run the tool.
const modernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

var modernHeaders = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}

// oauthFixture is a kit server accepting OAuth tokens of a test
// authorization server.
type oauthFixture struct {
	as   *oauthtest.Server
	s    *kit.Server
	base string
	logs *mcptest.Buffer
}

func newOAuthFixture(t *testing.T, policy *acl.Policy, mod func(*oauth.Config), o kit.HTTPOptions) *oauthFixture {
	t.Helper()
	as := oauthtest.NewServer(t)
	cfg := oauth.Config{Issuer: as.Issuer, Resource: oauthResource, Scopes: []string{"mcp:tools"},
		RequiredScopes: []string{"mcp:tools"}, ClockSkew: 30 * time.Second, ResourceName: "test"}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := oauth.NewVerifier(ctx, cfg, oauth.Options{RefetchEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	logs := &mcptest.Buffer{}
	red := logging.NewRedactor()
	log := logging.New(logs, "debug", red, "test")
	s := newServer(t, kit.Options{Policy: policy, Logger: &log, Redactor: red})
	o.OAuth = v
	return &oauthFixture{as: as, s: s, base: startHTTP(t, s, o), logs: logs}
}

func (fx *oauthFixture) token(t *testing.T, mod func(jwt.MapClaims)) string {
	t.Helper()
	c := fx.as.Claims(oauthResource)
	c["email"] = "alice@example.com"
	if mod != nil {
		mod(c)
	}
	return fx.as.Sign(t, c)
}

// auditLines returns the tool_call audit lines logged so far.
func (fx *oauthFixture) auditLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(fx.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["event"] == "tool_call" {
			out = append(out, m)
		}
	}
	return out
}

const wantRM = `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`

func TestOAuthWithoutPolicy(t *testing.T) {
	fx := newOAuthFixture(t, nil, nil, kit.HTTPOptions{})
	tok := fx.token(t, nil)

	t.Run("valid token: every tool, principal in the audit line", func(t *testing.T) {
		c := dial(t, fx.base, tok, true)
		if got := strings.Join(clientToolNames(t, c), ","); got != strings.Join(fx.s.ToolNames(), ",") {
			t.Fatalf("tools/list %q", got)
		}
		var out struct {
			Text, Agent string
		}
		mcptest.OK(t, clientCall(t, c, "echo", map[string]any{"text": "hi"}), &out)
		if out.Text != "hi" || out.Agent != "" {
			t.Fatalf("echo %+v", out)
		}
		mcptest.WaitFor(t, "the audit line", func() bool { return len(fx.auditLines(t)) == 1 })
		l := fx.auditLines(t)[0]
		if l["auth"] != "oauth" || l["sub"] != "alice" || l["name"] != "alice@example.com" || l["client_id"] != "test-client" || l["agent"] != "" {
			t.Fatalf("audit line %v", l)
		}
		if strings.Contains(fx.logs.String(), tok) || strings.Contains(fx.logs.String(), strings.Split(tok, ".")[2]) {
			t.Fatal("the token reached the log")
		}
	})

	refusals := []struct {
		name   string
		token  string
		hdr    map[string]string
		status int
		header string
	}{
		{"no token", "", nil, 401, `Bearer ` + wantRM + `, scope="mcp:tools"`},
		{"token in the query string", "", nil, 401, `Bearer ` + wantRM + `, scope="mcp:tools"`},
		{"wrong aud", fx.token(t, func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" }), nil, 401,
			`Bearer ` + wantRM + `, scope="mcp:tools", error="invalid_token", error_description="audience mismatch"`},
		{"expired", fx.token(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), nil, 401,
			`Bearer ` + wantRM + `, scope="mcp:tools", error="invalid_token", error_description="token expired"`},
		{"wrong iss", fx.token(t, func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }), nil, 401,
			`Bearer ` + wantRM + `, scope="mcp:tools", error="invalid_token", error_description="issuer mismatch"`},
		{"foreign key", oauthtest.SignWith(t, oauthtest.NewRSAKey(t, "rsa-1"), fx.as.Claims(oauthResource)), nil, 401,
			`Bearer ` + wantRM + `, scope="mcp:tools", error="invalid_token", error_description="signature invalid"`},
		{"missing required scope", fx.token(t, func(c jwt.MapClaims) { c["scope"] = "openid" }), nil, 403,
			`Bearer error="insufficient_scope", scope="openid mcp:tools", ` + wantRM + `, error_description="the token lacks a required scope"`},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			url := fx.base + "/mcp"
			if tc.name == "token in the query string" {
				url += "?access_token=" + tok
			}
			r := do(t, http.MethodPost, url, tc.token, "", modernCall, modernHeaders)
			if r.Status != tc.status || r.Header.Get("WWW-Authenticate") != tc.header {
				t.Fatalf("status %d, WWW-Authenticate %q\nwant %d %q", r.Status, r.Header.Get("WWW-Authenticate"), tc.status, tc.header)
			}
			if r.errorCode() != -32001 {
				t.Fatalf("body %s", r.Body)
			}
		})
	}
	if n := calls(fx.s, "echo"); n != 1 {
		t.Fatalf("echo ran %d times; only the valid token's call may run", n)
	}
	if n := len(fx.auditLines(t)); n != 1 {
		t.Fatalf("%d audit lines, want only the valid call's", n)
	}
	logs := fx.logs.String()
	for _, want := range []string{`"reason":"aud","sub":"alice"`, `"reason":"exp"`, `"reason":"sig"`, `"reason":"scope","sub":"alice"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("no refusal logged with %s", want)
		}
	}
	if strings.Contains(logs, tok) {
		t.Fatal("a token reached the log")
	}
}

func TestOAuthProtectedResourceMetadata(t *testing.T) {
	fx := newOAuthFixture(t, nil, nil, kit.HTTPOptions{})
	want := `{"resource":"https://mcp.example.com/mcp","authorization_servers":["` + fx.as.Issuer +
		`"],"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"],"resource_name":"test"}`
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := do(t, http.MethodGet, fx.base+path, "", "", "", nil)
		if r.Status != 200 || r.Body != want || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %q %v", path, r.Status, r.Body, r.Header)
		}
		r = do(t, http.MethodOptions, fx.base+path, "", "", "", map[string]string{"Origin": "https://inspector.example",
			"Access-Control-Request-Headers": "mcp-protocol-version"})
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("OPTIONS %s: %d %v", path, r.Status, r.Header)
		}
		if r := do(t, http.MethodPost, fx.base+path, "", "", "{}", nil); r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("POST %s: %d", path, r.Status)
		}
		if r := do(t, http.MethodGet, fx.base+path, "", "", "", map[string]string{"Host": "evil.example"}); r.Status != http.StatusForbidden {
			t.Fatalf("GET %s under a foreign Host: %d", path, r.Status)
		}
	}
	if r := do(t, http.MethodGet, fx.base+"/.well-known/oauth-protected-resource/other", "", "", "", nil); r.Status != 404 {
		t.Fatalf("another path: %d", r.Status)
	}
	plain := newServer(t, kit.Options{})
	base := startHTTP(t, plain, kit.HTTPOptions{AuthToken: httpToken})
	if r := do(t, http.MethodGet, base+"/.well-known/oauth-protected-resource", "", "", "", nil); r.Status != 404 {
		t.Fatalf("PRM served without OAuth: %d", r.Status)
	}
	root := newOAuthFixture(t, nil, func(c *oauth.Config) { c.Resource = "https://mcp.example.com/public/mcp" }, kit.HTTPOptions{})
	if r := do(t, http.MethodGet, root.base+"/.well-known/oauth-protected-resource/public/mcp", "", "", "", nil); r.Status != 200 {
		t.Fatalf("PRM at the resource's own path: %d", r.Status)
	}
}

const identityPolicy = testPolicy + `
identities:
  - subject: alice
    agent: reader
  - groups: [writers]
    agent: writer
`

func TestOAuthWithPolicy(t *testing.T) {
	p, err := acl.Parse([]byte(identityPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddToken("writer", writerToken); err != nil {
		t.Fatal(err)
	}
	fx := newOAuthFixture(t, p, nil, kit.HTTPOptions{})
	alice := fx.token(t, nil)
	bob := fx.token(t, func(c jwt.MapClaims) { c["sub"], c["groups"], c["email"] = "bob", []any{"writers"}, "bob@example.com" })
	carol := fx.token(t, func(c jwt.MapClaims) { c["sub"], c["groups"] = "carol", []any{"writers"} })

	t.Run("mapped identities act as their agents", func(t *testing.T) {
		c := dial(t, fx.base, alice, true)
		if got := strings.Join(clientToolNames(t, c), ","); got != "echo,slow" {
			t.Fatalf("alice sees %q", got)
		}
		var out struct{ Agent string }
		mcptest.OK(t, clientCall(t, c, "echo", map[string]any{"text": "x"}), &out)
		if out.Agent != "reader" {
			t.Fatalf("alice ran as %q", out.Agent)
		}
		mcptest.FailCode(t, clientCall(t, c, "write", map[string]any{}), mcperr.PermissionDeny)
		c2 := dial(t, fx.base, bob, false)
		if got := strings.Join(clientToolNames(t, c2), ","); got != "echo,write" {
			t.Fatalf("bob sees %q", got)
		}
		mcptest.WaitFor(t, "the audit lines", func() bool { return len(fx.auditLines(t)) == 2 })
		for _, l := range fx.auditLines(t) {
			if l["auth"] != "oauth" || l["agent"] != "reader" || l["sub"] != "alice" {
				t.Fatalf("audit line %v", l)
			}
		}
	})
	t.Run("static token still works beside OAuth", func(t *testing.T) {
		r := do(t, http.MethodPost, fx.base+"/mcp", writerToken, "", modernCall, modernHeaders)
		if r.Status != 200 {
			t.Fatalf("static token: %d %s", r.Status, r.Body)
		}
		mcptest.WaitFor(t, "the audit line", func() bool { return len(fx.auditLines(t)) == 3 })
		found := false
		for _, l := range fx.auditLines(t) {
			if l["auth"] == "token" && l["agent"] == "writer" && l["sub"] == nil {
				found = true
			}
		}
		if !found {
			t.Fatalf("no audit line for the static token: %v", fx.auditLines(t))
		}
	})
	t.Run("unmapped identity: 403 without insufficient_scope", func(t *testing.T) {
		before := calls(fx.s, "echo")
		dave := fx.token(t, func(c jwt.MapClaims) { c["sub"] = "dave" })
		r := do(t, http.MethodPost, fx.base+"/mcp", dave, "", modernCall, modernHeaders)
		if r.Status != 403 || r.Header.Get("WWW-Authenticate") != "Bearer "+wantRM || r.errorCode() != -32001 ||
			!strings.Contains(r.Body, "mapped to no agent") {
			t.Fatalf("status %d, WWW-Authenticate %q, body %s", r.Status, r.Header.Get("WWW-Authenticate"), r.Body)
		}
		if calls(fx.s, "echo") != before {
			t.Fatal("the unmapped identity's call ran")
		}
		if !strings.Contains(fx.logs.String(), `"reason":"unmapped","sub":"dave"`) {
			t.Fatal("the refusal was not logged")
		}
	})
	t.Run("another identity's session id: 404, even for the same agent", func(t *testing.T) {
		sid := initSession(t, fx.base, bob)
		list := rpcCall(2, "tools/list", "")
		if r := post(t, fx.base, bob, sid, list); r.Status != 200 {
			t.Fatalf("owner: %d", r.Status)
		}
		for name, tok := range map[string]string{"carol (same agent)": carol, "alice": alice, "static writer token": writerToken} {
			if r := post(t, fx.base, tok, sid, list); r.Status != http.StatusNotFound {
				t.Errorf("%s using bob's session: %d, want 404", name, r.Status)
			}
			if r := do(t, http.MethodGet, fx.base+"/mcp", tok, sid, "", nil); r.Status != http.StatusNotFound {
				t.Errorf("%s listening on bob's session: %d, want 404", name, r.Status)
			}
			if r := do(t, http.MethodDelete, fx.base+"/mcp", tok, sid, "", nil); r.Status != http.StatusNotFound {
				t.Errorf("%s deleting bob's session: %d, want 404", name, r.Status)
			}
		}
		if r := post(t, fx.base, bob, sid, list); r.Status != 200 {
			t.Fatalf("bob's session after the others tried it: %d", r.Status)
		}
	})
}

func TestOAuthSSESessionBoundToIdentity(t *testing.T) {
	p, err := acl.Parse([]byte(identityPolicy))
	if err != nil {
		t.Fatal(err)
	}
	fx := newOAuthFixture(t, p, nil, kit.HTTPOptions{SSE: true})
	bob := fx.token(t, func(c jwt.MapClaims) { c["sub"], c["groups"] = "bob", []any{"writers"} })
	carol := fx.token(t, func(c jwt.MapClaims) { c["sub"], c["groups"] = "carol", []any{"writers"} })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fx.base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+bob)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	_, endpoint, ok := strings.Cut(string(buf[:n]), "data: ")
	if !ok {
		t.Fatalf("no endpoint event: %q", buf[:n])
	}
	endpoint = strings.TrimSpace(endpoint)
	r := do(t, http.MethodPost, fx.base+endpoint, carol, "", legacyInit, nil)
	if r.Status != http.StatusNotFound {
		t.Fatalf("carol posting to bob's SSE session: %d, want 404", r.Status)
	}
	if r := do(t, http.MethodPost, fx.base+endpoint, bob, "", legacyInit, nil); r.Status != http.StatusAccepted {
		t.Fatalf("bob posting to his SSE session: %d", r.Status)
	}
}

func TestOAuthKeysUnavailable(t *testing.T) {
	as := oauthtest.NewServer(t)
	down := oauthtest.NewServer(t)
	down.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := oauth.NewVerifier(ctx, oauth.Config{Issuer: down.URL, Resource: oauthResource},
		oauth.Options{Timeout: time.Second, RetryEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{OAuth: v})
	r := do(t, http.MethodPost, base+"/mcp", as.Sign(t, as.Claims(oauthResource)), "", modernCall, modernHeaders)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || calls(s, "echo") != 0 {
		t.Fatalf("status %d, headers %v, echo calls %d", r.Status, r.Header, calls(s, "echo"))
	}
}

func TestCheckHTTPOptionsOAuth(t *testing.T) {
	as := oauthtest.NewServer(t)
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuer: as.Issuer, Resource: oauthResource}, oauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := newServer(t, kit.Options{}).HTTPHandler(kit.HTTPOptions{Addr: "127.0.0.1:0", OAuth: v}); err != nil {
		t.Fatalf("OAuth alone: %v", err)
	}
	if _, _, err := newServer(t, kit.Options{}).HTTPHandler(kit.HTTPOptions{Addr: "127.0.0.1:0", OAuth: v, NoAuth: true}); err == nil ||
		!strings.Contains(err.Error(), "cannot be combined with OAuth") {
		t.Fatalf("OAuth and --insecure-no-auth: %v", err)
	}
	if _, _, err := newServer(t, kit.Options{Policy: mustPolicy(t)}).HTTPHandler(kit.HTTPOptions{Addr: "127.0.0.1:0", OAuth: v}); err == nil ||
		!strings.Contains(err.Error(), "identities") {
		t.Fatalf("OAuth with a policy without identities: %v", err)
	}
}

func TestOAuthTokenDoesNotOpenMetrics(t *testing.T) {
	fx := newOAuthFixture(t, nil, nil, kit.HTTPOptions{AuthToken: httpToken})
	tok := fx.token(t, nil)
	if r := do(t, http.MethodGet, fx.base+"/metrics", tok, "", "", nil); r.Status != 401 || r.Header.Get("WWW-Authenticate") != `Bearer realm="mcp-fleet"` {
		t.Fatalf("OAuth token on /metrics: %d %v", r.Status, r.Header)
	}
	if r := do(t, http.MethodGet, fx.base+"/metrics", httpToken, "", "", nil); r.Status != 200 {
		t.Fatalf("static token on /metrics: %d", r.Status)
	}
	if r := do(t, http.MethodPost, fx.base+"/mcp", httpToken, "", modernCall, modernHeaders); r.Status != 200 {
		t.Fatalf("static token on /mcp beside OAuth: %d %s", r.Status, r.Body)
	}
}

func TestOAuthOpaqueTokenIntrospected(t *testing.T) {
	p, err := acl.Parse([]byte(identityPolicy))
	if err != nil {
		t.Fatal(err)
	}
	fx := newOAuthFixture(t, p, func(c *oauth.Config) {
		c.IntrospectionClientID, c.IntrospectionSecret = oauthtest.IntrospectionClient, oauthtest.IntrospectionSecret
	}, kit.HTTPOptions{})
	fx.as.SetOpaque("opaque-alice-0123456789", map[string]any{"active": true, "iss": fx.as.Issuer, "sub": "alice",
		"aud": oauthResource, "scope": "mcp:tools", "exp": float64(time.Now().Add(time.Hour).Unix())})
	c := dial(t, fx.base, "opaque-alice-0123456789", true)
	if got := strings.Join(clientToolNames(t, c), ","); got != "echo,slow" {
		t.Fatalf("alice (opaque token) sees %q", got)
	}
	r := do(t, http.MethodPost, fx.base+"/mcp", "opaque-unknown-0123456789", "", modernCall, modernHeaders)
	if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token", error_description="token inactive"`) {
		t.Fatalf("inactive opaque token: %d %v", r.Status, r.Header)
	}
	if calls(fx.s, "echo") != 0 {
		t.Fatal("the inactive token's call ran")
	}
}
