package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

func TestReadBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		limit int64
		want  string
		over  bool
	}{
		{"under", "abc", 5, "abc", false},
		{"exactly at the cap", "abcde", 5, "abcde", false},
		{"one byte over", "abcdef", 5, "", true},
		{"empty", "", 5, "", false},
		{"default cap", "abc", 0, "abc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadBody(strings.NewReader(tc.body), tc.limit)
			var tooLarge *BodyTooLargeError
			if tc.over {
				if !errors.As(err, &tooLarge) || tooLarge.Limit != tc.limit || got != nil {
					t.Fatalf("got %q, %v; want BodyTooLargeError{%d}", got, err, tc.limit)
				}
				if !strings.Contains(err.Error(), "exceeds the limit of 5 bytes") {
					t.Fatalf("error text %q", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := ReadBody(iotest.ErrReader(errBoom), 10); !errors.Is(err, errBoom) {
		t.Fatalf("read failure: %v", err)
	}
}

func TestDecodeJSON(t *testing.T) {
	var v struct {
		ID   string `json:"id"`
		Seat int    `json:"seats"`
	}
	if err := DecodeJSON(strings.NewReader(`{"id":"N1","seats":8,"added_later":{"x":1}}`), 100, &v); err != nil || v.ID != "N1" || v.Seat != 8 {
		t.Fatalf("got %+v, %v", v, err)
	}
	err := DecodeJSON(strings.NewReader(`{"id":`), 100, &v)
	if e := FromError("svc", err); e.Code != mcperr.Upstream || e.Retryable() {
		t.Fatalf("truncated JSON → %v", e)
	}
	if err := DecodeJSON(strings.NewReader(`{"id":"`+strings.Repeat("x", 100)+`"}`), 50, &v); !errors.As(err, new(*BodyTooLargeError)) {
		t.Fatalf("over the cap: %v", err)
	}
}

func TestNewJSONRequest(t *testing.T) {
	req, err := NewJSONRequest(context.Background(), http.MethodPost, "http://x/y", map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Accept") != "application/json" || req.GetBody == nil {
		t.Fatalf("headers %v, GetBody %v", req.Header, req.GetBody != nil)
	}
	b, _ := req.GetBody()
	raw, _ := io.ReadAll(b)
	if string(raw) != `{"a":1}` {
		t.Fatalf("body %q", raw)
	}
	req, _ = NewJSONRequest(context.Background(), http.MethodGet, "http://x/y", nil)
	if req.Body != nil && req.Body != http.NoBody || req.Header.Get("Content-Type") != "" {
		t.Fatal("a request without body got one")
	}
	if _, err := NewJSONRequest(context.Background(), http.MethodPost, "http://x", make(chan int)); err == nil ||
		!strings.Contains(err.Error(), "encoding POST request body") {
		t.Fatalf("unencodable body: %v", err)
	}
	_, err = NewJSONRequest(context.Background(), http.MethodGet, "http://x/\x7f?token=abcdef123456", nil)
	if err == nil || strings.Contains(err.Error(), "abcdef123456") {
		t.Fatalf("bad URL: %v", err)
	}
}

func TestDoJSON(t *testing.T) {
	t.Run("decodes, ignoring unknown fields", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 200, Body: `{"id":"q1","price":1200,"new_field":true}`})
		c := newTestClient(t, testConfig(newFakeClock()))
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL+"/quotes/q1", nil)
		var out struct {
			ID    string `json:"id"`
			Price int    `json:"price"`
		}
		if err := c.DoJSON(req, &out); err != nil || out.ID != "q1" || out.Price != 1200 {
			t.Fatalf("got %+v, %v", out, err)
		}
	})
	t.Run("204 and nil out", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 204}, retrytest.Reply{Status: 200, Body: `{"ignored":1}`})
		c := newTestClient(t, testConfig(newFakeClock()))
		var out map[string]any
		req, _ := NewJSONRequest(context.Background(), http.MethodDelete, up.URL, nil)
		if err := c.DoJSON(req, &out); err != nil || out != nil {
			t.Fatalf("204: %v, %v", out, err)
		}
		req, _ = NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		if err := c.DoJSON(req, nil); err != nil {
			t.Fatalf("nil out: %v", err)
		}
	})
	t.Run("error hints read the body, the message never shows it", func(t *testing.T) {
		const body = `{"code":"PGRST116","message":"row not found","hint":"secret=hunter22"}`
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 404, Body: body})
		cfg := testConfig(newFakeClock())
		cfg.Name = "supabase"
		var gotBody string
		cfg.ErrorHints = func(status int, h http.Header, b []byte) []Hint {
			gotBody = string(b)
			return []Hint{Detail("PostgREST code PGRST116")}
		}
		c := newTestClient(t, cfg)
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL+"/rest/v1/clients?id=eq.7", nil)
		err := c.DoJSON(req, new(map[string]any))
		e := mustMCP(t, "supabase", err, mcperr.NotFound, false)
		if gotBody != body {
			t.Fatalf("hint func got %q", gotBody)
		}
		if e.Message != `upstream "supabase" has no such resource (HTTP 404 Not Found): PostgREST code PGRST116` {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("response over the cap", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 200, Body: `{"x":"` + strings.Repeat("a", 200) + `"}`})
		cfg := testConfig(newFakeClock())
		cfg.MaxResponseBytes = 64
		c := newTestClient(t, cfg)
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		e := mustMCP(t, "avinode", c.DoJSON(req, new(map[string]any)), mcperr.Upstream, false)
		if !strings.Contains(e.Message, "exceeds the limit of 64 bytes") {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 200, Body: `<html>maintenance</html>`})
		c := newTestClient(t, testConfig(newFakeClock()))
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		e := mustMCP(t, "avinode", c.DoJSON(req, new(map[string]any)), mcperr.Upstream, false)
		if strings.Contains(e.Message, "maintenance") {
			t.Fatalf("message %q shows the body", e.Message)
		}
	})
	t.Run("PUT retried with the same body", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 502})
		c := newTestClient(t, testConfig(newFakeClock()))
		req, _ := NewJSONRequest(context.Background(), http.MethodPut, up.URL+"/sheet/A1", map[string]string{"v": "x"})
		if err := c.DoJSON(req, nil); err != nil {
			t.Fatal(err)
		}
		s := up.Seen()
		if len(s) != 2 || s[0].Body != `{"v":"x"}` || s[1].Body != s[0].Body {
			t.Fatalf("attempts %+v", s)
		}
	})
	t.Run("breaker sees 5xx through DoJSON", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 500})
		cfg := testConfig(newFakeClock())
		cfg.BreakerThreshold, cfg.Retry = 1, retry.Policy{MaxAttempts: 1}
		c := newTestClient(t, cfg)
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		_ = c.DoJSON(req, nil)
		if c.BreakerState() != retry.StateOpen {
			t.Fatalf("breaker %s", c.BreakerState())
		}
	})
}
