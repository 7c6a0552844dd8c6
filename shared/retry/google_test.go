package retry

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestGoogleRateLimited(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"rateLimitExceeded", 403, `{"error":{"errors":[{"reason":"rateLimitExceeded"}],"code":403}}`, true},
		{"userRateLimitExceeded", 403, `{"error":{"errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded"}]}}`, true},
		{"second reason matches", 403, `{"error":{"errors":[{"reason":"other"},{"reason":"rateLimitExceeded"}]}}`, true},
		{"daily limit is not transient", 403, `{"error":{"errors":[{"reason":"dailyLimitExceeded"}]}}`, false},
		{"permission", 403, `{"error":{"errors":[{"reason":"forbidden"}]}}`, false},
		{"not JSON", 403, `<html>Forbidden</html>`, false},
		{"empty", 403, ``, false},
		{"wrong status", 400, `{"error":{"errors":[{"reason":"rateLimitExceeded"}]}}`, false},
		{"too large to be a Google error", 403, `{"error":{"errors":[{"reason":"rateLimitExceeded"}],"pad":"` + strings.Repeat("x", maxPeek) + `"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := newTrackedBody(tt.body)
			resp := &http.Response{StatusCode: tt.status, Body: body}
			if got := GoogleRateLimited(resp); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			rest, err := io.ReadAll(resp.Body)
			if err != nil || string(rest) != tt.body {
				t.Fatalf("body not restored: %q, %v", rest, err)
			}
			resp.Body.Close()
			if !body.closed.Load() {
				t.Fatal("closing the restored body did not close the original")
			}
		})
	}
}

func TestGoogleRateLimitedEdgeCases(t *testing.T) {
	if GoogleRateLimited(nil) || GoogleRateLimited(&http.Response{StatusCode: 403}) {
		t.Fatal("nil response or body must be false")
	}
	resp := &http.Response{StatusCode: 403, Body: io.NopCloser(&failingReader{data: `{"error":`})}
	if GoogleRateLimited(resp) {
		t.Fatal("unreadable body must be false")
	}
	got, err := io.ReadAll(resp.Body)
	if string(got) != `{"error":` || err == nil {
		t.Fatalf("restored body = %q, %v; want the bytes read and then the error", got, err)
	}
}

type failingReader struct {
	data string
	done bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if !r.done {
		r.done = true
		return copy(p, r.data), nil
	}
	return 0, errors.New("connection reset")
}
