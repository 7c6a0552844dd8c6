package webguard

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"golang.org/x/net/http/httpguts"
)

// Defaults for Config's zero fields.
const (
	DefaultMaxResponseBytes    = 5 << 20
	DefaultMaxFetchBytes       = 10 << 20
	DefaultMaxRequestBodyBytes = 1 << 20
	DefaultTimeout             = 30 * time.Second
	DefaultMaxTimeout          = 120 * time.Second
	DefaultMaxRedirects        = 5
	// Product is the User-Agent product token; the version follows the slash.
	Product = "mcp-fleet-devtools"
)

// Config is what an operator can set. Zero fields take the defaults above.
type Config struct {
	// AllowCIDRs are non-public ranges the operator allows (for example
	// 127.0.0.0/8 to reach local dev servers). Metadata addresses stay
	// refused inside them.
	AllowCIDRs []netip.Prefix
	// Version goes into the User-Agent: mcp-fleet-devtools/<Version>.
	Version string
	// MaxResponseBytes caps the body web_request reads (default 5 MiB).
	MaxResponseBytes int64
	// MaxFetchBytes caps the body web_fetch reads before converting (default 10 MiB).
	MaxFetchBytes int64
	// MaxRequestBodyBytes caps the body a request may send (default 1 MiB).
	MaxRequestBodyBytes int64
	// DefaultTimeout applies when a call names none (default 30 s); MaxTimeout
	// is the most a call may ask for (default 120 s). Both cover the whole
	// exchange: DNS, connect, TLS, redirects and reading the body.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// MaxRedirects is how many redirects are followed (default 5; negative:
	// none are followed and a 3xx is returned as it is).
	MaxRedirects int
	// Resolver resolves host names (default: the system's). Tests inject one.
	Resolver Resolver
}

func (c Config) withDefaults() Config {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxResponseBytes, DefaultMaxResponseBytes)
	def(&c.MaxFetchBytes, DefaultMaxFetchBytes)
	def(&c.MaxRequestBodyBytes, DefaultMaxRequestBodyBytes)
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = max(DefaultMaxTimeout, c.DefaultTimeout)
	}
	switch {
	case c.MaxRedirects == 0:
		c.MaxRedirects = DefaultMaxRedirects
	case c.MaxRedirects < 0:
		c.MaxRedirects = -1
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	return c
}

// Client is the guarded HTTP client. It is safe for concurrent use and keeps
// a connection pool; CloseIdleConnections releases it.
type Client struct {
	cfg       Config
	guard     *Guard
	transport *http.Transport
	ua        string
}

// New checks cfg and builds a client.
func New(cfg Config) (*Client, error) {
	if cfg.MaxResponseBytes < 0 || cfg.MaxFetchBytes < 0 || cfg.MaxRequestBodyBytes < 0 {
		return nil, errors.New("web size caps cannot be negative (0 means the default)")
	}
	if cfg.DefaultTimeout < 0 || cfg.MaxTimeout < 0 {
		return nil, errors.New("web timeouts cannot be negative (0 means the default)")
	}
	cfg = cfg.withDefaults()
	if cfg.DefaultTimeout > cfg.MaxTimeout {
		return nil, fmt.Errorf("web default timeout %s exceeds the maximum %s", cfg.DefaultTimeout, cfg.MaxTimeout)
	}
	for _, p := range cfg.AllowCIDRs {
		if !p.IsValid() {
			return nil, errors.New("web allowed ranges: invalid prefix")
		}
	}
	g := NewGuard(cfg.AllowCIDRs, cfg.Resolver)
	t := &http.Transport{
		// Never a proxy from the environment: the proxy would make the
		// connection, and the dial-time guard would only ever see the proxy.
		Proxy:                  nil,
		DialContext:            g.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return &Client{cfg: cfg, guard: g, transport: t, ua: Product + "/" + cfg.Version}, nil
}

// Config returns the effective configuration (defaults filled in).
func (c *Client) Config() Config { return c.cfg }

// UserAgent is the User-Agent every request carries.
func (c *Client) UserAgent() string { return c.ua }

// CloseIdleConnections closes pooled connections.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// Error is a failure that carries its client-facing form (it is an
// [mcperr.Coded]), so the tools return it as it is. Msg is written for the
// caller: no internal details, no URL query strings. Err is the cause, for
// logs.
type Error struct {
	// Code is how a client sees the failure: VALIDATION_ERROR for bad
	// input (Field names the argument; content web_fetch will not turn
	// into text is one too, on "url"), PERMISSION_DENIED when the guard
	// refuses an address (never for a URL's syntax), TIMEOUT_ERROR for the
	// call's own time limit, UPSTREAM_ERROR when the remote side fails (no
	// connection, TLS, too many redirects, a redirect to a forbidden URL, a
	// non-2xx page for Fetch).
	Code mcperr.Code
	// Field and Expected locate a validation error.
	Field    string
	Expected string
	Msg      string
	// Final says repeating the same call cannot succeed (a redirect loop, a
	// 404), where the code alone would suggest a retry.
	Final bool
	Err   error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// MCPError is the form a client sees: Msg under Code, the argument at fault
// for a validation error, and no retry advice when the failure is Final.
func (e *Error) MCPError() *mcperr.Error {
	if e.Code == mcperr.Validation {
		return mcperr.Invalid(e.Field, nil, e.Expected, "%s", e.Msg).WithCause(e)
	}
	code := e.Code
	if code == "" {
		code = mcperr.Upstream
	}
	me := mcperr.New(code, "%s", e.Msg).WithCause(e)
	if e.Final {
		me.WithRetryable(false)
	}
	return me
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: mcperr.Validation, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// upstream is the remote side failing; final when retrying cannot help.
func upstream(final bool, msg string, cause error) *Error {
	return &Error{Code: mcperr.Upstream, Final: final, Msg: msg, Err: cause}
}

// Request is one HTTP exchange.
type Request struct {
	Method string
	URL    string
	// Header holds request headers; Host, hop-by-hop headers, Content-Length
	// and User-Agent are refused (see CheckHeader).
	Header map[string]string
	Body   []byte
	// Timeout bounds the whole exchange; zero means Config.DefaultTimeout.
	Timeout time.Duration
	// MaxBytes lowers the response cap for this call; zero means the configured cap.
	MaxBytes int64
	// NoRedirects returns a 3xx response as it is instead of following it.
	NoRedirects bool
}

// Response is what came back.
type Response struct {
	// URL is the final URL, after redirects.
	URL    string
	Status int
	Header http.Header
	// Body is at most the cap; Truncated says the response was longer.
	Body      []byte
	Truncated bool
	// Cap is the byte cap that applied.
	Cap       int64
	Redirects int
	Duration  time.Duration
	// MediaType is the Content-Type's media type, lower case ("" if none);
	// Charset its charset parameter.
	MediaType string
	Charset   string
}

// Methods are the HTTP methods web_request sends.
var Methods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}

// forbiddenHeaders are refused in requests, with the reason.
var forbiddenHeaders = map[string]string{
	"Host":                "the Host header comes from the URL; another value would address a virtual host other than the one checked",
	"Content-Length":      "Content-Length is computed from the body",
	"User-Agent":          "User-Agent is set by devtools so that sites can identify it",
	"Connection":          "hop-by-hop headers are managed by the HTTP client",
	"Keep-Alive":          "hop-by-hop headers are managed by the HTTP client",
	"Proxy-Authenticate":  "hop-by-hop headers are managed by the HTTP client",
	"Proxy-Authorization": "hop-by-hop headers are managed by the HTTP client",
	"Proxy-Connection":    "hop-by-hop headers are managed by the HTTP client",
	"Te":                  "hop-by-hop headers are managed by the HTTP client",
	"Trailer":             "hop-by-hop headers are managed by the HTTP client",
	"Transfer-Encoding":   "hop-by-hop headers are managed by the HTTP client",
	"Upgrade":             "hop-by-hop headers are managed by the HTTP client",
}

// CheckHeader refuses a header name or value that must not be sent.
func CheckHeader(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return invalid("headers", "header name %q is not a valid HTTP token", name)
	}
	canon := http.CanonicalHeaderKey(name)
	if why, bad := forbiddenHeaders[canon]; bad {
		return invalid("headers", "header %s cannot be set: %s", canon, why)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return invalid("headers", "the value of header %s contains control characters (CR, LF or NUL are not allowed)", canon)
	}
	return nil
}

// ParseURL parses and checks a URL the way every request does.
func (c *Client) ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, invalid("url", "not a valid URL")
	}
	if err := c.guard.CheckURL(u); err != nil {
		return nil, c.urlErr(err, false)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}

func (c *Client) urlErr(err error, redirect bool) *Error {
	var r *Refusal
	if errors.As(err, &r) {
		msg := r.Error()
		if redirect {
			msg = "redirect " + msg
		}
		return &Error{Code: mcperr.PermissionDeny, Msg: msg, Err: err}
	}
	if redirect {
		return upstream(true, "the server redirected to a URL that is not allowed: "+err.Error(), err)
	}
	return &Error{Code: mcperr.Validation, Field: "url", Msg: err.Error(), Err: err}
}

func (c *Client) timeout(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return c.cfg.DefaultTimeout, nil
	case d < 0 || d > c.cfg.MaxTimeout:
		return 0, invalid("timeout_ms", "the timeout must be between 1 ms and %g s", c.cfg.MaxTimeout.Seconds())
	}
	return d, nil
}

type redirectErr struct{ err *Error }

func (e *redirectErr) Error() string { return e.err.Msg }

// Do sends req. Any HTTP status is a Response, not an error; errors are
// *Error (or the parent context's own error when the caller gave up).
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	return c.do(ctx, req, c.cfg.MaxResponseBytes, nil)
}

func (c *Client) do(ctx context.Context, req Request, capBytes int64, inspect func(*http.Response) error) (*Response, error) {
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = "GET"
	}
	known := false
	for _, m := range Methods {
		known = known || m == method
	}
	if !known {
		return nil, invalid("method", "method %q is not supported; use one of %s", req.Method, strings.Join(Methods, ", "))
	}
	u, err := c.ParseURL(req.URL)
	if err != nil {
		return nil, err
	}
	timeout, err := c.timeout(req.Timeout)
	if err != nil {
		return nil, err
	}
	if int64(len(req.Body)) > c.cfg.MaxRequestBodyBytes {
		return nil, invalid("body", "the request body is %d bytes; the cap is %s", len(req.Body), bytesize.Format(c.cfg.MaxRequestBodyBytes))
	}
	if req.MaxBytes > 0 && req.MaxBytes < capBytes {
		capBytes = req.MaxBytes
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(cctx, method, u.String(), body)
	if err != nil {
		return nil, invalid("url", "not a valid request URL")
	}
	for k, v := range req.Header {
		if err := CheckHeader(k, v); err != nil {
			return nil, err
		}
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("User-Agent", c.ua)

	redirects := 0
	hc := &http.Client{Transport: c.transport, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if req.NoRedirects || c.cfg.MaxRedirects < 0 {
			return http.ErrUseLastResponse
		}
		if len(via) > c.cfg.MaxRedirects {
			return &redirectErr{upstream(true, fmt.Sprintf("too many redirects: stopped after %d (the cap)", c.cfg.MaxRedirects), nil)}
		}
		if err := c.guard.CheckURL(next.URL); err != nil {
			return &redirectErr{c.urlErr(err, true)}
		}
		redirects = len(via)
		return nil
	}}

	start := time.Now()
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, c.mapErr(ctx, cctx, err, u, timeout)
	}
	defer resp.Body.Close()
	if inspect != nil {
		if err := inspect(resp); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, capBytes+1))
	if err != nil {
		return nil, c.mapErr(ctx, cctx, err, resp.Request.URL, timeout)
	}
	out := &Response{URL: resp.Request.URL.String(), Status: resp.StatusCode, Header: resp.Header, Body: data,
		Cap: capBytes, Redirects: redirects, Duration: time.Since(start)}
	if int64(len(data)) > capBytes {
		out.Body, out.Truncated = data[:capBytes], true
	}
	out.MediaType, out.Charset = mediaType(resp.Header.Get("Content-Type"))
	return out, nil
}

func mediaType(ct string) (string, string) {
	if ct == "" {
		return "", ""
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		// A malformed parameter list still names the type before it.
		mt, _, _ = strings.Cut(ct, ";")
		return strings.ToLower(strings.TrimSpace(mt)), ""
	}
	return mt, strings.ToLower(params["charset"])
}

// mapErr turns a transport failure into an *Error with a message fit for
// the caller. u is the URL being fetched when it failed (for its host only:
// a query string may carry secrets).
func (c *Client) mapErr(parent, cctx context.Context, err error, u *url.URL, timeout time.Duration) error {
	var re *redirectErr
	if errors.As(err, &re) {
		return re.err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if pu, perr := url.Parse(ue.URL); perr == nil {
			u = pu
		}
	}
	host := u.Host
	var r *Refusal
	if errors.As(err, &r) {
		return &Error{Code: mcperr.PermissionDeny, Msg: r.Error(), Err: err}
	}
	if parent.Err() != nil {
		return parent.Err()
	}
	var ne net.Error
	if cctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Code: mcperr.Timeout, Msg: fmt.Sprintf("no complete response from %s within %s", host, timeout), Err: err}
	}
	up := func(format string, args ...any) error {
		return upstream(false, fmt.Sprintf(format, args...), err)
	}
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var certErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	switch {
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return up("cannot resolve %s: no such host", u.Hostname())
		}
		return up("cannot resolve %s: DNS lookup failed", u.Hostname())
	case errors.Is(err, syscall.ECONNREFUSED):
		return up("%s refused the connection", host)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return up("%s closed the connection before a complete response", host)
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return up("%s is unreachable from this machine", host)
	case errors.As(err, &unknownCA):
		return up("the TLS certificate of %s is not signed by a trusted authority", host)
	case errors.As(err, &hostnameErr):
		return up("the TLS certificate of %s is not valid for that name", host)
	case errors.As(err, &certErr):
		return up("the TLS certificate of %s is invalid or expired", host)
	case errors.As(err, &recErr), strings.Contains(err.Error(), "gave HTTP response to HTTPS client"):
		return up("%s did not answer with TLS (is it plain http?)", host)
	}
	return up("the request to %s failed", host)
}
