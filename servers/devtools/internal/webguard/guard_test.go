package webguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// fakeResolver answers from a table; unknown names are NXDOMAIN.
type fakeResolver struct {
	mu    sync.Mutex
	names map[string][]string
	err   error
	calls map[string]int
	// seq, when set for a name, gives a different answer per lookup (DNS rebinding).
	seq map[string][][]string
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	n := f.calls[host]
	f.calls[host]++
	if f.err != nil {
		return nil, f.err
	}
	answers, ok := f.names[host]
	if s, has := f.seq[host]; has {
		answers, ok = s[min(n, len(s)-1)], true
	}
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range answers {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func prefixes(cidrs ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}

func TestGuardCheck(t *testing.T) {
	tests := []struct {
		name  string
		allow []string
		ip    string
		ok    bool
	}{
		{"public", nil, "8.8.8.8", true},
		{"public v6", nil, "2606:4700::1", true},
		{"loopback refused", nil, "127.0.0.1", false},
		{"v6 loopback refused", nil, "::1", false},
		{"mapped loopback refused", nil, "::ffff:127.0.0.1", false},
		{"private refused", nil, "10.0.0.5", false},
		{"link-local refused", nil, "169.254.1.1", false},
		{"metadata refused", nil, "169.254.169.254", false},
		{"loopback allowed", []string{"127.0.0.0/8"}, "127.0.0.1", true},
		{"mapped loopback allowed by v4 range", []string{"127.0.0.0/8"}, "::ffff:127.0.0.1", true},
		{"NAT64 private allowed by v4 range", []string{"10.0.0.0/8"}, "64:ff9b::a00:1", true},
		{"allowance is exact", []string{"127.0.0.1/32"}, "127.0.0.2", false},
		{"v6 loopback not in v4 allowance", []string{"127.0.0.0/8"}, "::1", false},
		{"v6 allowance", []string{"::1/128"}, "::1", true},
		{"link-local allowed", []string{"169.254.0.0/16"}, "169.254.1.1", true},
		{"metadata never allowed", []string{"169.254.0.0/16"}, "169.254.169.254", false},
		{"ECS metadata never allowed", []string{"169.254.0.0/16"}, "169.254.170.2", false},
		{"Alibaba metadata never allowed", []string{"100.64.0.0/10"}, "100.100.100.200", false},
		{"v6 metadata never allowed", []string{"fc00::/7"}, "fd00:ec2::254", false},
		{"mapped metadata never allowed", []string{"0.0.0.0/0", "::/0"}, "::ffff:169.254.169.254", false},
		{"everything allowed but metadata", []string{"0.0.0.0/0"}, "10.1.2.3", true},
		{"unmasked allowance", []string{"10.1.2.3/8"}, "10.200.0.1", true},
		{"zone stripped", []string{"fe80::/10"}, "fe80::1%eth0", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGuard(prefixes(tc.allow...), nil)
			err := g.Check(netip.MustParseAddr(tc.ip))
			if (err == nil) != tc.ok {
				t.Fatalf("Check(%s) = %v, want ok=%v", tc.ip, err, tc.ok)
			}
			if err != nil {
				var r *Refusal
				if !errors.As(err, &r) {
					t.Fatalf("error %T is not a *Refusal", err)
				}
			}
		})
	}
}

func TestRefusalMessages(t *testing.T) {
	tests := []struct {
		err  *Refusal
		want []string
	}{
		{&Refusal{Addr: netip.MustParseAddr("10.0.0.5"), Classification: Classify(netip.MustParseAddr("10.0.0.5"))},
			[]string{"refused: 10.0.0.5 is a private address (10.0.0.0/8); devtools blocks private, loopback, link-local and metadata addresses — an operator can allow ranges with DEVTOOLS_WEB_ALLOW_CIDRS"}},
		{&Refusal{Host: "evil.test", Addr: netip.MustParseAddr("127.0.0.1"), Classification: Classify(netip.MustParseAddr("127.0.0.1"))},
			[]string{"refused: evil.test resolves to 127.0.0.1, a loopback address (127.0.0.0/8)"}},
		{&Refusal{Addr: netip.MustParseAddr("::ffff:127.0.0.1"), Classification: Classify(netip.MustParseAddr("::ffff:127.0.0.1"))},
			[]string{"::ffff:127.0.0.1 is a loopback address (127.0.0.0/8, IPv4-mapped form of 127.0.0.1)"}},
		{&Refusal{Addr: netip.MustParseAddr("169.254.169.254"), Classification: Classify(netip.MustParseAddr("169.254.169.254"))},
			[]string{"169.254.169.254 is a cloud metadata address (169.254.169.254/32)", "never connects to cloud metadata addresses, whatever DEVTOOLS_WEB_ALLOW_CIDRS says"}},
		{&Refusal{Addr: netip.MustParseAddr("fc00::1"), Classification: Classify(netip.MustParseAddr("fc00::1"))},
			[]string{"fc00::1 is a unique-local address (fc00::/7)"}},
		{&Refusal{Addr: netip.MustParseAddr("100.64.0.1"), Classification: Classify(netip.MustParseAddr("100.64.0.1"))},
			[]string{"100.64.0.1 is a carrier-grade NAT (shared) address"}},
		{&Refusal{Classification: Classification{Class: Reserved}}, []string{"a reserved address;"}},
	}
	for _, tc := range tests {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q does not contain %q", msg, w)
			}
		}
	}
}

func TestCheckURL(t *testing.T) {
	g := NewGuard(prefixes("127.0.0.0/8"), nil)
	tests := []struct {
		url     string
		refused bool   // a *Refusal
		invalid string // a *URLError containing this
	}{
		{"http://example.com/", false, ""},
		{"HTTPS://example.com:8443/x?y=1", false, ""},
		{"http://127.0.0.1:8080/", false, ""},
		{"http://[::ffff:127.0.0.1]:80/", false, ""},
		{"http://10.0.0.1/", true, ""},
		{"http://[::1]:80/", true, ""},
		{"http://169.254.169.254/latest/meta-data/", true, ""},
		{"http://[::ffff:169.254.169.254]/", true, ""},
		{"http://[fd00:ec2::254]/", true, ""},
		{"http://0.0.0.0:80/", true, ""},
		{"file:///etc/passwd", false, `scheme "file" is not allowed`},
		{"ftp://example.com/", false, `scheme "ftp" is not allowed`},
		{"gopher://example.com/", false, `scheme "gopher"`},
		{"data:text/plain,hi", false, `scheme "data"`},
		{"javascript:alert(1)", false, `scheme "javascript"`},
		{"//example.com/", false, "must be absolute"},
		{"/relative", false, "must be absolute"},
		{"http://user:secret@example.com/", false, "credentials in the URL"},
		{"http://user@example.com/", false, "credentials in the URL"},
		{"http:///path", false, "no host"},
		{"http://example.com:99999/", false, "not a valid TCP port"},
		{"http://example.com:0/", false, "not a valid TCP port"},
		{"http://[fe80::1%25eth0]/", false, "zone identifiers"},
		{"http://2130706433/", false, "non-standard IPv4 form"},
		{"http://127.1/", false, "non-standard IPv4 form"},
		{"http://0x7f.0.0.1/", false, "non-standard IPv4 form"},
		{"http://0x7f000001/", false, "non-standard IPv4 form"},
		{"http://017700000001/", false, "non-standard IPv4 form"},
		{"http://foo.0x1g/", false, ""}, // not hex: an ordinary (if odd) name
		{"http://cafe.be/", false, ""},
		{"http://example.com./", false, ""},
		{"http://123.example.com/", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			err = g.CheckURL(u)
			var r *Refusal
			var ue *URLError
			switch {
			case tc.refused:
				if !errors.As(err, &r) {
					t.Fatalf("CheckURL = %v, want a refusal", err)
				}
			case tc.invalid != "":
				if !errors.As(err, &ue) || !strings.Contains(ue.Error(), tc.invalid) {
					t.Fatalf("CheckURL = %v, want a URL error containing %q", err, tc.invalid)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error leaks the password: %v", err)
				}
			default:
				if err != nil {
					t.Fatalf("CheckURL = %v, want ok", err)
				}
			}
		})
	}
}

func TestControlChecksTheDialedAddress(t *testing.T) {
	g := NewGuard(prefixes("127.0.0.0/8"), nil)
	ctx := context.Background()
	if err := g.control(ctx, "tcp4", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("allowed address refused: %v", err)
	}
	for _, addr := range []string{"10.0.0.1:80", "[::1]:80", "169.254.169.254:80", "[fe80::1%lo]:80"} {
		var r *Refusal
		if err := g.control(ctx, "tcp", addr, nil); !errors.As(err, &r) {
			t.Errorf("control(%s) = %v, want a refusal", addr, err)
		}
	}
	if err := g.control(ctx, "tcp", "not-an-address", nil); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("unparsable address: %v, want a refusal", err)
	}
}

// TestDialerRefusesEvenWithoutPrecheck dials a blocked literal through the
// guard's own net.Dialer, bypassing DialContext's filtering: the Control
// hook alone must stop it before connect.
func TestDialerRefusesEvenWithoutPrecheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g := NewGuard(nil, nil)
	_, err = g.dialer.DialContext(context.Background(), "tcp", ln.Addr().String())
	var r *Refusal
	if !errors.As(err, &r) || r.Class != Loopback {
		t.Fatalf("dial = %v, want a loopback refusal", err)
	}
}

func TestDialContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	res := &fakeResolver{names: map[string][]string{
		"mixed.test":   {"10.0.0.1", "169.254.169.254", "127.0.0.1"},
		"private.test": {"10.0.0.1", "192.168.1.1"},
		"empty.test":   {},
	}}
	g := NewGuard(prefixes("127.0.0.1/32"), res)
	ctx := context.Background()

	conn, err := g.DialContext(ctx, "tcp", net.JoinHostPort("mixed.test", port))
	if err != nil {
		t.Fatalf("mixed answer: %v (the allowed address should be used)", err)
	}
	if got := conn.RemoteAddr().(*net.TCPAddr).IP.String(); got != "127.0.0.1" {
		t.Errorf("connected to %s, want 127.0.0.1", got)
	}
	conn.Close()

	_, err = g.DialContext(ctx, "tcp", net.JoinHostPort("private.test", port))
	var r *Refusal
	if !errors.As(err, &r) || r.Host != "private.test" || r.Addr.String() != "10.0.0.1" {
		t.Fatalf("all-private answer: %v, want a refusal naming the host and its first address", err)
	}
	if !strings.Contains(err.Error(), "private.test resolves to 10.0.0.1") {
		t.Errorf("message %q", err)
	}

	var dnsErr *net.DNSError
	if _, err = g.DialContext(ctx, "tcp", net.JoinHostPort("empty.test", port)); !errors.As(err, &dnsErr) {
		t.Errorf("no addresses: %v, want a DNS error", err)
	}
	if _, err = g.DialContext(ctx, "tcp", net.JoinHostPort("nxdomain.test", port)); !errors.As(err, &dnsErr) {
		t.Errorf("unknown name: %v, want a DNS error", err)
	}
	if _, err = g.DialContext(ctx, "tcp", "no-port"); err == nil {
		t.Error("address without port accepted")
	}
	if _, err = g.DialContext(ctx, "tcp", net.JoinHostPort("::ffff:127.0.0.1", port)); err != nil {
		t.Errorf("mapped allowed literal: %v", err)
	}

	// A connection failure on the only allowed address is reported as such.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	if _, err = g.DialContext(ctx, "tcp4", closed); err == nil || errors.As(err, &r) {
		t.Errorf("closed port: %v, want a connection error", err)
	}
}

func TestIPNetwork(t *testing.T) {
	for in, want := range map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6", "udp4": "ip4", "udp6": "ip6"} {
		if got := ipNetwork(in); got != want {
			t.Errorf("ipNetwork(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestNewGuardDefaultResolver(t *testing.T) {
	if g := NewGuard(nil, nil); g.resolver != net.DefaultResolver {
		t.Fatal("nil resolver should mean the system's")
	}
}

func TestParseCIDRs(t *testing.T) {
	got, err := ParseCIDRs("127.0.0.0/8, 10.1.2.3", "fd00::/8 ::1", "", "192.168.1.77/24")
	if err != nil {
		t.Fatal(err)
	}
	want := "[127.0.0.0/8 10.1.2.3/32 fd00::/8 ::1/128 192.168.1.0/24]"
	if s := fmt.Sprint(got); s != want {
		t.Errorf("ParseCIDRs = %s, want %s", s, want)
	}
	for _, bad := range []string{"10.0.0.0/33", "localhost", "fe80::1%eth0", "1.2.3"} {
		if _, err := ParseCIDRs(bad); err == nil || !strings.Contains(err.Error(), AllowEnv) {
			t.Errorf("ParseCIDRs(%q) = %v, want an error naming %s", bad, err, AllowEnv)
		}
	}
}
