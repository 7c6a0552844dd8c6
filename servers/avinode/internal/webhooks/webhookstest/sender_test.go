package webhookstest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
)

// TestSenderReadsOnlySizedAnswers: the sender posts a signed notification,
// reads sized answers on one connection, reports a refusal with its body,
// and refuses an answer it cannot size rather than misreading the next.
func TestSenderReadsOnlySizedAnswers(t *testing.T) {
	var posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts++
		user, pass, ok := r.BasicAuth()
		if !ok || user != "u" || pass != "p" || r.URL.Path != webhooks.Path || r.Header.Get(webhooks.DefaultSignatureHeader) == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		switch {
		case strings.Contains(r.Header.Get("Content-Type"), "json") && posts <= 2:
			_, _ = w.Write([]byte(`{"status":"accepted"}`))
		case posts == 3:
			http.Error(w, `{"status":"refused"}`, http.StatusServiceUnavailable)
		default:
			w.(http.Flusher).Flush() // no length: chunked
			_, _ = w.Write([]byte(`{"status":"accepted"}`))
		}
	}))
	defer srv.Close()
	s, err := Dial(strings.TrimPrefix(srv.URL, "http://"), "u", "p", "signing")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 2 {
		if err := s.Post("amsg-1"); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	if err := s.Post("amsg-2"); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("refusal: %v", err)
	}
	if err := s.Post("amsg-3"); err == nil || !strings.Contains(err.Error(), "Content-Length") {
		t.Errorf("chunked answer: %v", err)
	}
}
