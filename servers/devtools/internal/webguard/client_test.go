package webguard

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// newTestClient allows loopback (the test servers) unless cfg says otherwise.
func newTestClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	if cfg.AllowCIDRs == nil {
		cfg.AllowCIDRs = prefixes("127.0.0.0/8")
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// wantCode fails unless err is an *Error that a client sees under code,
// with its own message containing contains, and returns it.
func wantCode(t *testing.T, err error, code mcperr.Code, contains string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want a webguard error with code %s", err, err, code)
	}
	me := mcperr.Wrap(err)
	if e.Code != code || me.Code != code {
		t.Fatalf("code = %s (client sees %s), want %s (message %q)", e.Code, me.Code, code, e.Msg)
	}
	if me.Message != e.Msg || !strings.Contains(e.Msg, contains) {
		t.Fatalf("message %q (client sees %q) does not contain %q", e.Msg, me.Message, contains)
	}
	if me.Field != e.Field || me.Expected != e.Expected || me.Value != nil {
		t.Fatalf("client form %+v does not locate the argument of %+v", me, e)
	}
	if e.Final && me.Retryable() {
		t.Fatalf("a final failure is retryable for the client")
	}
	return e
}

// port returns the test server's port.
func port(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return p
}

func TestNewConfig(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config()
	if cfg.MaxResponseBytes != 5<<20 || cfg.MaxFetchBytes != 10<<20 || cfg.MaxRequestBodyBytes != 1<<20 ||
		cfg.DefaultTimeout != 30*time.Second || cfg.MaxTimeout != 120*time.Second || cfg.MaxRedirects != 5 {
		t.Errorf("defaults = %+v", cfg)
	}
	if c.UserAgent() != "mcp-fleet-devtools/dev" {
		t.Errorf("UserAgent = %q", c.UserAgent())
	}
	c, _ = New(Config{Version: "1.2.3", MaxRedirects: -7, DefaultTimeout: 200 * time.Second})
	if c.UserAgent() != "mcp-fleet-devtools/1.2.3" || c.Config().MaxRedirects != -1 || c.Config().MaxTimeout != 200*time.Second {
		t.Errorf("config = %+v, ua %q", c.Config(), c.UserAgent())
	}
	if _, err := New(Config{DefaultTimeout: time.Minute, MaxTimeout: time.Second}); err == nil {
		t.Error("default timeout above the maximum accepted")
	}
	if _, err := New(Config{MaxFetchBytes: -1}); err == nil {
		t.Error("negative cap accepted")
	}
	if _, err := New(Config{MaxTimeout: -time.Second}); err == nil {
		t.Error("negative timeout accepted")
	}
	if _, err := New(Config{AllowCIDRs: []netip.Prefix{{}}}); err == nil {
		t.Error("invalid prefix accepted")
	}
}

func TestDoSuccess(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		body, _ := io.ReadAll(r.Body)
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "ua": r.UserAgent(), "x": r.Header.Get("X-Api-Key"),
			"ct": r.Header.Get("Content-Type"), "body": string(body), "path": r.URL.RequestURI()})
	}))
	defer srv.Close()
	c := newTestClient(t, Config{Version: "9.9"})
	resp, err := c.Do(context.Background(), Request{Method: "post", URL: srv.URL + "/p?q=1",
		Header: map[string]string{"x-api-key": "k", "Content-Type": "application/json"}, Body: []byte(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"method": "POST", "ua": "mcp-fleet-devtools/9.9", "x": "k", "ct": "application/json", "body": `{"a":1}`, "path": "/p?q=1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if resp.Status != 200 || resp.MediaType != "application/json" || resp.Charset != "utf-8" || resp.Truncated || resp.Redirects != 0 {
		t.Errorf("response = %+v", resp)
	}
	if resp.Header.Values("X-Multi")[1] != "b" || resp.Duration <= 0 || resp.Cap != 5<<20 {
		t.Errorf("header/duration/cap: %v %v %v", resp.Header, resp.Duration, resp.Cap)
	}
	text, ok := DecodeText(resp)
	if !ok || !strings.Contains(text, `"method":"POST"`) {
		t.Errorf("DecodeText = %q, %v", text, ok)
	}
}

func TestDoStatusIsNotAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusTeapot)
	}))
	defer srv.Close()
	c := newTestClient(t, Config{})
	for _, m := range Methods {
		resp, err := c.Do(context.Background(), Request{Method: m, URL: srv.URL})
		if err != nil || resp.Status != http.StatusTeapot {
			t.Fatalf("%s: %v %v", m, resp, err)
		}
	}
}

func TestDoInvalidInput(t *testing.T) {
	c := newTestClient(t, Config{MaxRequestBodyBytes: 10, MaxTimeout: time.Second, DefaultTimeout: time.Second})
	ctx := context.Background()
	tests := []struct {
		req      Request
		field    string
		contains string
	}{
		{Request{Method: "TRACE", URL: "http://example.com"}, "method", `"TRACE" is not supported`},
		{Request{URL: "http://exa mple.com/%zz"}, "url", "not a valid URL"},
		{Request{URL: "ftp://example.com"}, "url", `scheme "ftp"`},
		{Request{URL: "http://u:p@example.com"}, "url", "credentials"},
		{Request{URL: "http://example.com", Timeout: 2 * time.Second}, "timeout_ms", "between 1 ms and 1 s"},
		{Request{URL: "http://example.com", Timeout: -1}, "timeout_ms", "between"},
		{Request{URL: "http://example.com", Body: []byte("01234567890")}, "body", "11 bytes; the cap is 10 bytes"},
		{Request{URL: "http://example.com", Header: map[string]string{"Host": "internal"}}, "headers", "Host cannot be set"},
		{Request{URL: "http://example.com", Header: map[string]string{"user-agent": "x"}}, "headers", "User-Agent cannot be set"},
		{Request{URL: "http://example.com", Header: map[string]string{"Transfer-Encoding": "chunked"}}, "headers", "hop-by-hop"},
		{Request{URL: "http://example.com", Header: map[string]string{"Connection": "close"}}, "headers", "hop-by-hop"},
		{Request{URL: "http://example.com", Header: map[string]string{"content-length": "3"}}, "headers", "computed"},
		{Request{URL: "http://example.com", Header: map[string]string{"Bad Name": "x"}}, "headers", "not a valid HTTP token"},
		{Request{URL: "http://example.com", Header: map[string]string{"X-A": "a\r\nInjected: 1"}}, "headers", "control characters"},
	}
	for _, tc := range tests {
		_, err := c.Do(ctx, tc.req)
		e := wantCode(t, err, mcperr.Validation, tc.contains)
		if e.Field != tc.field {
			t.Errorf("%+v: field %q, want %q", tc.req, e.Field, tc.field)
		}
	}
}

func TestDoRefusesBlockedTargets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the blocked request reached the server: %s", r.URL)
	}))
	defer srv.Close()
	p := port(srv)
	res := &fakeResolver{names: map[string][]string{
		"evil.test":     {"127.0.0.1"},
		"private.test":  {"10.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"mapped.test":   {"::ffff:127.0.0.1"},
	}}
	c := newTestClient(t, Config{AllowCIDRs: []netip.Prefix{}, Resolver: res})
	tests := []struct{ url, contains string }{
		{srv.URL, "127.0.0.1 is a loopback address (127.0.0.0/8)"},
		{"http://[::ffff:127.0.0.1]:" + p + "/", "IPv4-mapped form of 127.0.0.1"},
		{"http://[::1]:" + p + "/", "::1 is a loopback address"},
		{"http://10.0.0.1/", "10.0.0.1 is a private address (10.0.0.0/8)"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://evil.test:" + p + "/", "evil.test resolves to 127.0.0.1, a loopback address"},
		{"http://private.test:" + p + "/", "private.test resolves to 10.0.0.1, a private address"},
		{"http://metadata.test/", "metadata.test resolves to 169.254.169.254, a cloud metadata address"},
		{"http://mapped.test:" + p + "/", "mapped.test resolves to ::ffff:127.0.0.1"},
	}
	for _, tc := range tests {
		start := time.Now()
		_, err := c.Do(context.Background(), Request{URL: tc.url})
		wantCode(t, err, mcperr.PermissionDeny, tc.contains)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refusal took %s", tc.url, d)
		}
	}
}

func TestDoResolverAllowedName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Host)
	}))
	defer srv.Close()
	res := &fakeResolver{names: map[string][]string{"dev.test": {"127.0.0.1"}}}
	c := newTestClient(t, Config{Resolver: res})
	resp, err := c.Do(context.Background(), Request{URL: "http://dev.test:" + port(srv) + "/"})
	if err != nil || string(resp.Body) != "dev.test:"+port(srv) {
		t.Fatalf("%v %v", resp, err)
	}
	// IPv4-mapped literal of an allowed address is dialed as IPv4.
	resp, err = c.Do(context.Background(), Request{URL: "http://[::ffff:127.0.0.1]:" + port(srv) + "/"})
	if err != nil || resp.Status != 200 {
		t.Fatalf("mapped allowed: %v %v", resp, err)
	}
}

func TestMetadataRefusedInsideAllowedRange(t *testing.T) {
	res := &fakeResolver{names: map[string][]string{"imds.test": {"169.254.169.254"}, "ecs.test": {"169.254.170.2"}}}
	c := newTestClient(t, Config{AllowCIDRs: prefixes("169.254.0.0/16", "127.0.0.0/8"), Resolver: res})
	for _, u := range []string{"http://169.254.169.254/", "http://imds.test/", "http://ecs.test/", "http://[::ffff:a9fe:a9fe]/"} {
		_, err := c.Do(context.Background(), Request{URL: u})
		wantCode(t, err, mcperr.PermissionDeny, "never connects to cloud metadata addresses")
	}
}

// redirector serves /hop/N → /hop/N-1 … → /final.
func redirector(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/hop/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/hop/"), "%d", &n)
		if n <= 0 {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "done") })
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRedirects(t *testing.T) {
	srv := redirector(t)
	c := newTestClient(t, Config{AllowCIDRs: prefixes("127.0.0.1/32")})
	ctx := context.Background()

	// /hop/3 → hop/2 → hop/1 → hop/0 → /final: 5 redirects, the cap.
	resp, err := c.Do(ctx, Request{URL: srv.URL + "/hop/4"})
	if err != nil || string(resp.Body) != "done" || resp.Redirects != 5 || !strings.HasSuffix(resp.URL, "/final") {
		t.Fatalf("within the cap: %+v %v", resp, err)
	}
	_, err = c.Do(ctx, Request{URL: srv.URL + "/hop/5"})
	e := wantCode(t, err, mcperr.Upstream, "too many redirects: stopped after 5 (the cap)")
	if !e.Final {
		t.Error("too many redirects should not invite a retry")
	}

	// Not following: the 3xx itself.
	resp, err = c.Do(ctx, Request{URL: srv.URL + "/hop/1", NoRedirects: true})
	if err != nil || resp.Status != http.StatusFound || resp.Header.Get("Location") != "/hop/0" {
		t.Fatalf("no redirects: %+v %v", resp, err)
	}
}

func TestRedirectToBlockedAddressRefused(t *testing.T) {
	srv := redirector(t)
	blocked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect reached a blocked server")
	}))
	defer blocked.Close()
	res := &fakeResolver{names: map[string][]string{"internal.test": {"10.0.0.1"}, "loop.test": {"127.0.0.2"}}}
	c := newTestClient(t, Config{AllowCIDRs: prefixes("127.0.0.1/32"), Resolver: res})
	bp := port(blocked)
	tests := []struct {
		target string
		code   mcperr.Code
		msg    string
	}{
		{"http://[::1]:" + bp + "/", mcperr.PermissionDeny, "redirect refused: ::1 is a loopback address"},
		{"http://10.0.0.1/", mcperr.PermissionDeny, "redirect refused: 10.0.0.1 is a private address"},
		{"http://169.254.169.254/latest/meta-data/", mcperr.PermissionDeny, "cloud metadata"},
		{"http://[::ffff:169.254.169.254]/", mcperr.PermissionDeny, "cloud metadata"},
		{"http://127.0.0.2:" + bp + "/", mcperr.PermissionDeny, "127.0.0.2 is a loopback address"},
		// By name: caught at dial time, after DNS.
		{"http://internal.test/", mcperr.PermissionDeny, "internal.test resolves to 10.0.0.1"},
		{"http://loop.test:" + bp + "/", mcperr.PermissionDeny, "loop.test resolves to 127.0.0.2"},
		// Not an address problem: the redirect target itself is not allowed.
		{"file:///etc/passwd", mcperr.Upstream, `redirected to a URL that is not allowed: scheme "file"`},
		{"http://user:pw@127.0.0.1:" + bp + "/", mcperr.Upstream, "credentials in the URL"},
	}
	for _, tc := range tests {
		_, err := c.Do(context.Background(), Request{URL: srv.URL + "/to?u=" + tc.target})
		wantCode(t, err, tc.code, tc.msg)
	}
}

// TestDNSRebinding: the first lookup of rebind.test answers an allowed
// address, the next a blocked one. Each dial checks the address it connects
// to, so the second connection is refused.
func TestDNSRebinding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			w.Header().Set("Connection", "close") // force a new dial for the next hop
			http.Redirect(w, r, "/second", http.StatusFound)
			return
		}
		t.Errorf("second request reached the server")
	}))
	defer srv.Close()
	res := &fakeResolver{seq: map[string][][]string{"rebind.test": {{"127.0.0.1"}, {"10.0.0.7"}}}}
	c := newTestClient(t, Config{AllowCIDRs: prefixes("127.0.0.1/32"), Resolver: res})
	_, err := c.Do(context.Background(), Request{URL: "http://rebind.test:" + port(srv) + "/first"})
	wantCode(t, err, mcperr.PermissionDeny, "rebind.test resolves to 10.0.0.7")
}

func TestNoRedirectsConfig(t *testing.T) {
	srv := redirector(t)
	c := newTestClient(t, Config{MaxRedirects: -1})
	resp, err := c.Do(context.Background(), Request{URL: srv.URL + "/hop/0"})
	if err != nil || resp.Status != http.StatusFound {
		t.Fatalf("%+v %v", resp, err)
	}
}

func TestBigBodyTruncated(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 700_000) // 7 MB
	srv := httptest.NewServer(typed("text/plain", string(big)))
	defer srv.Close()
	c := newTestClient(t, Config{})
	resp, err := c.Do(context.Background(), Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || len(resp.Body) != 5<<20 || resp.Cap != 5<<20 {
		t.Fatalf("truncated=%v len=%d cap=%d", resp.Truncated, len(resp.Body), resp.Cap)
	}
	// A per-call cap lowers it; it cannot raise it.
	resp, err = c.Do(context.Background(), Request{URL: srv.URL, MaxBytes: 100})
	if err != nil || !resp.Truncated || len(resp.Body) != 100 {
		t.Fatalf("per-call cap: %v %v", resp, err)
	}
	resp, err = c.Do(context.Background(), Request{URL: srv.URL, MaxBytes: 100 << 20})
	if err != nil || len(resp.Body) != 5<<20 {
		t.Fatalf("per-call cap above the configured one: %v %v", len(resp.Body), err)
	}
	// Exactly at the cap is not truncated.
	small := newTestClient(t, Config{MaxResponseBytes: int64(len(big))})
	resp, err = small.Do(context.Background(), Request{URL: srv.URL})
	if err != nil || resp.Truncated || len(resp.Body) != len(big) {
		t.Fatalf("body at the cap: truncated=%v len=%d err=%v", resp.Truncated, len(resp.Body), err)
	}
}

func TestSlowBodyTimesOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	c := newTestClient(t, Config{})
	start := time.Now()
	_, err := c.Do(context.Background(), Request{URL: srv.URL, Timeout: 200 * time.Millisecond})
	wantCode(t, err, mcperr.Timeout, "no complete response from 127.0.0.1:"+port(srv)+" within 200ms")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %s", d)
	}
}

func TestSlowHeadersTimeOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	c := newTestClient(t, Config{DefaultTimeout: 150 * time.Millisecond})
	start := time.Now()
	_, err := c.Do(context.Background(), Request{URL: srv.URL})
	wantCode(t, err, mcperr.Timeout, "within 150ms")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %s", d)
	}
}

func TestCallerCancellationIsNotATimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := newTestClient(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Do(ctx, Request{URL: srv.URL})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Fatalf("cancellation should be the caller's error, got %v", e)
	}
}

// typed answers every request with body, as contentType.
func typed(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}
}

func TestBinaryAndTextBodies(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d}
	latin1 := []byte("caf\xe9")
	mux := http.NewServeMux()
	mux.HandleFunc("/png", typed("image/png", string(png)))
	mux.HandleFunc("/ascii-png", typed("image/png", "text-looking"))
	mux.HandleFunc("/untyped-binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write(png)
	})
	mux.HandleFunc("/latin1", typed("text/plain; charset=ISO-8859-1", string(latin1)))
	mux.HandleFunc("/bad-charset", typed("text/plain; charset=klingon", "plain"))
	mux.HandleFunc("/utf8-cut", typed("text/plain", "héllo wörld")) // cut by a 2-byte cap inside "é"
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := newTestClient(t, Config{})
	get := func(path string, max int64) *Response {
		t.Helper()
		r, err := c.Do(context.Background(), Request{URL: srv.URL + path, MaxBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, ok := DecodeText(get("/png", 0)); ok {
		t.Error("png decoded as text")
	}
	if _, ok := DecodeText(get("/ascii-png", 0)); ok {
		t.Error("a binary type is base64 whatever its bytes")
	}
	if r := get("/png", 0); !bytes.Equal(r.Body, png) {
		t.Errorf("body = %x", r.Body)
	}
	if _, ok := DecodeText(get("/untyped-binary", 0)); ok {
		t.Error("untyped binary decoded as text")
	}
	if s, ok := DecodeText(get("/latin1", 0)); !ok || s != "café" {
		t.Errorf("latin1 = %q %v", s, ok)
	}
	if s, ok := DecodeText(get("/bad-charset", 0)); !ok || s != "plain" {
		t.Errorf("unknown charset = %q %v", s, ok)
	}
	if s, ok := DecodeText(get("/utf8-cut", 2)); !ok || s != "h" {
		t.Errorf("cut rune = %q %v", s, ok)
	}
}

func TestConnectionErrors(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := ln.Addr().String()
	ln.Close()

	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}))
	defer reset.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()

	res := &fakeResolver{names: map[string][]string{"dev.test": {"127.0.0.1"}}}
	c := newTestClient(t, Config{Resolver: res})
	tests := []struct{ url, msg string }{
		{"http://" + closedAddr + "/", closedAddr + " refused the connection"},
		{reset.URL, "closed the connection before a complete response"},
		{"https://" + strings.TrimPrefix(plain.URL, "http://") + "/", "did not answer with TLS"},
		{"http://nowhere.test/", "cannot resolve nowhere.test: no such host"},
	}
	for _, tc := range tests {
		_, err := c.Do(context.Background(), Request{URL: tc.url})
		e := wantCode(t, err, mcperr.Upstream, tc.msg)
		if e.Final {
			t.Errorf("%s: a connection failure may be retried", tc.url)
		}
	}

	broken := newTestClient(t, Config{Resolver: &fakeResolver{err: &net.DNSError{Err: "server misbehaving", Name: "x"}}})
	_, err := broken.Do(context.Background(), Request{URL: "http://x.test/"})
	wantCode(t, err, mcperr.Upstream, "cannot resolve x.test: DNS lookup failed")

	odd := newTestClient(t, Config{Resolver: &fakeResolver{err: errors.New("resolver exploded at /etc/secret")}})
	_, err = odd.Do(context.Background(), Request{URL: "http://x.test/?token=s3cret"})
	e := wantCode(t, err, mcperr.Upstream, "the request to x.test failed")
	if strings.Contains(e.Msg, "secret") || strings.Contains(e.Msg, "s3cret") {
		t.Errorf("message leaks details: %q", e.Msg)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes are expected
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	p := port(srv)
	res := &fakeResolver{names: map[string][]string{"example.com": {"127.0.0.1"}, "wrong.test": {"127.0.0.1"}}}
	c := newTestClient(t, Config{Resolver: res})

	_, err := c.Do(context.Background(), Request{URL: srv.URL})
	wantCode(t, err, mcperr.Upstream, "is not signed by a trusted authority")

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c.transport.TLSClientConfig.RootCAs = pool
	resp, err := c.Do(context.Background(), Request{URL: "https://example.com:" + p + "/"})
	if err != nil || resp.Status != 200 || string(resp.Body) != "HTTP/2.0" {
		t.Fatalf("trusted TLS: %v %v", resp, err)
	}
	_, err = c.Do(context.Background(), Request{URL: "https://wrong.test:" + p + "/"})
	wantCode(t, err, mcperr.Upstream, "is not valid for that name")
}

func TestMediaType(t *testing.T) {
	tests := []struct{ in, mt, cs string }{
		{"", "", ""},
		{"text/HTML; charset=UTF-8", "text/html", "utf-8"},
		{"application/json", "application/json", ""},
		{"text/html; charset", "text/html", ""},
	}
	for _, tc := range tests {
		mt, cs := mediaType(tc.in)
		if mt != tc.mt || cs != tc.cs {
			t.Errorf("mediaType(%q) = %q %q, want %q %q", tc.in, mt, cs, tc.mt, tc.cs)
		}
	}
}
