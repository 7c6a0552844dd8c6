package engine

import (
	"net/http"
	"testing"
)

// TestRemoteIP: the per-client introspection limit keys on the address
// alone, so each new connection (new port) of a client shares its limit.
func TestRemoteIP(t *testing.T) {
	for addr, want := range map[string]string{"192.0.2.1:5000": "192.0.2.1", "[2001:db8::1]:443": "2001:db8::1", "pipe": "pipe"} {
		if got := remoteIP(&http.Request{RemoteAddr: addr}); got != want {
			t.Errorf("%q: %q, want %q", addr, got, want)
		}
	}
}
