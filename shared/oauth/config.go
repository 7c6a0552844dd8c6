// Package oauth makes an MCP server an OAuth 2.1 resource server: it
// checks that a bearer access token (a JWT) was issued by the configured
// authorization server, for this resource (RFC 8707 audience), is current
// and carries the required scopes, and turns it into an Identity. It also
// builds what clients use to find the authorization server: the Protected
// Resource Metadata document (RFC 9728) and the WWW-Authenticate challenges
// of 401 and 403 answers.
//
// The raw token is never kept: a Verifier returns the validated claims
// only, so nothing downstream can pass the token on to another service.
package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/urlrule"
)

// DefaultClockSkew is the leeway given to exp, nbf and iat.
const DefaultClockSkew = 30 * time.Second

// Config is a resource server's OAuth configuration.
type Config struct {
	// Issuer is the authorization server's issuer identifier; it must equal
	// the issuer its metadata and its tokens state, byte for byte.
	Issuer string
	// Resource is this server's canonical URL (RFC 8707 resource
	// identifier): the PRM's resource and the audience tokens must carry.
	Resource string
	// Scopes are advertised: scopes_supported in the PRM and scope in a 401.
	Scopes []string
	// RequiredScopes must all be held by a token, else 403 insufficient_scope.
	RequiredScopes []string
	// Audiences are accepted besides Resource, for authorization servers
	// that cannot put the resource in aud.
	Audiences []string
	// JWKSURL, when set, is used instead of the jwks_uri of the metadata.
	JWKSURL string
	// GroupsClaim names the claim holding the caller's groups: a top-level
	// claim name (which may contain dots, as URL-named claims do), else a
	// dotted path into nested objects such as app_metadata.roles.
	GroupsClaim string
	// ClockSkew is the leeway for time claims (the kit's flag defaults it
	// to DefaultClockSkew); zero means none.
	ClockSkew time.Duration
	// ResourceName is the human-readable resource_name of the PRM.
	ResourceName string
	// IntrospectionClientID and IntrospectionSecret, when set, let opaque
	// (non-JWT) access tokens be checked at the authorization server's
	// introspection endpoint (RFC 7662), as this client.
	IntrospectionClientID string
	IntrospectionSecret   string
}

// Introspects reports whether opaque tokens are introspected.
func (c Config) Introspects() bool { return c.IntrospectionClientID != "" }

// Enabled reports whether OAuth is configured at all.
func (c Config) Enabled() bool { return c.Issuer != "" }

// Validate refuses a configuration under which tokens could be stolen or
// accepted for the wrong server; it canonicalizes Resource (lowercase
// scheme and host) in place. Each error names the variable at fault.
func (c *Config) Validate() error {
	if c.Issuer == "" {
		return errors.New("MCP_OAUTH_ISSUER: the authorization server's issuer URL is required")
	}
	if err := checkURL(c.Issuer, false); err != nil {
		return fmt.Errorf("MCP_OAUTH_ISSUER %q: %w", c.Issuer, err)
	}
	if c.Resource == "" {
		return errors.New("MCP_OAUTH_RESOURCE: this server's public URL (such as https://mcp.example.com/mcp) is required with MCP_OAUTH_ISSUER: tokens must name it as their audience")
	}
	if err := checkURL(c.Resource, true); err != nil {
		return fmt.Errorf("MCP_OAUTH_RESOURCE %q: %w", c.Resource, err)
	}
	c.Resource = canonical(c.Resource)
	if c.JWKSURL != "" {
		if err := checkURL(c.JWKSURL, false); err != nil {
			return fmt.Errorf("MCP_OAUTH_JWKS_URL %q: %w", c.JWKSURL, err)
		}
	}
	for _, s := range append(append([]string(nil), c.Scopes...), c.RequiredScopes...) {
		if !validScope(s) {
			return fmt.Errorf("MCP_OAUTH_SCOPES/MCP_OAUTH_REQUIRED_SCOPES: %q is not a scope (printable ASCII without spaces, quotes or backslashes)", s)
		}
	}
	if (c.IntrospectionClientID == "") != (c.IntrospectionSecret == "") {
		return errors.New("MCP_OAUTH_INTROSPECTION_CLIENT_ID and MCP_OAUTH_INTROSPECTION_CLIENT_SECRET: give both (to introspect opaque tokens) or neither")
	}
	if c.ClockSkew < 0 || c.ClockSkew > 10*time.Minute {
		return fmt.Errorf("MCP_OAUTH_CLOCK_SKEW %s: want 0 to 10m", c.ClockSkew)
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	return nil
}

// checkURL: absolute, no fragment, https unless the host is loopback.
// Plain http anywhere else would let anyone on the path read tokens, or
// serve keys of their own.
func checkURL(raw string, resource bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if !u.IsAbs() || u.Host == "" {
		return errors.New("want an absolute URL such as https://host/path")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("must not have a fragment (#…)")
	}
	if u.User != nil {
		return errors.New("must not carry user information")
	}
	if resource && u.RawQuery != "" {
		return errors.New("should not have a query: clients compare it with the endpoint URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !urlrule.IsLoopbackHost(u.Hostname()) {
			return errors.New("must use https (http is accepted on a loopback host only)")
		}
	default:
		return fmt.Errorf("scheme %q: want https", u.Scheme)
	}
	return nil
}

// canonical lowercases a URL's scheme and host (RFC 8707 §2; clients
// send them lowercased), keeping the path as given.
func canonical(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	return u.String()
}

// validScope: RFC 6749 §3.3 scope-token, minus the characters that would
// need escaping inside a quoted WWW-Authenticate parameter.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
