package mailmsg

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// CheckHeaderValue refuses a value that could break out of its header: CR,
// LF and other control characters (a tab is allowed).
func CheckHeaderValue(field, value string) error {
	if !utf8.ValidString(value) {
		return mcperr.Invalid(field, nil, "UTF-8 text", "%s is not valid UTF-8", field)
	}
	for _, r := range value {
		if r == '\r' || r == '\n' {
			return mcperr.Invalid(field, value, "one line of text", "%s must not contain line breaks (CR or LF)", field)
		}
		if (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return mcperr.Invalid(field, value, "text without control characters", "%s contains the control character %U", field, r)
		}
	}
	if len(value) > MaxHeaderLen {
		return mcperr.Invalid(field, len(value), fmt.Sprintf("at most %d bytes", MaxHeaderLen), "%s is too long", field)
	}
	return nil
}

var atext = func() [128]bool {
	var t [128]bool
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "!#$%&'*+-/=?^_`{|}~" {
		t[c] = true
	}
	return t
}()

// validAddrSpec checks local@domain: a dot-atom local part (quoted local
// parts are legal but so rare in real mail that they are refused rather
// than risked), and a domain of dot-separated labels with a dot in it.
func validAddrSpec(a string) bool {
	at := strings.LastIndexByte(a, '@')
	if at <= 0 || at == len(a)-1 || len(a) > 254 {
		return false
	}
	local, domain := a[:at], a[at+1:]
	if len(local) > 64 || !dotAtom(local, false) {
		return false
	}
	if !strings.Contains(domain, ".") || !dotAtom(domain, true) {
		return false
	}
	for _, label := range strings.Split(domain, ".") {
		if len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
	}
	return true
}

func dotAtom(s string, domain bool) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
		case c >= 0x80:
			return false
		case domain:
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		case !atext[c]:
			return false
		}
	}
	return true
}

// ParseAddress reads one address, "jane@example.com" or
// "Jane Doe <jane@example.com>", for the argument field.
func ParseAddress(field, s string) (*mail.Address, error) {
	s = strings.TrimSpace(s)
	if err := CheckHeaderValue(field, s); err != nil {
		return nil, err
	}
	if s == "" {
		return nil, mcperr.Invalid(field, s, "an email address", "%s is empty", field)
	}
	a, err := (&mail.AddressParser{WordDecoder: decoder}).Parse(s)
	if err != nil || !validAddrSpec(a.Address) {
		return nil, mcperr.Invalid(field, s, "an email address such as jane@example.com or \"Jane Doe <jane@example.com>\"",
			"%s is not a valid email address", field)
	}
	return a, nil
}

// ParseAddresses reads a list of addresses for field (field[i] names each).
func ParseAddresses(field string, list []string) ([]*mail.Address, error) {
	out := make([]*mail.Address, 0, len(list))
	for i, s := range list {
		a, err := ParseAddress(fmt.Sprintf("%s[%d]", field, i), s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// DomainOf returns the domain of an address.
func DomainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}

func formatAddresses(as []*mail.Address) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}
