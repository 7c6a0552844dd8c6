package retry

import (
	"context"
	"net/http"
)

// Guard returns next with every request passing through b: a transport
// error or a response of status 400 or more is what b records (the response
// itself is returned as it came), and while the circuit is open a request is
// not sent but answered with b's rejection (cause ErrCircuitOpen). Transport
// uses it under WithBreaker; a client that builds its own layers uses it to
// place the breaker where it wants it among them.
func (b *Breaker) Guard(next http.RoundTripper) http.RoundTripper {
	return &guarded{next: next, b: b}
}

type guarded struct {
	next http.RoundTripper
	b    *Breaker
}

func (g *guarded) RoundTrip(r *http.Request) (*http.Response, error) {
	var resp *http.Response
	called := false
	err := g.b.Do(r.Context(), func(context.Context) error {
		called = true
		var err error
		resp, err = g.next.RoundTrip(r)
		if err != nil {
			return err
		}
		if resp.StatusCode >= 400 {
			return &StatusError{StatusCode: resp.StatusCode}
		}
		return nil
	})
	if resp != nil {
		return resp, nil
	}
	if !called && r.Body != nil {
		// A RoundTripper must close the body even when it sends nothing.
		r.Body.Close()
	}
	return nil, err
}
