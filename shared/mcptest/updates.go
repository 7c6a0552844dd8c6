package mcptest

import (
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// Updates records the notifications/resources/updated a client receives:
// the resource URIs, in the order they arrive.
type Updates struct {
	mu   sync.Mutex
	uris []string // since the last Reset
	read int      // how many of uris Next has returned
}

// ListenUpdates records c's resource updates from now on.
func ListenUpdates(c *Client) *Updates {
	u := &Updates{}
	c.Raw().OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/resources/updated" {
			return
		}
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		u.mu.Lock()
		u.uris = append(u.uris, uri)
		u.mu.Unlock()
	})
	return u
}

// All returns the URIs recorded since the last Reset.
func (u *Updates) All() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.uris)
}

// Reset forgets what was recorded.
func (u *Updates) Reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.uris, u.read = nil, 0
}

// Seen waits (as WaitFor does) until an update for uri has been recorded
// since the last Reset.
func (u *Updates) Seen(t testing.TB, uri string) {
	t.Helper()
	WaitFor(t, "notifications/resources/updated for "+uri, func() bool { return slices.Contains(u.All(), uri) })
}

// Next waits (as WaitFor does) for an update Next has not returned yet,
// and returns its URI.
func (u *Updates) Next(t testing.TB) string {
	t.Helper()
	var uri string
	WaitFor(t, "notifications/resources/updated", func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.read == len(u.uris) {
			return false
		}
		uri = u.uris[u.read]
		u.read++
		return true
	})
	return uri
}

// Until calls Next until it returns uri, and returns the URIs before it.
func (u *Updates) Until(t testing.TB, uri string) (before []string) {
	t.Helper()
	for {
		got := u.Next(t)
		if got == uri {
			return before
		}
		before = append(before, got)
	}
}
