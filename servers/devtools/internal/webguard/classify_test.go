package webguard

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip       string
		class    Class
		rng      string // expected Range ("" = none)
		form     string
		embedded string
	}{
		// Public, v4 and v6.
		{"8.8.8.8", Public, "", "", ""},
		{"93.184.216.34", Public, "", "", ""},
		{"100.63.255.255", Public, "", "", ""}, // just below CGNAT
		{"100.128.0.0", Public, "", "", ""},    // just above CGNAT
		{"172.15.255.255", Public, "", "", ""},
		{"172.32.0.0", Public, "", "", ""},
		{"198.17.255.255", Public, "", "", ""},
		{"198.20.0.0", Public, "", "", ""},
		{"192.31.196.1", Public, "", "", ""}, // AS112, globally reachable
		{"223.255.255.255", Public, "", "", ""},
		{"2606:4700:4700::1111", Public, "", "", ""},
		{"2a00:1450:4001:80b::200e", Public, "", "", ""},

		// Loopback.
		{"127.0.0.1", Loopback, "127.0.0.0/8", "", ""},
		{"127.255.255.254", Loopback, "127.0.0.0/8", "", ""},
		{"::1", Loopback, "::1/128", "", ""},
		{"::ffff:127.0.0.1", Loopback, "127.0.0.0/8", "IPv4-mapped", "127.0.0.1"},
		{"::127.0.0.1", Loopback, "127.0.0.0/8", "IPv4-compatible", "127.0.0.1"},
		{"64:ff9b::7f00:1", Loopback, "127.0.0.0/8", "NAT64", "127.0.0.1"},
		{"2002:7f00:1::1", Loopback, "127.0.0.0/8", "6to4", "127.0.0.1"},
		{"fe80::1%eth0", LinkLocal, "fe80::/10", "", ""}, // zone ignored

		// Private (RFC 1918) and deprecated site-local.
		{"10.0.0.5", Private, "10.0.0.0/8", "", ""},
		{"10.255.255.255", Private, "10.0.0.0/8", "", ""},
		{"172.16.0.1", Private, "172.16.0.0/12", "", ""},
		{"172.31.255.255", Private, "172.16.0.0/12", "", ""},
		{"192.168.1.1", Private, "192.168.0.0/16", "", ""},
		{"::ffff:10.0.0.1", Private, "10.0.0.0/8", "IPv4-mapped", "10.0.0.1"},
		{"::ffff:192.168.0.1", Private, "192.168.0.0/16", "IPv4-mapped", "192.168.0.1"},
		{"64:ff9b::a00:1", Private, "10.0.0.0/8", "NAT64", "10.0.0.1"},
		{"64:ff9b::c0a8:101", Private, "192.168.0.0/16", "NAT64", "192.168.1.1"},
		{"2002:ac10:1::", Private, "172.16.0.0/12", "6to4", "172.16.0.1"},
		{"2002:c0a8:101::1", Private, "192.168.0.0/16", "6to4", "192.168.1.1"},
		{"::ffff:0:10.1.2.3", Private, "10.0.0.0/8", "IPv4-translated", "10.1.2.3"},
		{"fec0::1", Private, "fec0::/10", "", ""},

		// Link-local.
		{"169.254.0.1", LinkLocal, "169.254.0.0/16", "", ""},
		{"169.254.169.253", LinkLocal, "169.254.0.0/16", "", ""},
		{"fe80::1", LinkLocal, "fe80::/10", "", ""},
		{"febf:ffff::1", LinkLocal, "fe80::/10", "", ""},
		{"::ffff:169.254.1.1", LinkLocal, "169.254.0.0/16", "IPv4-mapped", "169.254.1.1"},

		// Unique-local.
		{"fc00::1", UniqueLocal, "fc00::/7", "", ""},
		{"fd12:3456:789a::1", UniqueLocal, "fc00::/7", "", ""},

		// CGNAT.
		{"100.64.0.1", SharedCGNAT, "100.64.0.0/10", "", ""},
		{"100.127.255.255", SharedCGNAT, "100.64.0.0/10", "", ""},
		{"::ffff:100.64.0.1", SharedCGNAT, "100.64.0.0/10", "IPv4-mapped", "100.64.0.1"},

		// Unspecified and "this network".
		{"0.0.0.0", ThisNetwork, "0.0.0.0/8", "", ""},
		{"0.1.2.3", ThisNetwork, "0.0.0.0/8", "", ""},
		{"::", Unspecified, "::/128", "", ""},
		{"::ffff:0.0.0.0", ThisNetwork, "0.0.0.0/8", "IPv4-mapped", "0.0.0.0"},

		// Multicast and broadcast.
		{"224.0.0.1", Multicast, "224.0.0.0/4", "", ""},
		{"239.255.255.250", Multicast, "224.0.0.0/4", "", ""},
		{"ff02::1", Multicast, "ff00::/8", "", ""},
		{"255.255.255.255", Broadcast, "255.255.255.255/32", "", ""},
		{"::ffff:255.255.255.255", Broadcast, "255.255.255.255/32", "IPv4-mapped", "255.255.255.255"},

		// Documentation and benchmarking.
		{"192.0.2.1", Documentation, "192.0.2.0/24", "", ""},
		{"198.51.100.7", Documentation, "198.51.100.0/24", "", ""},
		{"203.0.113.9", Documentation, "203.0.113.0/24", "", ""},
		{"2001:db8::1", Documentation, "2001:db8::/32", "", ""},
		{"3fff::1", Documentation, "3fff::/20", "", ""},
		{"198.18.0.1", Benchmarking, "198.18.0.0/15", "", ""},
		{"198.19.255.255", Benchmarking, "198.18.0.0/15", "", ""},
		{"2001:2::1", Benchmarking, "2001:2::/48", "", ""},

		// Reserved.
		{"240.0.0.1", Reserved, "240.0.0.0/4", "", ""},
		{"192.0.0.8", Reserved, "192.0.0.0/24", "", ""},
		{"192.88.99.1", Reserved, "192.88.99.0/24", "", ""},
		{"2001::1", Reserved, "2001::/23", "", ""}, // Teredo
		{"2001:10::1", Reserved, "2001::/23", "", ""},
		{"64:ff9b:1::a00:1", Reserved, "64:ff9b:1::/48", "", ""},
		{"100::1", Reserved, "100::/64", "", ""},
		{"5f00::1", Reserved, "5f00::/16", "", ""},
		{"4000::1", Reserved, "4000::/8", "", ""},
		{"::2:0:0:1", Reserved, "::/8", "", ""},
		{"::8.8.8.8", Reserved, "::/96", "IPv4-compatible", "8.8.8.8"}, // deprecated form, even for a public v4
		{"::ffff:0:8.8.8.8", Reserved, "::ffff:0:0:0/96", "IPv4-translated", "8.8.8.8"},

		// Embedded public v4 in live forms is public.
		{"::ffff:8.8.8.8", Public, "", "IPv4-mapped", "8.8.8.8"},
		{"64:ff9b::808:808", Public, "", "NAT64", "8.8.8.8"},
		{"2002:808:808::1", Public, "", "6to4", "8.8.8.8"},

		// Cloud metadata, in every form.
		{"169.254.169.254", Metadata, "169.254.169.254/32", "", ""},
		{"169.254.170.2", Metadata, "169.254.170.2/32", "", ""},
		{"169.254.170.23", Metadata, "169.254.170.23/32", "", ""},
		{"169.254.0.23", Metadata, "169.254.0.23/32", "", ""},
		{"100.100.100.200", Metadata, "100.100.100.200/32", "", ""},
		{"192.0.0.192", Metadata, "192.0.0.192/32", "", ""},
		{"fd00:ec2::254", Metadata, "fd00:ec2::254/128", "", ""},
		{"fd00:ec2::23", Metadata, "fd00:ec2::23/128", "", ""},
		{"::ffff:169.254.169.254", Metadata, "169.254.169.254/32", "IPv4-mapped", "169.254.169.254"},
		{"::169.254.169.254", Metadata, "169.254.169.254/32", "IPv4-compatible", "169.254.169.254"},
		{"64:ff9b::a9fe:a9fe", Metadata, "169.254.169.254/32", "NAT64", "169.254.169.254"},
		{"2002:a9fe:a9fe::1", Metadata, "169.254.169.254/32", "6to4", "169.254.169.254"},
		{"::ffff:100.100.100.200", Metadata, "100.100.100.200/32", "IPv4-mapped", "100.100.100.200"},
	}
	for _, tc := range tests {
		t.Run(tc.ip, func(t *testing.T) {
			got := Classify(netip.MustParseAddr(tc.ip))
			if got.Class != tc.class {
				t.Fatalf("class = %s, want %s", got.Class, tc.class)
			}
			if rng := validText(got.Range); rng != tc.rng {
				t.Errorf("range = %q, want %q", rng, tc.rng)
			}
			if got.Form != tc.form {
				t.Errorf("form = %q, want %q", got.Form, tc.form)
			}
			if emb := validText(got.Embedded); emb != tc.embedded {
				t.Errorf("embedded = %q, want %q", emb, tc.embedded)
			}
		})
	}
}

// validText is v as text, or "" when v is the zero (invalid) value.
func validText(v interface {
	IsValid() bool
	String() string
}) string {
	if !v.IsValid() {
		return ""
	}
	return v.String()
}

func TestClassifyInvalidAddr(t *testing.T) {
	if c := Classify(netip.Addr{}); c.Class != Reserved {
		t.Fatalf("zero Addr class = %s, want reserved", c.Class)
	}
}

func TestClassString(t *testing.T) {
	for c := Public; c <= Reserved; c++ {
		if c.String() == "" || c.String() == "unknown" {
			t.Errorf("class %d has no name", c)
		}
	}
	if Class(200).String() != "unknown" {
		t.Error("out-of-range class should be unknown")
	}
}
