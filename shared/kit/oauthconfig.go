package kit

import (
	"context"
	"errors"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/rs/zerolog"
)

// oauthFlags are the kit's OAuth settings: with an issuer, the HTTP
// transport also accepts that authorization server's access tokens. The
// flags fill an oauth.Config directly.
type oauthFlags struct{ oauth.Config }

func (c *oauthFlags) register(f *cli.Flags) {
	f.String(&c.Issuer, "oauth-issuer", []string{"MCP_OAUTH_ISSUER"}, "",
		"HTTP: also accept OAuth 2.1 access tokens (JWT) of this authorization server, by its issuer URL (https; http on loopback only)")
	f.String(&c.Resource, "oauth-resource", []string{"MCP_OAUTH_RESOURCE"}, "",
		"HTTP with OAuth: this server's public URL, such as https://mcp.example.com/mcp: the audience tokens must carry, and the resource of its protected resource metadata")
	f.List(&c.Scopes, "oauth-scopes", "MCP_OAUTH_SCOPES", ",",
		"HTTP with OAuth: scopes advertised to clients (scopes_supported, and scope in a 401); comma separated")
	f.List(&c.RequiredScopes, "oauth-required-scopes", "MCP_OAUTH_REQUIRED_SCOPES", ",",
		"HTTP with OAuth: scopes every token must hold, else 403 insufficient_scope; comma separated")
	f.List(&c.Audiences, "oauth-audiences", "MCP_OAUTH_AUDIENCES", ",",
		"HTTP with OAuth: audiences accepted besides the resource, for authorization servers that cannot issue tokens for a resource (RFC 8707); comma separated")
	f.String(&c.JWKSURL, "oauth-jwks-url", []string{"MCP_OAUTH_JWKS_URL"}, "",
		"HTTP with OAuth: the authorization server's key set URL, instead of the jwks_uri of its metadata")
	f.String(&c.GroupsClaim, "oauth-groups-claim", []string{"MCP_OAUTH_GROUPS_CLAIM"}, "groups",
		"HTTP with OAuth: the claim holding the caller's groups, for the policy's identities rules (a claim name, or a dotted path such as app_metadata.roles)")
	f.Duration(&c.ClockSkew, "oauth-clock-skew", []string{"MCP_OAUTH_CLOCK_SKEW"}, oauth.DefaultClockSkew,
		"HTTP with OAuth: leeway for a token's exp, nbf and iat")
	f.String(&c.IntrospectionClientID, "oauth-introspection-client-id", []string{"MCP_OAUTH_INTROSPECTION_CLIENT_ID"}, "",
		"HTTP with OAuth: check opaque (non-JWT) access tokens at the authorization server's introspection endpoint (RFC 7662) as this client; with MCP_OAUTH_INTROSPECTION_CLIENT_SECRET")
	f.Secret(&c.IntrospectionSecret, "MCP_OAUTH_INTROSPECTION_CLIENT_SECRET", "HTTP with OAuth: the introspection client's secret")
}

// config checks the OAuth settings: nil when OAuth is off. Settings that
// would be ignored, or that would let a token be stolen or used for
// another server, are usage errors.
func (c *oauthFlags) config(transport, serverName string) (*oauth.Config, error) {
	if c.Issuer == "" {
		for name, set := range map[string]bool{"MCP_OAUTH_RESOURCE": c.Resource != "", "MCP_OAUTH_SCOPES": len(c.Scopes) > 0,
			"MCP_OAUTH_REQUIRED_SCOPES": len(c.RequiredScopes) > 0, "MCP_OAUTH_AUDIENCES": len(c.Audiences) > 0,
			"MCP_OAUTH_JWKS_URL": c.JWKSURL != "", "MCP_OAUTH_INTROSPECTION_CLIENT_ID": c.IntrospectionClientID != "",
			"MCP_OAUTH_INTROSPECTION_CLIENT_SECRET": c.IntrospectionSecret != ""} {
			if set {
				return nil, cli.Usagef("%s is set but MCP_OAUTH_ISSUER (--oauth-issuer) is not: OAuth is off, so it would be ignored", name)
			}
		}
		return nil, nil
	}
	if transport != "http" {
		return nil, cli.Usagef("MCP_OAUTH_ISSUER (--oauth-issuer) is set with the %s transport: OAuth authenticates HTTP requests; use --transport http, or unset it", transport)
	}
	cfg := c.Config
	cfg.ResourceName = serverName
	if err := cfg.Validate(); err != nil {
		return nil, cli.Usagef("OAuth: %v", err)
	}
	return &cfg, nil
}

// newVerifier loads the authorization server's keys for the HTTP
// transport. Metadata naming another issuer stops the start (exit 2); an
// unreachable authorization server does not: the verifier retries in the
// background and answers 503 meanwhile.
func newVerifier(ctx context.Context, cfg *oauth.Config, policy *acl.Policy, log *zerolog.Logger) (*oauth.Verifier, error) {
	v, err := oauth.NewVerifier(ctx, *cfg, oauth.Options{OnError: func(err error) {
		log.Warn().Err(err).Str("issuer", cfg.Issuer).Msg("OAuth: authorization server keys")
	}})
	if err != nil {
		if errors.Is(err, oauth.ErrIssuerMismatch) {
			return nil, cli.Usagef("MCP_OAUTH_ISSUER %q: %v (set it to the issuer the authorization server states, byte for byte)", cfg.Issuer, err)
		}
		return nil, cli.Usagef("OAuth: %v", err)
	}
	rules := 0
	if policy != nil {
		rules = policy.IdentityRules()
	}
	ev := log.Info().Str("issuer", cfg.Issuer).Str("resource", cfg.Resource).Strs("scopes", cfg.Scopes).
		Strs("required_scopes", cfg.RequiredScopes).Int("identity_rules", rules).Bool("keys_loaded", v.Ready()).
		Bool("introspection", cfg.Introspects())
	ev.Msg("OAuth: accepting access tokens")
	if policy == nil && len(cfg.RequiredScopes) == 0 {
		log.Warn().Str("issuer", cfg.Issuer).Msg("OAuth: no ACL policy and no required scopes: anyone the authorization server issues a token for this resource gets every tool; set MCP_OAUTH_REQUIRED_SCOPES, or map people to agents with a policy's identities rules")
	}
	if len(cfg.Audiences) > 0 {
		log.Warn().Strs("audiences", cfg.Audiences).Msg("OAuth: tokens for these audiences are accepted too; a token issued for another service with the same audience would pass here: prefer an authorization server that puts this resource in aud (RFC 8707)")
	}
	return v, nil
}

// warnUnusedIdentities: identities rules in the policy do nothing without
// OAuth, which an operator would not guess.
func warnUnusedIdentities(policy *acl.Policy, oauthOn bool, log *zerolog.Logger) {
	if policy != nil && !oauthOn && policy.IdentityRules() > 0 {
		log.Warn().Int("identity_rules", policy.IdentityRules()).
			Msg("the ACL policy has identities rules but OAuth is off (MCP_OAUTH_ISSUER): they map no one")
	}
}
