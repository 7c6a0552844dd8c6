package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
)

func TestErrorsSayWhereAndWhat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		num  bool
		off  int
		what string
	}{
		{`"abc`, false, 0, "unterminated string"},
		{`"a\`, false, 2, "unterminated string"},
		{`"a\x"`, false, 2, "invalid escape"},
		{`"a\u12g4"`, false, 2, "invalid \\u escape"},
		{"\"a\nb\"", false, 2, "control character in string"},
		{`-`, true, 1, "invalid number"},
		{`1.`, true, 2, "invalid number"},
		{`1e+`, true, 3, "invalid number"},
		{`-x`, true, 1, "invalid number"},
	} {
		var err error
		if tc.num {
			_, err = Number([]byte(tc.in), 0)
		} else {
			_, _, err = String([]byte(tc.in), 0)
		}
		var e *Error
		if !errors.As(err, &e) || e.Off != tc.off || e.What != tc.what {
			t.Errorf("%q: got %v, want %q at offset %d", tc.in, err, tc.what, tc.off)
		}
	}
}

func TestNumberStopsAtItsEnd(t *testing.T) {
	for in, want := range map[string]int{`0,`: 1, `-0.5]`: 4, `12e-3}`: 5, `01`: 1, `7`: 1} {
		if end, err := Number([]byte(in), 0); err != nil || end != want {
			t.Errorf("Number(%q) = %d, %v; want %d", in, end, err, want)
		}
	}
}

// FuzzStringAgreesWithEncodingJSON holds String and Unquote to encoding/json
// for one string token: both accept it or both refuse it, and decode it to
// the same text (invalid UTF-8 and lone surrogates as U+FFFD).
func FuzzStringAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`"plain"`, `"x\u00e9\n"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, `"\\"`, "\"a\xffb\"", `"\ud800\u0041"`, `"unterminated`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		end, esc, err := String(b, 0)
		var want string
		werr := json.Unmarshal(b, &want)
		if err == nil && end != len(b) {
			return // a string followed by more bytes: not one token
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("String(%q) err=%v, encoding/json err=%v", b, err, werr)
		}
		if err == nil {
			if got := Unquote(b[:end], esc); got != want {
				t.Fatalf("Unquote(%q) = %q, encoding/json = %q", b, got, want)
			}
		}
	})
}

// FuzzNumberAgreesWithEncodingJSON: Number takes the whole input exactly when
// encoding/json takes it as a number.
func FuzzNumberAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `1.5e10`, `01`, `1.`, `-`, `.5`, `1E+2`, `+1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || !(b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
			return
		}
		end, err := Number(b, 0)
		whole := err == nil && end == len(b)
		var n json.Number
		// encoding/json also takes trailing white space; Number stops before it.
		if whole != (json.Unmarshal(b, &n) == nil && !IsSpace(b[len(b)-1])) {
			t.Fatalf("Number(%q) = %d, %v; encoding/json disagrees", b, end, err)
		}
	})
}

// TestSkipPlainIsExact holds the word-at-a-time skip to the byte-by-byte
// rule: every byte value at every offset among plain bytes and among other
// stopping ones, in strings and byte slices, and random input.
func TestSkipPlainIsExact(t *testing.T) {
	stops := func(c byte, ascii bool) bool { return c < 0x20 || c == '"' || c == '\\' || (ascii && c >= 0x80) }
	bytewise := func(b []byte, ascii bool) int {
		for i, c := range b {
			if stops(c, ascii) {
				return i
			}
		}
		return len(b)
	}
	check := func(b []byte, from int) {
		t.Helper()
		for _, ascii := range []bool{false, true} {
			want := from + bytewise(b[from:], ascii)
			if got := SkipPlain(b, from, ascii); got != want {
				t.Fatalf("SkipPlain(%q, %d, ascii=%v) = %d, want %d", b, from, ascii, got, want)
			}
			if got := SkipPlain(string(b), from, ascii); got != want {
				t.Fatalf("SkipPlain(string %q, %d, ascii=%v) = %d, want %d", b, from, ascii, got, want)
			}
		}
	}
	for _, fill := range []byte{'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff, 0x1f, 0x00, '"', '\\'} {
		for pos := 0; pos < 19; pos++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte{'a'}, 19)
				for i := pos + 1; i < len(b); i++ {
					b[i] = fill // what follows the byte must not matter
				}
				b[pos] = byte(c)
				check(b, 0)
				check(b, pos)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		check(b, r.IntN(len(b)+1))
	}
}
