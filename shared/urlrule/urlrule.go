// Package urlrule is the fleet's one rule for URLs a server sends
// credentials to (an upstream API root, an OAuth endpoint, a webhook
// target): https, or plain http only to this machine. "This machine" is
// decided on the parsed host — the name localhost, or an address in
// 127.0.0.0/8 or ::1 — never on a string prefix, which would let
// 127.example.com through.
package urlrule

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// IsLoopbackHost reports whether host (a URL's Hostname, or a listen
// address's host, brackets allowed) names this machine: "localhost" in
// any case, or a loopback IP address (IPv4-mapped and zoned forms
// included). Names that merely start like one, such as 127.example.com or
// localhost.evil.com, are not.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// ErrInsecure is wrapped by Check when a URL uses plain http to a host
// other than this machine.
var ErrInsecure = errors.New("plain http only to a loopback address (localhost, 127.0.0.0/8, ::1)")

// Check accepts an absolute https URL, or an http URL whose host is
// loopback (IsLoopbackHost). The host is the parsed one: user information
// before an @ does not count, so http://127.0.0.1@evil.com goes to
// evil.com and is refused.
func Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if IsLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%q: want https (%w)", raw, ErrInsecure)
	}
	return fmt.Errorf("%q: want an https URL, not %q", raw, u.Scheme)
}
