package kit_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/oauth/oauthtest"
)

const demoIdentityPolicy = demoPolicy + `
identities:
  - subject: alice
    agent: reader
`

func TestMainOAuthHelp(t *testing.T) {
	code, out, _ := runMain(t, &demo{}, []string{"--help"}, nil)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for name, env := range map[string]string{"oauth-issuer": "MCP_OAUTH_ISSUER", "oauth-resource": "MCP_OAUTH_RESOURCE",
		"oauth-scopes": "MCP_OAUTH_SCOPES", "oauth-required-scopes": "MCP_OAUTH_REQUIRED_SCOPES", "oauth-audiences": "MCP_OAUTH_AUDIENCES",
		"oauth-jwks-url": "MCP_OAUTH_JWKS_URL", "oauth-groups-claim": "MCP_OAUTH_GROUPS_CLAIM", "oauth-clock-skew": "MCP_OAUTH_CLOCK_SKEW",
		"oauth-introspection-client-id": "MCP_OAUTH_INTROSPECTION_CLIENT_ID"} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "--"+name+" ") && strings.Contains(l, "$"+env) {
				found = true
			}
		}
		if !found {
			t.Errorf("help lacks --%s [$%s]", name, env)
		}
	}
	if !strings.Contains(out, "$MCP_OAUTH_INTROSPECTION_CLIENT_SECRET") || strings.Contains(out, "--MCP_OAUTH_INTROSPECTION_CLIENT_SECRET") {
		t.Error("help lacks the introspection secret, or lists it as a flag")
	}
	if !strings.Contains(out, "(default 30s)") || !strings.Contains(out, "(default groups)") {
		t.Error("help lacks the OAuth defaults")
	}
}

func TestMainOAuthRefusesBadConfiguration(t *testing.T) {
	as := oauthtest.NewServer(t)
	liar := oauthtest.NewServer(t)
	liar.Issuer = "https://idp.example.com"
	policy := writeFile(t, "acl.yaml", demoPolicy)
	unknownAgent := writeFile(t, "ghost.yaml", demoPolicy+"identities:\n  - subject: alice\n    agent: ghost\n")
	httpEnv := func(kv ...string) map[string]string {
		m := map[string]string{"MCP_TRANSPORT": "http", "MCP_PORT": "0"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	res := "https://mcp.example.com/mcp"
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"resource missing", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL), []string{"MCP_OAUTH_RESOURCE", "required"}},
		{"resource relative", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", "/mcp"), []string{"MCP_OAUTH_RESOURCE", "absolute"}},
		{"resource with a fragment", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", res+"#x"), []string{"fragment"}},
		{"resource on http off loopback", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", "http://mcp.example.com/mcp"), []string{"MCP_OAUTH_RESOURCE", "https"}},
		{"issuer on http off loopback", []string{"--oauth-issuer", "http://idp.example.com", "--oauth-resource", res}, httpEnv(), []string{"MCP_OAUTH_ISSUER", "https"}},
		{"issuer mismatch", nil, httpEnv("MCP_OAUTH_ISSUER", liar.URL, "MCP_OAUTH_RESOURCE", res), []string{"MCP_OAUTH_ISSUER", "another issuer", "byte for byte"}},
		{"resource without issuer", nil, httpEnv("MCP_OAUTH_RESOURCE", res, "MCP_AUTH_TOKEN", httpToken), []string{"MCP_OAUTH_RESOURCE is set but MCP_OAUTH_ISSUER"}},
		{"OAuth on stdio", nil, map[string]string{"MCP_OAUTH_ISSUER": as.URL, "MCP_OAUTH_RESOURCE": res}, []string{"stdio transport"}},
		{"bad skew", nil, httpEnv("MCP_OAUTH_CLOCK_SKEW", "30"), []string{"MCP_OAUTH_CLOCK_SKEW", "30s"}},
		{"identities naming an unknown agent", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", res, "MCP_ACL_FILE", unknownAgent),
			[]string{"identities[0]", `"ghost"`}},
		{"policy without identities", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", res, "MCP_ACL_FILE", policy),
			[]string{"identities"}},
		{"introspection secret without its client", nil, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", res,
			"MCP_OAUTH_INTROSPECTION_CLIENT_SECRET", "s3cret-introspection"), []string{"give both"}},
		{"introspection secret without OAuth", nil, httpEnv("MCP_AUTH_TOKEN", httpToken,
			"MCP_OAUTH_INTROSPECTION_CLIENT_SECRET", "s3cret-introspection"), []string{"MCP_OAUTH_INTROSPECTION_CLIENT_SECRET is set but"}},
		{"OAuth and no auth", []string{"--insecure-no-auth"}, httpEnv("MCP_OAUTH_ISSUER", as.URL, "MCP_OAUTH_RESOURCE", res), []string{"cannot be combined with OAuth"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runMain(t, &demo{}, tc.args, tc.env)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if strings.Contains(errOut, "s3cret") {
				t.Errorf("stderr shows a secret: %q", errOut)
			}
		})
	}
}

func TestMainOAuthServes(t *testing.T) {
	as := oauthtest.NewServer(t)
	policy := writeFile(t, "acl.yaml", demoIdentityPolicy)
	d := &demo{}
	base, stop, stderr := runHTTP(t, d, nil, map[string]string{
		"MCP_TRANSPORT": "http", "MCP_PORT": "0", "MCP_ACL_FILE": policy,
		"MCP_OAUTH_ISSUER": as.URL, "MCP_OAUTH_RESOURCE": "http://127.0.0.1/mcp", "MCP_OAUTH_SCOPES": "mcp:tools",
		"MCP_OAUTH_CLOCK_SKEW": "0s",
	})
	tok := as.Sign(t, as.Claims("http://127.0.0.1/mcp"))
	c := dial(t, base, tok, false)
	if got := strings.Join(clientToolNames(t, c), ","); got != "peek" {
		t.Fatalf("alice sees %q", got)
	}
	if r := do(t, "GET", base+"/.well-known/oauth-protected-resource/mcp", "", "", "", nil); r.Status != 200 ||
		!strings.Contains(r.Body, `"resource_name":"demo"`) {
		t.Fatalf("PRM: %d %s", r.Status, r.Body)
	}
	expired := as.Claims("http://127.0.0.1/mcp")
	expired["exp"] = time.Now().Add(-2 * time.Second).Unix()
	if r := post(t, base, as.Sign(t, expired), "", legacyInit); r.Status != http.StatusUnauthorized ||
		!strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("a token expired 2s ago with no skew: %d %v", r.Status, r.Header)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	logs := stderr.String()
	for _, want := range []string{`"message":"OAuth: accepting access tokens"`, `"identity_rules":1`, `"keys_loaded":true`} {
		if !strings.Contains(logs, want) {
			t.Errorf("start-up log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, tok) {
		t.Fatal("the token reached the log")
	}
}

// TestMainOAuthOpenToAllWarns: OAuth with neither a policy nor a required
// scope gives every tool to anyone the authorization server issues a
// token for this resource; the start-up log says so, and only then.
func TestMainOAuthOpenToAllWarns(t *testing.T) {
	as := oauthtest.NewServer(t)
	const warning = "no ACL policy and no required scopes"
	for _, required := range []string{"", "mcp:tools"} {
		_, stop, stderr := runHTTP(t, &demo{}, nil, map[string]string{
			"MCP_TRANSPORT": "http", "MCP_PORT": "0",
			"MCP_OAUTH_ISSUER": as.URL, "MCP_OAUTH_RESOURCE": "http://127.0.0.1/mcp", "MCP_OAUTH_REQUIRED_SCOPES": required,
		})
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), warning); got != (required == "") {
			t.Errorf("required scopes %q: warning logged %v:\n%s", required, got, stderr.String())
		}
	}
}
