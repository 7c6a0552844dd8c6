package retry

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestGuard: the guarded transport returns every response as it came,
// counts 5xx (not 4xx) towards opening, and once open answers without
// sending, closing the unsent body.
func TestGuard(t *testing.T) {
	b, _ := newTestBreaker(2, time.Minute)
	statuses := []int{404, 503, 503}
	sent := 0
	g := b.Guard(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		code := statuses[sent]
		sent++
		return response(r, code, newTrackedBody("answer")), nil
	}))
	for _, want := range statuses {
		req, err := http.NewRequest(http.MethodGet, "http://upstream.test/", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := g.RoundTrip(req)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("got %v, %v; want the %d response itself", resp, err, want)
		}
		resp.Body.Close()
	}
	mustState(t, b, StateOpen)

	body := newTrackedBody("unsent")
	req, err := http.NewRequest(http.MethodPost, "http://upstream.test/", body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.RoundTrip(req)
	if resp != nil || !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("got %v, %v; want the open circuit's rejection", resp, err)
	}
	if sent != len(statuses) {
		t.Fatalf("open breaker sent a request (%d sent)", sent)
	}
	if !body.closed.Load() {
		t.Fatal("the unsent request's body was not closed")
	}
}
