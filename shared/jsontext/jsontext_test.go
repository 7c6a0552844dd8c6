package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\", "\x00\x01\x1f\n\r\t", "é中😀", "a\u2028b\u2029", "bad\xffutf8", "</script>&"} {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, b, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if back != want {
			t.Errorf("round trip %q → %s → %q", s, b, back)
		}
		if n := StringLen(s); n > len(b) || (n < len(b) && !rareEscapes(s)) {
			t.Errorf("StringLen(%q) = %d, AppendString wrote %d bytes", s, n, len(b))
		}
		if strings.Contains(string(b), "\u2028") {
			t.Errorf("U+2028 not escaped: %s", b)
		}
	}
	// Every kind of byte at every offset of a string long enough for the
	// word-at-a-time skip, so both it and the byte loop meet each.
	for _, c := range []string{"\"", "\\", "\n", "\x00", "\x1f", "é", "\u2028", "\xff", "<"} {
		for pos := 0; pos < 20; pos++ {
			s := strings.Repeat("a", pos) + c + strings.Repeat("b", 19-pos)
			var back string
			if err := json.Unmarshal(AppendString(nil, s), &back); err != nil || back != strings.ToValidUTF8(s, "\ufffd") {
				t.Fatalf("round trip of %q: %q, %v", s, back, err)
			}
		}
	}
}

func TestAppendStringsIsAppendStringOfTheJoin(t *testing.T) {
	for _, parts := range [][]string{nil, {""}, {"a", "", "b"}, {"notice\n<tag>\n", `{"a":"q\"é"}`, "\n</tag>"}, {"\u2028", "x\x00"}} {
		got, want := AppendStrings([]byte("pre"), parts...), AppendString([]byte("pre"), strings.Join(parts, ""))
		if string(got) != string(want) {
			t.Errorf("AppendStrings(%q) = %s, want %s", parts, got, want)
		}
	}
}

func FuzzStringLen(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\", "\x00\x7f\n", "é中😀", "\u2028", "\xe2\x80", "bad\xffutf8", "\xf0\x9f\x98"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, b := StringLen(s), AppendString(nil, s); n > len(b) || (n < len(b) && !rareEscapes(s)) {
			t.Errorf("StringLen(%q) = %d, AppendString wrote %d bytes", s, n, len(b))
		}
	})
}

// rareEscapes reports whether s holds what StringLen does not count.
func rareEscapes(s string) bool {
	if !utf8.ValidString(s) || strings.ContainsAny(s, "\u2028\u2029") {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 && s[i] != '\n' {
			return true
		}
	}
	return false
}
