package upstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

// Defaults for the zero fields of Config. An upstream call lives inside a
// tool call (60 s by default), so the overall bound leaves the tool time to
// report; the per-attempt bound leaves room for a retry within it.
const (
	DefaultTimeout               = 30 * time.Second
	DefaultAttemptTimeout        = 15 * time.Second
	DefaultDialTimeout           = 5 * time.Second
	DefaultTLSHandshakeTimeout   = 5 * time.Second
	DefaultResponseHeaderTimeout = 15 * time.Second
	DefaultIdleConnTimeout       = 90 * time.Second
	// Several tool calls may run at once; net/http's default of two idle
	// connections per host would make the rest reconnect every time.
	DefaultMaxIdleConnsPerHost = 16
	DefaultMaxConnsPerHost     = 64
	DefaultBreakerThreshold    = 5
	DefaultBreakerCooldown     = retry.DefaultCooldown
	DefaultCorrelationHeader   = "X-Correlation-ID"
	DefaultMaxResponseBytes    = 8 << 20
	// maxErrorBody bounds what DoJSON reads of an error response for
	// Config.ErrorHints: error documents are small.
	maxErrorBody = 64 << 10
	maxRedirects = 5
)

// Config describes one upstream. Name, Server and Version are required; a
// zero value elsewhere takes the default, a negative one is an error.
type Config struct {
	// Name identifies the upstream in errors, logs and the breaker, e.g.
	// "avinode". It is shown to clients.
	Name string
	// Server and Version make the User-Agent, e.g. "avinode-mcp/1.4.0".
	Server  string
	Version string

	// Timeout bounds a whole request, retries and backoff included, until
	// its response body is closed. A caller's earlier deadline wins.
	Timeout time.Duration
	// AttemptTimeout bounds one attempt until its response headers arrive.
	// Its default is capped at Timeout.
	AttemptTimeout        time.Duration
	DialTimeout           time.Duration
	TLSHandshakeTimeout   time.Duration
	ResponseHeaderTimeout time.Duration
	IdleConnTimeout       time.Duration
	MaxIdleConnsPerHost   int
	MaxConnsPerHost       int
	// TLS is cloned for the transport (a private CA, for instance); TLS 1.2
	// is the minimum unless it asks for more.
	TLS *tls.Config

	// Retry is the retry policy; the zero Policy means retry.DefaultPolicy().
	// Policy{MaxAttempts: 1} disables retries.
	Retry retry.Policy
	// RetryableStatus adds responses that are transient although their
	// status does not say so, e.g. retry.GoogleRateLimited for Gmail and
	// Sheets, whose rate limits come as 403s. It applies to requests that
	// are safe to repeat only.
	RetryableStatus func(*http.Response) bool

	// BreakerThreshold consecutive failures open the circuit for
	// BreakerCooldown.
	BreakerThreshold int
	BreakerCooldown  time.Duration

	// CorrelationHeader carries logging.CorrelationID(ctx) when the context
	// has one; DisableCorrelation sends none (for an upstream that rejects
	// unknown headers).
	CorrelationHeader  string
	DisableCorrelation bool

	// Auth adds credentials to each attempt's request (a copy: set headers
	// freely, do not read the body). It runs again for every retry. An error
	// ends the request without a retry; return an *mcperr.Error to choose
	// what the client sees, otherwise it becomes AUTHENTICATION_ERROR. If it
	// calls an upstream itself (a token endpoint), use a separate Client.
	Auth func(req *http.Request) error

	// MaxResponseBytes caps the body DoJSON decodes.
	MaxResponseBytes int64
	// ErrorHints lets DoJSON read an error response (status, headers and at
	// most 64 KiB of body) for a safe Detail or for RateLimited.
	ErrorHints func(status int, header http.Header, body []byte) []Hint

	// Logger receives one debug line per attempt; nil logs nothing.
	// Redactor additionally masks configured secret values in those lines.
	Logger   *zerolog.Logger
	Redactor *logging.Redactor

	// Clock and Rand replace the wall clock and the jitter source of the
	// retries, the breaker and the logs, for tests.
	Clock retry.Clock
	Rand  func() float64
}

// Client is the HTTP client of one upstream. Safe for concurrent use.
type Client struct {
	name       string
	http       *http.Client
	transport  *http.Transport
	breaker    *retry.Breaker
	maxBody    int64
	errorHints func(int, http.Header, []byte) []Hint
}

// New checks cfg and builds the client. It fails naming the first Config
// field that is missing or out of range.
func New(cfg Config) (*Client, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLS != nil {
		tlsConf = cfg.TLS.Clone()
		if tlsConf.MinVersion < tls.VersionTLS12 {
			tlsConf.MinVersion = tls.VersionTLS12
		}
	}
	dialer := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout: cfg.ResponseHeaderTimeout,
		IdleConnTimeout:       cfg.IdleConnTimeout,
		MaxIdleConns:          4 * cfg.MaxIdleConnsPerHost,
		MaxIdleConnsPerHost:   cfg.MaxIdleConnsPerHost,
		MaxConnsPerHost:       cfg.MaxConnsPerHost,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	log := zerolog.Nop()
	if cfg.Logger != nil {
		log = cfg.Logger.With().Str("upstream", cfg.Name).Logger()
	}
	breaker := retry.NewBreaker(cfg.Name, cfg.BreakerThreshold, cfg.BreakerCooldown,
		retry.WithBreakerClock(cfg.Clock))

	// Innermost first: the layers a single attempt passes through, then the
	// retries around them, then the bounds around everything.
	var attempt http.RoundTripper = &attemptTimeout{next: base, d: cfg.AttemptTimeout}
	// The breaker sits inside the Auth hook, so that a credentials failure
	// neither counts against the upstream nor spends the half-open trial.
	attempt = breaker.Guard(attempt)
	if cfg.Auth != nil {
		attempt = &authLayer{next: attempt, auth: cfg.Auth}
	}
	now := time.Now
	if cfg.Clock != nil {
		now = cfg.Clock.Now
	}
	attempt = &logLayer{next: attempt, log: log, red: cfg.Redactor, now: now}
	opts := []retry.Option{retry.WithClock(cfg.Clock), retry.WithRand(cfg.Rand)}
	if cfg.RetryableStatus != nil {
		opts = append(opts, retry.WithRetryableStatus(cfg.RetryableStatus))
	}
	retrying := retry.NewTransport(attempt, cfg.Retry, opts...)
	correlation := cfg.CorrelationHeader
	if cfg.DisableCorrelation {
		correlation = ""
	}
	outer := &boundsLayer{
		next:        retrying,
		timeout:     cfg.Timeout,
		userAgent:   cfg.Server + "/" + cfg.Version,
		correlation: correlation,
		closeIdle:   base.CloseIdleConnections,
	}
	c := &Client{
		name:       cfg.Name,
		transport:  base,
		breaker:    breaker,
		maxBody:    cfg.MaxResponseBytes,
		errorHints: cfg.ErrorHints,
	}
	c.http = &http.Client{Transport: outer, CheckRedirect: sameHostRedirects}
	return c, nil
}

// setting is a Config field whose zero value means its default.
type setting[T int | int64 | time.Duration] struct {
	field string
	v     *T
	def   T
}

// orDefaults gives each zero setting its default, and refuses a negative
// one.
func orDefaults[T int | int64 | time.Duration](settings ...setting[T]) error {
	for _, s := range settings {
		if *s.v < 0 {
			return fmt.Errorf("upstream: Config.%s must not be negative, got %v", s.field, *s.v)
		}
		if *s.v == 0 {
			*s.v = s.def
		}
	}
	return nil
}

func (cfg *Config) normalize() error {
	for _, f := range []struct{ field, value string }{
		{"Name", cfg.Name}, {"Server", cfg.Server}, {"Version", cfg.Version},
	} {
		if strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("upstream: Config.%s is required", f.field)
		}
	}
	if !isToken(cfg.Server) || !isToken(cfg.Version) {
		return fmt.Errorf("upstream: Config.Server and Config.Version must be HTTP tokens (no spaces, slashes, quotes or parentheses), got %q and %q", cfg.Server, cfg.Version)
	}
	if strings.ContainsFunc(cfg.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("upstream: Config.Name %q holds control characters", cfg.Name)
	}
	if err := orDefaults(
		setting[time.Duration]{"Timeout", &cfg.Timeout, DefaultTimeout},
		setting[time.Duration]{"AttemptTimeout", &cfg.AttemptTimeout, 0}, // defaulted below
		setting[time.Duration]{"DialTimeout", &cfg.DialTimeout, DefaultDialTimeout},
		setting[time.Duration]{"TLSHandshakeTimeout", &cfg.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout},
		setting[time.Duration]{"ResponseHeaderTimeout", &cfg.ResponseHeaderTimeout, DefaultResponseHeaderTimeout},
		setting[time.Duration]{"IdleConnTimeout", &cfg.IdleConnTimeout, DefaultIdleConnTimeout},
		setting[time.Duration]{"BreakerCooldown", &cfg.BreakerCooldown, DefaultBreakerCooldown},
	); err != nil {
		return err
	}
	switch {
	case cfg.AttemptTimeout == 0:
		cfg.AttemptTimeout = min(DefaultAttemptTimeout, cfg.Timeout)
	case cfg.AttemptTimeout > cfg.Timeout:
		return fmt.Errorf("upstream: Config.AttemptTimeout (%s) exceeds Config.Timeout (%s)", cfg.AttemptTimeout, cfg.Timeout)
	}
	if err := orDefaults(
		setting[int]{"MaxIdleConnsPerHost", &cfg.MaxIdleConnsPerHost, DefaultMaxIdleConnsPerHost},
		setting[int]{"MaxConnsPerHost", &cfg.MaxConnsPerHost, DefaultMaxConnsPerHost},
		setting[int]{"BreakerThreshold", &cfg.BreakerThreshold, DefaultBreakerThreshold},
	); err != nil {
		return err
	}
	if err := orDefaults(setting[int64]{"MaxResponseBytes", &cfg.MaxResponseBytes, DefaultMaxResponseBytes}); err != nil {
		return err
	}
	if cfg.Retry == (retry.Policy{}) {
		cfg.Retry = retry.DefaultPolicy()
	}
	if cfg.Retry.MaxAttempts < 0 {
		return fmt.Errorf("upstream: Config.Retry.MaxAttempts must not be negative, got %d", cfg.Retry.MaxAttempts)
	}
	if cfg.CorrelationHeader == "" {
		cfg.CorrelationHeader = DefaultCorrelationHeader
	}
	if !isToken(cfg.CorrelationHeader) {
		return fmt.Errorf("upstream: Config.CorrelationHeader %q is not a valid header name", cfg.CorrelationHeader)
	}
	return nil
}

// HTTPClient returns the client. Every request it sends gets the behaviour
// described in the package doc; pass it to option.WithHTTPClient for a
// Google API client.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Name returns the upstream's name.
func (c *Client) Name() string { return c.name }

// BreakerState reports the circuit's position, for health checks.
func (c *Client) BreakerState() retry.State { return c.breaker.State() }

// HealthCheck is a server's health check of this upstream (for
// kit.Env.AddHealthCheck): unhealthy while the circuit is open, that is
// while calls are refused after repeated failures. what names the upstream
// in the error, e.g. "the Gmail API".
func (c *Client) HealthCheck(what string) func(context.Context) error {
	return func(context.Context) error {
		if c.breaker.State() == retry.StateOpen {
			return fmt.Errorf("%s failed repeatedly; calls are paused (circuit open)", what)
		}
		return nil
	}
}

// Error maps an error from this client's requests; see FromError.
func (c *Client) Error(err error, hints ...Hint) error {
	if e := FromError(c.name, err, hints...); e != nil {
		return e
	}
	return nil
}

// CloseIdleConnections closes the pooled connections that are not in use;
// HTTPClient().CloseIdleConnections does the same.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// MarkIdempotent returns a context under which a request whose method alone
// does not make it safe to repeat (a POST that only reads, or that the
// upstream deduplicates) is retried like a GET. Only use it when a duplicate
// is harmless: a retried POST whose first attempt reached the server is
// applied twice. An Idempotency-Key header has the same effect.
func MarkIdempotent(ctx context.Context) context.Context {
	// Both marks: retry's for the retries, ours for FromError's advice.
	return context.WithValue(retry.MarkIdempotent(ctx), repeatableKey{}, true)
}

type repeatableKey struct{}

// redirectError refuses a redirect that would take the request, and the
// credentials the Auth hook adds to every attempt, to another host or from
// HTTPS to HTTP, and ends redirect loops.
type redirectError struct {
	from, to string
	tooMany  bool
}

func (e *redirectError) Error() string { return "redirect refused: " + e.reason() }

func (e *redirectError) reason() string {
	if e.tooMany {
		return fmt.Sprintf("more than %d redirects", maxRedirects)
	}
	return fmt.Sprintf("from host %q to %q", e.from, e.to)
}

func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return &redirectError{tooMany: true}
	}
	first := via[0].URL
	if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") {
		return &redirectError{from: first.Scheme + "://" + first.Host, to: req.URL.Scheme + "://" + req.URL.Host}
	}
	return nil
}

// isToken reports whether s is a non-empty RFC 9110 token, which is what a
// header name and a User-Agent product must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
