package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Metadata is what a resource server needs of the authorization server's
// metadata (RFC 8414 or OpenID Connect Discovery).
type Metadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint,omitempty"`
}

// ErrIssuerMismatch: the metadata names another issuer than the one
// configured. It is a configuration error, not a transient one: retrying
// cannot fix it, and accepting it would let one server's metadata speak for
// another issuer (RFC 8414 §3.3).
var ErrIssuerMismatch = errors.New("the authorization server's metadata names another issuer")

// ErrMetadata: the metadata lacks what the configuration needs (an
// introspection endpoint); like ErrIssuerMismatch, retrying cannot help.
var ErrMetadata = errors.New("the authorization server's metadata does not fit the configuration")

// maxDocument bounds a metadata document or key set read from the network.
const maxDocument = 1 << 20

// wellKnownURLs are the metadata locations tried, in order: RFC 8414
// (path inserted after the well-known prefix), OpenID Connect with the
// same insertion, then OpenID Connect appended to the issuer.
func wellKnownURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := u.Scheme + "://" + u.Host
	urls := []string{origin + "/.well-known/oauth-authorization-server" + path}
	if path != "" {
		urls = append(urls, origin+"/.well-known/openid-configuration"+path)
	}
	return append(urls, origin+path+"/.well-known/openid-configuration"), nil
}

// Discover fetches the authorization server's metadata. A document that
// names another issuer stops the search with ErrIssuerMismatch; a missing
// document (4xx) moves on to the next location.
func Discover(ctx context.Context, client *http.Client, issuer string) (Metadata, error) {
	if client == nil {
		client = NewHTTPClient(10 * time.Second)
	}
	urls, err := wellKnownURLs(issuer)
	if err != nil {
		return Metadata{}, fmt.Errorf("issuer %q: %w", issuer, err)
	}
	var errs []error
	for _, u := range urls {
		m, found, err := fetchMetadata(ctx, client, u)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if !found {
			continue
		}
		if m.Issuer != issuer {
			return Metadata{}, fmt.Errorf("%w: %s says %q, configured %q", ErrIssuerMismatch, u, m.Issuer, issuer)
		}
		if m.JWKSURI == "" {
			return Metadata{}, fmt.Errorf("%s has no jwks_uri: the server cannot check token signatures", u)
		}
		if err := checkURL(m.JWKSURI, false); err != nil {
			return Metadata{}, fmt.Errorf("%s: jwks_uri %q: %w", u, m.JWKSURI, err)
		}
		return m, nil
	}
	if len(errs) > 0 {
		return Metadata{}, fmt.Errorf("authorization server metadata for %s: %w", issuer, errors.Join(errs...))
	}
	return Metadata{}, fmt.Errorf("authorization server metadata for %s: none of %s answered with a document", issuer, strings.Join(urls, ", "))
}

// fetchMetadata reads one metadata document: found is false on a 4xx.
func fetchMetadata(ctx context.Context, client *http.Client, u string) (Metadata, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Metadata{}, false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return Metadata{}, false, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return Metadata{}, false, nil
	case resp.StatusCode != http.StatusOK:
		return Metadata{}, false, fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	var m Metadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(&m); err != nil {
		return Metadata{}, false, fmt.Errorf("GET %s: not a metadata document: %w", u, err)
	}
	return m, true, nil
}

// NewHTTPClient is the client used for metadata and keys: bounded in time
// and in the size of what it reads, never following a redirect to plain
// http off loopback, nor from https to http anywhere (the answer would be
// readable and forgeable on the path the configuration kept it off).
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: limitedTransport{http.DefaultTransport},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if strings.EqualFold(via[len(via)-1].URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
				return fmt.Errorf("redirect from https to http (%s) refused", req.URL.Redacted())
			}
			return checkURL(req.URL.String(), false)
		},
	}
}

// noRedirects is client, not following any redirect: the request is
// answered by the redirect itself. The introspection POST carries the
// token; following a redirect would send it wherever the redirect points.
func noRedirects(client *http.Client) *http.Client {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// limitedTransport caps every response body at maxDocument bytes.
type limitedTransport struct{ next http.RoundTripper }

func (t limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxDocument), resp.Body}
	return resp, nil
}
