package webguard

import (
	"net/netip"
)

// Class is what kind of destination an IP address is, as far as the guard
// cares. Public is the only class dialed without an operator's allowance;
// Metadata is never dialed at all.
type Class uint8

const (
	// Public is a globally routable unicast address.
	Public Class = iota
	// Metadata is a cloud instance-metadata or credential endpoint.
	Metadata
	Loopback
	Private
	LinkLocal
	UniqueLocal
	// SharedCGNAT is 100.64.0.0/10, the carrier-grade NAT range (RFC 6598),
	// often used for internal services (Tailscale, cloud VPCs).
	SharedCGNAT
	Unspecified
	// ThisNetwork is 0.0.0.0/8: on Linux a connect to 0.x.y.z reaches the host itself.
	ThisNetwork
	Multicast
	Broadcast
	Documentation
	Benchmarking
	// Reserved is any other address that is not global unicast: IETF
	// protocol assignments, future use, deprecated and tunnel forms.
	Reserved
)

var classNames = [...]string{
	Public:        "public",
	Metadata:      "cloud metadata",
	Loopback:      "loopback",
	Private:       "private",
	LinkLocal:     "link-local",
	UniqueLocal:   "unique-local",
	SharedCGNAT:   "carrier-grade NAT (shared)",
	Unspecified:   "unspecified",
	ThisNetwork:   "\"this network\"",
	Multicast:     "multicast",
	Broadcast:     "broadcast",
	Documentation: "documentation",
	Benchmarking:  "benchmarking",
	Reserved:      "reserved",
}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Classification is the verdict on one address.
type Classification struct {
	Class Class
	// Range is the special-purpose block the address fell in (invalid for Public).
	Range netip.Prefix
	// Embedded is the IPv4 address carried inside an IPv6 form (IPv4-mapped,
	// IPv4-compatible, IPv4-translated, NAT64, 6to4), when there is one.
	Embedded netip.Addr
	// Form names the IPv6 form that carried Embedded ("IPv4-mapped", "NAT64"…).
	Form string
}

type block struct {
	prefix netip.Prefix
	class  Class
}

func mustBlocks(class Class, cidrs ...string) []block {
	out := make([]block, len(cidrs))
	for i, c := range cidrs {
		out[i] = block{netip.MustParsePrefix(c), class}
	}
	return out
}

// metadataAddrs are instance-metadata and credential endpoints. They are
// refused even inside an operator's allowed ranges: reaching one from a tool
// an AI agent drives is how cloud credentials leak.
var metadataAddrs = mustBlocks(Metadata,
	"169.254.169.254/32", // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle…
	"169.254.170.2/32",   // AWS ECS task metadata and credentials
	"169.254.170.23/32",  // AWS EKS Pod Identity agent
	"169.254.0.23/32",    // Tencent Cloud
	"100.100.100.200/32", // Alibaba Cloud
	"192.0.0.192/32",     // Oracle Cloud (legacy)
	"fd00:ec2::254/128",  // AWS IMDS over IPv6
	"fd00:ec2::23/128",   // AWS EKS Pod Identity agent over IPv6
)

// v4Blocks is the IANA IPv4 special-purpose registry, less the entries that
// are globally reachable, plus multicast and future use. Order matters only
// where blocks nest (the /32 broadcast inside 240/4).
var v4Blocks = concat(
	mustBlocks(Broadcast, "255.255.255.255/32"),
	mustBlocks(ThisNetwork, "0.0.0.0/8"),
	mustBlocks(Private, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	mustBlocks(SharedCGNAT, "100.64.0.0/10"),
	mustBlocks(Loopback, "127.0.0.0/8"),
	mustBlocks(LinkLocal, "169.254.0.0/16"),
	mustBlocks(Documentation, "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	mustBlocks(Benchmarking, "198.18.0.0/15"),
	mustBlocks(Reserved,
		"192.0.0.0/24",   // IETF protocol assignments
		"192.88.99.0/24", // deprecated 6to4 relay anycast
		"240.0.0.0/4",    // future use
	),
	mustBlocks(Multicast, "224.0.0.0/4"),
)

// v6Blocks covers IPv6 special-purpose blocks that do not embed an IPv4
// address. Anything outside 2000::/3 that is not handled before is Reserved.
var v6Blocks = concat(
	mustBlocks(Unspecified, "::/128"),
	mustBlocks(Loopback, "::1/128"),
	mustBlocks(UniqueLocal, "fc00::/7"),
	mustBlocks(LinkLocal, "fe80::/10"),
	mustBlocks(Private, "fec0::/10"), // deprecated site-local
	mustBlocks(Multicast, "ff00::/8"),
	mustBlocks(Documentation, "2001:db8::/32", "3fff::/20"),
	mustBlocks(Benchmarking, "2001:2::/48"),
	mustBlocks(Reserved,
		"2001::/23",      // IETF protocol assignments: Teredo (2001::/32), ORCHID…
		"64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
		"100::/64",       // discard-only
		"5f00::/16",      // SRv6 SIDs
	),
)

var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	v4Mapped      = netip.MustParsePrefix("::ffff:0:0/96")
	v4Translated  = netip.MustParsePrefix("::ffff:0:0:0/96")
	v4Compatible  = netip.MustParsePrefix("::/96")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
)

func concat(parts ...[]block) []block {
	var out []block
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func lookup(ip netip.Addr, blocks []block) (block, bool) {
	for _, b := range blocks {
		if b.prefix.Contains(ip) {
			return b, true
		}
	}
	return block{}, false
}

// Classify says what kind of destination ip is. IPv6 forms that carry an
// IPv4 address are judged by the address they carry, so ::ffff:127.0.0.1,
// 64:ff9b::7f00:1 and 2002:7f00:1:: are all loopback. A zone is ignored.
func Classify(ip netip.Addr) Classification {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return Classification{Class: Reserved}
	}
	if b, ok := lookup(ip, metadataAddrs); ok {
		return Classification{Class: Metadata, Range: b.prefix}
	}
	if ip.Is4() {
		if b, ok := lookup(ip, v4Blocks); ok {
			return Classification{Class: b.class, Range: b.prefix}
		}
		return Classification{Class: Public}
	}
	if ip.Is4In6() {
		return embedded(ip.Unmap(), "IPv4-mapped", v4Mapped, false)
	}
	// :: and ::1 sit inside the IPv4-compatible block; they are their own thing.
	if b, ok := lookup(ip, v6Blocks[:2]); ok {
		return Classification{Class: b.class, Range: b.prefix}
	}
	b16 := ip.As16()
	switch {
	case v4Compatible.Contains(ip):
		return embedded(netip.AddrFrom4([4]byte(b16[12:16])), "IPv4-compatible", v4Compatible, true)
	case v4Translated.Contains(ip):
		return embedded(netip.AddrFrom4([4]byte(b16[12:16])), "IPv4-translated", v4Translated, true)
	case nat64.Contains(ip):
		return embedded(netip.AddrFrom4([4]byte(b16[12:16])), "NAT64", nat64, false)
	case sixToFour.Contains(ip):
		return embedded(netip.AddrFrom4([4]byte(b16[2:6])), "6to4", sixToFour, false)
	}
	if b, ok := lookup(ip, v6Blocks[2:]); ok {
		return Classification{Class: b.class, Range: b.prefix}
	}
	if !globalUnicast.Contains(ip) {
		return Classification{Class: Reserved, Range: reservedRange(ip)}
	}
	return Classification{Class: Public}
}

// embedded judges an IPv6 form by the IPv4 address it carries. A public v4
// inside a deprecated form (IPv4-compatible, IPv4-translated) is still
// refused: nothing legitimate is served there.
func embedded(v4 netip.Addr, form string, carrier netip.Prefix, deprecated bool) Classification {
	c := Classify(v4)
	c.Embedded, c.Form = v4, form
	if c.Class == Public && deprecated {
		c.Class, c.Range = Reserved, carrier
	}
	return c
}

// reservedRange names the smallest conventional block for an address outside
// 2000::/3, for the refusal message.
func reservedRange(ip netip.Addr) netip.Prefix {
	p, _ := ip.Prefix(8)
	return p
}
