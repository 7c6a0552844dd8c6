package jsonscan

import (
	"encoding/json"
	"errors"
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
