package oauth_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
)

func TestConfigValidate(t *testing.T) {
	good := func() oauth.Config {
		return oauth.Config{Issuer: "https://idp.example.com/realms/fleet", Resource: "https://mcp.example.com/mcp"}
	}
	c := good()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.ClockSkew != 0 || c.GroupsClaim != "groups" {
		t.Fatalf("defaults %+v", c)
	}
	for _, ok := range []func(*oauth.Config){
		func(c *oauth.Config) { c.Issuer = "http://127.0.0.1:8080" },
		func(c *oauth.Config) { c.Resource = "http://localhost:8080/mcp" },
		func(c *oauth.Config) { c.Resource = "http://[::1]:8080" },
		func(c *oauth.Config) { c.JWKSURL = "https://idp.example.com/certs" },
	} {
		c := good()
		ok(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%+v refused: %v", c, err)
		}
	}
	cases := []struct {
		mod  func(*oauth.Config)
		want string
	}{
		{func(c *oauth.Config) { c.Issuer = "" }, "MCP_OAUTH_ISSUER"},
		{func(c *oauth.Config) { c.Issuer = "http://idp.example.com" }, "MCP_OAUTH_ISSUER"},
		{func(c *oauth.Config) { c.Issuer = "idp.example.com" }, "absolute"},
		{func(c *oauth.Config) { c.Resource = "" }, "MCP_OAUTH_RESOURCE"},
		{func(c *oauth.Config) { c.Resource = "/mcp" }, "absolute"},
		{func(c *oauth.Config) { c.Resource = "https://mcp.example.com/mcp#frag" }, "fragment"},
		{func(c *oauth.Config) { c.Resource = "http://mcp.example.com/mcp" }, "https"},
		{func(c *oauth.Config) { c.Resource = "ftp://mcp.example.com/mcp" }, "scheme"},
		{func(c *oauth.Config) { c.Resource = "https://mcp.example.com/mcp?x=1" }, "query"},
		{func(c *oauth.Config) { c.Resource = "https://u:p@mcp.example.com/mcp" }, "user"},
		{func(c *oauth.Config) { c.Resource = "https://mcp.example.com/%zz" }, "not a URL"},
		{func(c *oauth.Config) { c.JWKSURL = "http://idp.example.com/certs" }, "MCP_OAUTH_JWKS_URL"},
		{func(c *oauth.Config) { c.Scopes = []string{`bad"scope`} }, "not a scope"},
		{func(c *oauth.Config) { c.RequiredScopes = []string{"two words"} }, "not a scope"},
		{func(c *oauth.Config) { c.ClockSkew = time.Hour }, "MCP_OAUTH_CLOCK_SKEW"},
	}
	for _, tc := range cases {
		c := good()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want it to mention %q", c, err, tc.want)
		}
	}
}

func TestPRMAndChallenges(t *testing.T) {
	cfg := oauth.Config{Issuer: "https://idp.example.com", Resource: "https://mcp.example.com/mcp",
		Scopes: []string{"mcp:tools"}, RequiredScopes: []string{"mcp:tools"}, ResourceName: "devtools"}
	if got, want := string(oauth.PRM(cfg)), `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://idp.example.com"],"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"],"resource_name":"devtools"}`; got != want {
		t.Fatalf("PRM\n got %s\nwant %s", got, want)
	}
	rm := `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
	cases := []struct {
		err    error
		status int
		header string
	}{
		{oauth.ErrNoToken, 401, `Bearer ` + rm + `, scope="mcp:tools"`},
		{&oauth.InvalidTokenError{Reason: "exp", Description: "token expired"}, 401,
			`Bearer ` + rm + `, scope="mcp:tools", error="invalid_token", error_description="token expired"`},
		{&oauth.InsufficientScopeError{Required: []string{"mcp:tools"}, Held: []string{"openid"}}, 403,
			`Bearer error="insufficient_scope", scope="openid mcp:tools", ` + rm + `, error_description="the token lacks a required scope"`},
		{&oauth.InsufficientScopeError{Required: []string{"mcp:tools"}, Held: []string{"openid", "a\"b", "x\x01y", "caf\u00e9", "crlf\r\nX-Injected:1", "", "profile"}}, 403,
			`Bearer error="insufficient_scope", scope="openid profile mcp:tools", ` + rm + `, error_description="the token lacks a required scope"`},
		{oauth.ErrUnmapped, 403, `Bearer ` + rm},
		{oauth.ErrUnavailable, http.StatusServiceUnavailable, ``},
	}
	for _, tc := range cases {
		status, h := oauth.Challenge(cfg, tc.err)
		if status != tc.status || h != tc.header {
			t.Errorf("%v: %d %s\nwant %d %s", tc.err, status, h, tc.status, tc.header)
		}
	}
	root := cfg
	root.Resource, root.Scopes, root.RequiredScopes = "https://mcp.example.com", nil, nil
	if _, h := oauth.Challenge(root, errors.New("other")); h != `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"` {
		t.Fatalf("root resource: %s", h)
	}
	if e := (&oauth.InsufficientScopeError{Required: []string{"a"}}); !strings.Contains(e.Error(), "a") {
		t.Fatal(e.Error())
	}
}
