// Package avinode is the client of Avinode's REST API and the backend that
// keeps the local store in step with it.
//
// Client speaks the API: every request carries the application token
// (X-Avinode-ApiToken), a fresh X-Avinode-SentTimestamp, X-Avinode-Product and
// X-Avinode-ApiVersion, X-Avinode-ActAsAccount when configured, and the bearer
// token both as Authorization and as the AVI_JWT cookie. The bearer token is a
// static one or comes from OAuth client credentials at /oauth/token, refreshed
// before it expires. Requests go through the fleet's upstream client:
// timeouts, retries of what is safe to repeat (a POST that may have reached
// Avinode is never resent), the breaker. Answers are Avinode's envelope
// {"meta":{"errors","warnings","infos"},"data":…}: errors in meta are reported
// with their code even on HTTP 200, 401 and 403 become AUTHENTICATION_ERROR
// with a hint, and fields the client does not know are ignored.
//
// Backend implements market.Backend on a Client and the store.
package avinode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
	"github.com/mcp-fleet/mcp-fleet/shared/urlrule"
)

// Base URLs of the API.
const (
	SandboxURL    = "https://sandbox.avinode.com/api"
	ProductionURL = "https://services.avinode.com/api"
)

// Name is the upstream's name in errors, logs and metrics.
const Name = "avinode"

// Config configures a Client.
type Config struct {
	// BaseURL is the API root (default SandboxURL). HTTPS, or HTTP to a
	// loopback address (a local test double).
	BaseURL string
	// APIToken identifies the application (X-Avinode-ApiToken).
	APIToken string
	// AuthToken is a static bearer token; or else ClientID and
	// ClientSecret are exchanged for one.
	AuthToken              string
	ClientID, ClientSecret string
	// Product names the calling software (X-Avinode-Product).
	Product string
	// APIVersion is X-Avinode-ApiVersion (default v1.0).
	APIVersion string
	// ActAsAccount, when set, is sent as X-Avinode-ActAsAccount.
	ActAsAccount string
	// Timeout bounds one call, retries included (default 30s).
	Timeout time.Duration
	// Version is the server's version, for the User-Agent.
	Version  string
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	// Now is the clock for X-Avinode-SentTimestamp (default time.Now).
	Now func() time.Time
	// Retry overrides the retry policy (tests); zero is the default.
	Retry retry.Policy
}

// Client calls the Avinode API. Safe for concurrent use.
type Client struct {
	up     *upstream.Client
	base   string
	cfg    Config
	tokens *upstream.TokenSource
}

// New checks cfg and builds the client.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = SandboxURL
	}
	if err := checkBaseURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.APIToken == "" {
		return nil, errors.New("avinode: the API token is required")
	}
	if cfg.AuthToken == "" && (cfg.ClientID == "" || cfg.ClientSecret == "") {
		return nil, errors.New("avinode: an authentication token, or OAuth client id and secret, is required")
	}
	if cfg.APIVersion == "" {
		cfg.APIVersion = "v1.0"
	}
	if cfg.Product == "" {
		cfg.Product = "mcp-fleet/" + cfg.Version
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Client{base: strings.TrimRight(cfg.BaseURL, "/"), cfg: cfg}
	if cfg.AuthToken == "" {
		auth, err := upstream.New(upstream.Config{Name: Name + "-auth", Server: "avinode-mcp", Version: cfg.Version,
			Timeout: cfg.Timeout, Logger: cfg.Logger, Redactor: cfg.Redactor, Retry: cfg.Retry})
		if err != nil {
			return nil, err
		}
		c.tokens = &upstream.TokenSource{Clock: tokenClock{now: cfg.Now}, Fetch: func(ctx context.Context) (upstream.Token, error) {
			return c.fetchToken(ctx, auth)
		}}
	}
	up, err := upstream.New(upstream.Config{Name: Name, Server: "avinode-mcp", Version: cfg.Version, Timeout: cfg.Timeout,
		Logger: cfg.Logger, Redactor: cfg.Redactor, Retry: cfg.Retry, Auth: c.authorize})
	if err != nil {
		return nil, err
	}
	c.up = up
	return c, nil
}

// tokenClock gives the token cache the client's clock, so a token's age is
// measured on the clock its expiry was computed with.
type tokenClock struct{ now func() time.Time }

func (c tokenClock) Now() time.Time { return c.now() }

func (c tokenClock) Sleep(ctx context.Context, d time.Duration) error { return retry.Sleep(ctx, d) }

// checkBaseURL: every request carries the API token and the bearer JWT.
func checkBaseURL(raw string) error {
	if u, err := url.Parse(raw); err != nil || u.Host == "" {
		return fmt.Errorf("avinode: the API URL %q is not an absolute URL", raw)
	}
	if urlrule.Check(raw) != nil {
		return fmt.Errorf("avinode: the API URL %q must use https (plain http only to a loopback address)", raw)
	}
	return nil
}

// sentTimestamp formats the request time as Avinode expects: ISO 8601 UTC.
func sentTimestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// authorize adds the credentials and the Avinode headers to each attempt.
func (c *Client) authorize(r *http.Request) error {
	token := c.cfg.AuthToken
	if c.tokens != nil {
		var err error
		if token, err = c.tokens.Token(r.Context()); err != nil {
			return err
		}
	}
	r.Header.Set("Authorization", "Bearer "+token)
	r.AddCookie(&http.Cookie{Name: "AVI_JWT", Value: token})
	c.avinodeHeaders(r.Header)
	return nil
}

func (c *Client) avinodeHeaders(h http.Header) {
	h.Set("X-Avinode-ApiToken", c.cfg.APIToken)
	h.Set("X-Avinode-SentTimestamp", sentTimestamp(c.cfg.Now()))
	h.Set("X-Avinode-Product", c.cfg.Product)
	h.Set("X-Avinode-ApiVersion", c.cfg.APIVersion)
	if c.cfg.ActAsAccount != "" {
		h.Set("X-Avinode-ActAsAccount", c.cfg.ActAsAccount)
	}
}

// fetchToken exchanges the OAuth client credentials for a bearer token.
func (c *Client) fetchToken(ctx context.Context, auth *upstream.Client) (upstream.Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.cfg.ClientID}, "client_secret": {c.cfg.ClientSecret}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return upstream.Token{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	c.avinodeHeaders(req.Header)
	resp, err := auth.HTTPClient().Do(req)
	if err != nil {
		return upstream.Token{}, upstream.FromError(Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusBadRequest {
		return upstream.Token{}, mcperr.New(mcperr.Authentication,
			"Avinode refused the OAuth client credentials (HTTP %d); check AVINODE_CLIENT_ID and AVINODE_CLIENT_SECRET, and that the API connection is active",
			resp.StatusCode)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return upstream.Token{}, upstream.FromStatus(Name, resp.StatusCode, resp.Header, upstream.Detail("token endpoint"))
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := upstream.DecodeJSON(resp.Body, 64<<10, &out); err != nil {
		return upstream.Token{}, upstream.FromError(Name, err)
	}
	if out.AccessToken == "" {
		return upstream.Token{}, mcperr.New(mcperr.Authentication, "Avinode's token endpoint answered without an access token")
	}
	tok := upstream.Token{Value: out.AccessToken}
	if out.ExpiresIn > 0 {
		tok.Expiry = c.cfg.Now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	return tok, nil
}

// Problem is one entry of an envelope's meta.errors (or warnings).
type Problem struct {
	Title string `json:"title"`
	Code  string `json:"code"`
}

type envelope struct {
	Meta struct {
		Errors   []Problem `json:"errors"`
		Warnings []Problem `json:"warnings"`
	} `json:"meta"`
	Data json.RawMessage `json:"data"`
}

// maxBody caps a response; Avinode's documents are far smaller.
const maxBody = 8 << 20

// call sends one request and decodes the envelope's data into out (nil:
// ignore it). idempotent marks a POST that only reads, so it may be retried.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any, idempotent bool) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	if idempotent {
		ctx = upstream.MarkIdempotent(ctx)
	}
	req, err := upstream.NewJSONRequest(ctx, method, u, body)
	if err != nil {
		return mcperr.Wrap(err)
	}
	// A POST that only reads is marked idempotent above; any other may
	// create something (a trip, a message) when it reaches Avinode, and the
	// upstream mapping then reports a failure after sending as an unknown
	// outcome, not retryable.
	resp, err := c.up.HTTPClient().Do(req)
	if err != nil {
		return unknownOutcome(upstream.FromError(Name, err, upstream.Request(req)), method, path)
	}
	defer resp.Body.Close()
	raw, err := upstream.ReadBody(resp.Body, maxBody)
	if err != nil {
		return unknownOutcome(upstream.FromError(Name, &url.Error{Op: method, URL: u, Err: err}, upstream.Request(req)), method, path)
	}
	var env envelope
	decodeErr := upstream.DecodeJSON(bytes.NewReader(raw), maxBody, &env)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return unknownOutcome(c.statusError(req, resp, env.Meta.Errors), method, path)
	}
	if decodeErr != nil {
		return upstream.FromError(Name, decodeErr)
	}
	if len(env.Meta.Errors) > 0 {
		return softError(env.Meta.Errors)
	}
	if out == nil || len(env.Data) == 0 || string(env.Data) == "null" {
		if out != nil {
			return mcperr.New(mcperr.Upstream, "Avinode answered %s %s without data", method, path).WithRetryable(false)
		}
		return nil
	}
	if err := upstream.DecodeJSON(bytes.NewReader(env.Data), maxBody, out); err != nil {
		return upstream.FromError(Name, err)
	}
	return nil
}

// authHint says what to check when Avinode refuses the credentials.
const authHint = "check AVINODE_API_TOKEN and AVINODE_AUTH_TOKEN (or the OAuth client credentials), that the API connection " +
	"is active (connections unused for 60 days are deactivated; sandbox credentials are reset weekly), and that this " +
	"machine's clock is right (X-Avinode-SentTimestamp must be close to Avinode's time)"

// unknownOutcome names the request in the error of one whose outcome is
// unknown (upstream.ErrOutcomeUnknown: a POST that failed after it was
// sent), so the caller knows what to check.
func unknownOutcome(e *mcperr.Error, method, path string) error {
	if !errors.Is(e, upstream.ErrOutcomeUnknown) {
		return e
	}
	e.Message += fmt.Sprintf(" (%s %s)", method, path)
	return e
}

func (c *Client) statusError(req *http.Request, resp *http.Response, problems []Problem) *mcperr.Error {
	detail := describe(problems)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		e := mcperr.New(mcperr.Authentication, "Avinode refused the request (HTTP %d%s); %s", resp.StatusCode, suffix(detail), authHint)
		if c.tokens != nil && resp.StatusCode == http.StatusUnauthorized {
			// The token may have been revoked early: drop it, so the next
			// call fetches a fresh one.
			if tok := bearer(resp.Request); tok != "" {
				c.tokens.Invalidate(tok)
			}
			e.WithRetryable(true)
		}
		return e
	}
	hints := []upstream.Hint{upstream.Request(req)}
	if detail != "" {
		hints = append(hints, upstream.Detail(detail))
	}
	return upstream.FromStatus(Name, resp.StatusCode, resp.Header, hints...)
}

func bearer(r *http.Request) string {
	if r == nil {
		return ""
	}
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return v
}

func suffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}

// softError maps errors Avinode reports in meta.errors to the taxonomy by
// their code.
func softError(problems []Problem) error {
	detail := describe(problems)
	code := strings.ToUpper(problems[0].Code)
	switch {
	case strings.Contains(code, "NOT_FOUND"):
		return mcperr.New(mcperr.NotFound, "Avinode reported: %s", detail)
	case strings.HasPrefix(code, "AUTHENTICATION") || strings.Contains(code, "ACCESS") || strings.Contains(code, "PERMISSION"):
		return mcperr.New(mcperr.Authentication, "Avinode refused the request: %s; %s", detail, authHint)
	case strings.Contains(code, "RATE") || strings.Contains(code, "THROTTL"):
		return mcperr.New(mcperr.RateLimit, "Avinode is limiting the rate of requests: %s", detail)
	case strings.HasPrefix(code, "ERR_INPUT") || strings.Contains(code, "INVALID") || strings.Contains(code, "MISSING"):
		return mcperr.New(mcperr.Validation, "Avinode rejected the request: %s", detail)
	}
	return mcperr.New(mcperr.Upstream, "Avinode reported an error: %s", detail).WithRetryable(false)
}

// describe renders problems as "CODE: title; CODE2: title2", cleaned and
// cut, safe to show (titles are Avinode's own short texts).
func describe(problems []Problem) string {
	var parts []string
	for i, p := range problems {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(problems)-3))
			break
		}
		s := clean(p.Code)
		if t := clean(p.Title); t != "" {
			if s != "" {
				s += ": "
			}
			s += t
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	return clean(strings.Join(parts, "; "))
}

// clean drops control characters and cuts at 200 bytes.
func clean(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }), " ")
	return textcut.Ellipsis(s, 200)
}

// escape is url.PathEscape for ids in paths.
func escape(id string) string { return url.PathEscape(id) }

// Healthy reports an open circuit breaker, for /healthz: Avinode has been
// failing and calls are refused until the next trial.
func (c *Client) Healthy(ctx context.Context) error {
	return c.up.HealthCheck("the Avinode API")(ctx)
}
