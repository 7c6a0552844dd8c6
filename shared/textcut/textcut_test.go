package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s                string
		n                int
		prefix, ellipsis string
	}{
		{"", 3, "", ""},
		{"abc", 3, "abc", "abc"},
		{"abcd", 3, "abc", "abc…"},
		{"abc", 0, "", "…"},
		{"abc", -1, "", "…"},
		{"aé", 2, "a", "a…"},             // é is 2 bytes: not split
		{"aé", 3, "aé", "aé"},            // fits exactly
		{"✓✓", 5, "✓", "✓…"},             // ✓ is 3 bytes
		{"✓✓", 2, "", "…"},               // no whole character fits
		{"a\xffb", 2, "a\xff", "a\xff…"}, // an invalid byte counts as a character
		{strings.Repeat("✓", 100), 7, "✓✓", "✓✓…"},
	} {
		got := Prefix(tc.s, tc.n)
		if got != tc.prefix {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.prefix)
		}
		if len(got) > max(tc.n, 0) || !strings.HasPrefix(tc.s, got) {
			t.Errorf("Prefix(%q, %d) = %q: not a prefix within the bound", tc.s, tc.n, got)
		}
		if utf8.ValidString(tc.s) && !utf8.ValidString(got) {
			t.Errorf("Prefix(%q, %d) = %q split a character", tc.s, tc.n, got)
		}
		if got := Ellipsis(tc.s, tc.n); got != tc.ellipsis {
			t.Errorf("Ellipsis(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.ellipsis)
		}
	}
}
