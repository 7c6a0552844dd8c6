// Package webguard is devtools' outbound web client: every connection it
// makes is checked at dial time, against the address actually being
// connected (after DNS, on every redirect hop), so a URL, a DNS answer or a
// redirect cannot steer it to loopback, private, link-local or cloud
// metadata addresses. Around that guard it enforces the rest of the web
// tools' limits (http/https only, no credentials in URLs, redirect, size and
// time caps) and turns pages into Markdown or text for web_fetch.
package webguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// AllowEnv is the environment variable an operator uses to allow ranges; it
// is named in refusals so the person reading one knows the way out.
const AllowEnv = "DEVTOOLS_WEB_ALLOW_CIDRS"

// Resolver looks up a host's addresses. *net.Resolver satisfies it; tests
// inject a fake so a name like "evil.test" can resolve to 10.0.0.1.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which addresses may be dialed.
type Guard struct {
	allow    []netip.Prefix
	resolver Resolver
	dialer   net.Dialer
}

// NewGuard returns a guard that refuses every non-public address except
// those inside allow; metadata addresses are refused even inside allow.
// A nil resolver means the system's.
func NewGuard(allow []netip.Prefix, r Resolver) *Guard {
	if r == nil {
		r = net.DefaultResolver
	}
	g := &Guard{resolver: r}
	for _, p := range allow {
		g.allow = append(g.allow, p.Masked())
	}
	g.dialer = net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, ControlContext: g.control}
	return g
}

// Refusal says why the guard would not connect somewhere.
type Refusal struct {
	// Host is the name the caller asked for, when it was a name.
	Host string
	Addr netip.Addr
	Classification
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("refused: ")
	if r.Host != "" {
		fmt.Fprintf(&b, "%s resolves to %s, ", r.Host, r.Addr)
	} else {
		fmt.Fprintf(&b, "%s is ", r.Addr)
	}
	fmt.Fprintf(&b, "%s %s address", article(r.Class.String()), r.Class)
	var where []string
	if r.Range.IsValid() {
		where = append(where, r.Range.String())
	}
	if r.Form != "" {
		where = append(where, r.Form+" form of "+r.Embedded.String())
	}
	if len(where) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(where, ", "))
	}
	if r.Class == Metadata {
		b.WriteString("; devtools never connects to cloud metadata addresses, whatever " + AllowEnv + " says")
	} else {
		b.WriteString("; devtools blocks private, loopback, link-local and metadata addresses — an operator can allow ranges with " + AllowEnv)
	}
	return b.String()
}

func article(word string) string {
	// "unique" sounds like "you": a unique-local, but an unspecified.
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) && !strings.HasPrefix(word, "uni") {
		return "an"
	}
	return "a"
}

// Check returns nil when ip may be dialed, else a *Refusal.
func (g *Guard) Check(ip netip.Addr) error {
	ip = ip.WithZone("")
	c := Classify(ip)
	switch {
	case c.Class == Metadata:
	case c.Class == Public, g.allowed(ip), c.Embedded.IsValid() && g.allowed(c.Embedded):
		return nil
	}
	return &Refusal{Addr: ip, Classification: c}
}

func (g *Guard) allowed(ip netip.Addr) bool {
	for _, p := range g.allow {
		if p.Contains(ip) || p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// control runs after the socket is created and before connect(2): address
// is the literal IP and port about to be connected, whatever name, DNS
// answer or redirect led here. This is the check that cannot be raced.
func (g *Guard) control(_ context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: cannot parse the address being dialed (%s)", network)
	}
	return g.Check(ap.Addr())
}

// DialContext resolves addr's host, drops the addresses the guard refuses,
// and dials the rest in order. When every address is refused the error is
// the *Refusal of the first, naming the host.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	name := ""
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		name = host
		if ips, err = g.resolver.LookupNetIP(ctx, ipNetwork(network), host); err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	var firstRefusal error
	var lastErr error
	for _, ip := range ips {
		if err := g.Check(ip); err != nil {
			if firstRefusal == nil {
				var r *Refusal
				if errors.As(err, &r) {
					r.Host = name
				}
				firstRefusal = err
			}
			continue
		}
		conn, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, firstRefusal
}

func ipNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}

// URLError is a URL the web tools will not use, whatever it resolves to.
type URLError struct{ Msg string }

func (e *URLError) Error() string { return e.Msg }

// CheckURL refuses what no request may carry: a scheme other than http or
// https, credentials, a missing or ambiguous host, and a literal address the
// guard refuses (checked here too for a fast, clear message; the dial-time
// check stays the real defence).
func (g *Guard) CheckURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return &URLError{"the URL must be absolute, starting with http:// or https://"}
	default:
		return &URLError{fmt.Sprintf("scheme %q is not allowed: only http and https", u.Scheme)}
	}
	if u.User != nil {
		return &URLError{"credentials in the URL (user:password@) are not accepted; send an Authorization header instead"}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{"the URL has no host"}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return &URLError{fmt.Sprintf("port %q is not a valid TCP port", p)}
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return &URLError{"IPv6 zone identifiers are not accepted in URLs"}
		}
		return g.Check(ip)
	}
	if numericHost(host) {
		return &URLError{fmt.Sprintf("host %q is a non-standard IPv4 form; write the address as four decimal numbers (a.b.c.d)", host)}
	}
	return nil
}

// numericHost reports a host whose last label is a number: the WHATWG URL
// standard (and getaddrinfo) read such hosts as IPv4 in shorthand, octal or
// hex (127.1, 0x7f.0.0.1, 2130706433). Refusing them keeps what the user
// reads and what is dialed the same.
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if l := strings.ToLower(last); strings.HasPrefix(l, "0x") {
		for _, r := range l[2:] {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ParseCIDRs reads the operator's allowed ranges: CIDR prefixes or single
// addresses (taken as /32 or /128), in one or more items separated by
// commas or spaces, as DEVTOOLS_WEB_ALLOW_CIDRS holds them.
func ParseCIDRs(items ...string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range items {
		for _, f := range strings.FieldsFunc(item, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			if strings.Contains(f, "/") {
				p, err := netip.ParsePrefix(f)
				if err != nil {
					return nil, fmt.Errorf("%s: %q is not a CIDR range such as 127.0.0.0/8 or fd00::/8", AllowEnv, f)
				}
				out = append(out, p.Masked())
				continue
			}
			ip, err := netip.ParseAddr(f)
			if err != nil || ip.Zone() != "" {
				return nil, fmt.Errorf("%s: %q is not an IP address or CIDR range", AllowEnv, f)
			}
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return out, nil
}
