package oauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// wellKnownPRM is the RFC 9728 well-known prefix.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// MetadataURL is where the Protected Resource Metadata of cfg.Resource is
// served: the well-known prefix inserted between its origin and its path
// (RFC 9728 §3.1).
func MetadataURL(cfg Config) string {
	u, err := url.Parse(cfg.Resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + MetadataPath(cfg)
}

// MetadataPath is the path part of MetadataURL.
func MetadataPath(cfg Config) string {
	u, err := url.Parse(cfg.Resource)
	if err != nil {
		return wellKnownPRM
	}
	return wellKnownPRM + strings.TrimSuffix(u.EscapedPath(), "/")
}

// PRM is the Protected Resource Metadata document (RFC 9728 §2).
func PRM(cfg Config) []byte {
	doc := struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported,omitempty"`
		BearerMethods        []string `json:"bearer_methods_supported"`
		ResourceName         string   `json:"resource_name,omitempty"`
	}{cfg.Resource, []string{cfg.Issuer}, cfg.Scopes, []string{"header"}, cfg.ResourceName}
	b, _ := json.Marshal(doc)
	return b
}

// Challenge is the status and WWW-Authenticate value of a refusal (RFC 6750
// §3, RFC 9728 §5.1): a client reads the resource_metadata URL to find the
// authorization server, and the scope to ask for.
func Challenge(cfg Config, err error) (status int, wwwAuthenticate string) {
	rm := param("resource_metadata", MetadataURL(cfg))
	scope := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return ", " + param("scope", strings.Join(s, " "))
	}
	advertised := union(cfg.Scopes, cfg.RequiredScopes)
	var it *InvalidTokenError
	var is *InsufficientScopeError
	switch {
	case errors.As(err, &is):
		return http.StatusForbidden, "Bearer " + param("error", "insufficient_scope") + scope(is.Wanted()) + ", " + rm +
			", " + param("error_description", "the token lacks a required scope")
	case errors.Is(err, ErrUnmapped):
		return http.StatusForbidden, "Bearer " + rm
	case errors.As(err, &it):
		return http.StatusUnauthorized, "Bearer " + rm + scope(advertised) + ", " + param("error", "invalid_token") +
			", " + param("error_description", it.Description)
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable, ""
	default:
		return http.StatusUnauthorized, "Bearer " + rm + scope(advertised)
	}
}

// param is a quoted auth-param. Values come from validated configuration
// and fixed descriptions; quotes and backslashes are escaped regardless.
func param(name, value string) string {
	value = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value)
	return name + `="` + value + `"`
}
