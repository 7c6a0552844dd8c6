package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

// boundsLayer applies what holds for the request as a whole, once, outside
// the retries: the overall deadline, the User-Agent and the correlation id.
type boundsLayer struct {
	next        http.RoundTripper
	timeout     time.Duration
	userAgent   string
	correlation string // header name; "" sends none
	closeIdle   func()
}

type attemptsKey struct{}

func (t *boundsLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	ctx = context.WithValue(ctx, attemptsKey{}, new(atomic.Int32))
	// A RoundTripper must not change the caller's request; Clone copies the
	// headers and keeps Body and GetBody, which the retries rely on.
	r := req.Clone(ctx)
	if ua := r.Header.Get("User-Agent"); ua != "" {
		// Product tokens go most significant first; the library's own
		// (google-api-go-client/…) stays, after ours.
		r.Header.Set("User-Agent", t.userAgent+" "+ua)
	} else {
		r.Header.Set("User-Agent", t.userAgent)
	}
	if t.correlation != "" {
		if id := logging.CorrelationID(ctx); validHeaderValue(id) {
			r.Header.Set(t.correlation, id)
		}
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		cancel()
		return nil, err
	}
	// The deadline covers reading the body too; closing the body releases
	// the timer.
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool,
// past the layers in between that do not pass it on.
func (t *boundsLayer) CloseIdleConnections() { t.closeIdle() }

// validHeaderValue keeps a correlation id that would make net/http refuse
// the whole request (control characters) or bloat it, out of the header.
func validHeaderValue(v string) bool {
	if v == "" || len(v) > 256 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

type cancelBody struct {
	io.ReadCloser
	cancel func()
	once   sync.Once
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.cancel)
	return err
}

// logLayer writes one debug line per attempt. Headers and bodies are never
// logged: they carry credentials and user data.
type logLayer struct {
	next http.RoundTripper
	log  zerolog.Logger
	red  *logging.Redactor
	now  func() time.Time
}

func (t *logLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	attempt := 0
	if n, ok := req.Context().Value(attemptsKey{}).(*atomic.Int32); ok {
		attempt = int(n.Add(1))
	}
	ev := t.log.Debug()
	if !ev.Enabled() {
		return t.next.RoundTrip(req)
	}
	start := t.now()
	resp, err := t.next.RoundTrip(req)
	ev = ev.Str("method", req.Method).
		Str("url", t.red.String(safeURL(req.URL))).
		Int("attempt", attempt).
		Dur("duration", t.now().Sub(start))
	if id := logging.CorrelationID(req.Context()); id != "" {
		ev = ev.Str("correlation_id", id)
	}
	if err != nil {
		ev.Str("error", t.red.String(scrubURLs(err.Error()))).Msg("upstream request failed")
	} else {
		ev.Int("status", resp.StatusCode).Msg("upstream request")
	}
	return resp, err
}

// safeURL renders u without userinfo password, fragment or secret-named
// query values.
func safeURL(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	s := c.String()
	if r, changed := logging.RedactURL(s); changed {
		return r
	}
	return s
}

// scrubURLs masks secrets in any URL quoted inside an error text, which is
// how net/url and net/http errors show them.
func scrubURLs(s string) string {
	fields := strings.Fields(s)
	changed := false
	for i, f := range fields {
		trimmed := strings.Trim(f, `"':,`)
		if r, ok := logging.RedactURL(trimmed); ok {
			fields[i] = strings.Replace(f, trimmed, r, 1)
			changed = true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

// authLayer runs the server's Auth hook on a copy of each attempt's request.
type authLayer struct {
	next http.RoundTripper
	auth func(*http.Request) error
}

// authError marks a failure of the Auth hook, so FromError can name it.
type authError struct{ err error }

func (e *authError) Error() string { return "preparing credentials: " + e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

func (t *authLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if err := t.auth(r); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		// Permanent: the retries must not call the hook (and perhaps a
		// token endpoint) again and again. The hook's own client has its
		// own, safe, retries.
		return nil, retry.Permanent(&authError{err: err})
	}
	return t.next.RoundTrip(r)
}

// attemptTimeout bounds one attempt until its response headers arrive. The
// body is then bounded by the overall deadline only, so a large download is
// not cut off by a limit meant for a stalled connection.
type attemptTimeout struct {
	next http.RoundTripper
	d    time.Duration
}

// attemptTimeoutError is a timeout (net.Error) that wraps
// context.DeadlineExceeded, so the retries treat it as a timeout: repeated
// for a GET, never for a POST that may have been received.
type attemptTimeoutError struct{ d time.Duration }

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("no response within the attempt timeout of %s", e.d)
}
func (e *attemptTimeoutError) Timeout() bool   { return true }
func (e *attemptTimeoutError) Temporary() bool { return true }
func (e *attemptTimeoutError) Unwrap() error   { return context.DeadlineExceeded }

func (t *attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := context.WithCancelCause(parent)
	timeout := &attemptTimeoutError{d: t.d}
	timer := time.AfterFunc(t.d, func() { cancel(timeout) })
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	stopped := timer.Stop()
	if err == nil && stopped {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}
		return resp, nil
	}
	if err == nil {
		// The timer fired as the headers came: the body would fail
		// midway, so report the timeout now.
		resp.Body.Close()
	}
	cancel(nil)
	if !stopped && parent.Err() == nil {
		return nil, timeout
	}
	if err == nil {
		return nil, context.Cause(parent)
	}
	return nil, err
}
