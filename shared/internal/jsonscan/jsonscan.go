// Package jsonscan holds the JSON lexical rules that the kit's JSON-RPC
// scanner (kit/internal/wire), which skips values without building them, and
// the argument decoder (validate), which builds them within limits, must
// agree on: white space, literals, the number grammar, and strings — scanned
// for their grammar, then unquoted. Keeping one copy means a message the
// transport accepts is read the same way by the decoder.
package jsonscan

import (
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// Error is a grammar error at byte offset Off of the input.
type Error struct {
	Off  int
	What string
}

func (e *Error) Error() string { return fmt.Sprintf("%s at offset %d", e.What, e.Off) }

func fail(off int, what string) error { return &Error{Off: off, What: what} }

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the offset of the first byte at or after i that is not
// white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// HasLiteral reports whether b holds lit at offset i.
func HasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// Word-at-a-time tests (SWAR) on 8 bytes loaded little-endian: a run of
// plain bytes, most of any string, is passed over 8 bytes per step instead
// of 1.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// word loads the 8 bytes of s from i, little-endian.
func word[S ~string | ~[]byte](s S, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// special marks (with its high bit) each byte of w that is a quote, a
// backslash or a control character (below 0x20), or, when ascii is set, not
// ASCII. A borrow can mark a byte after a marked one, never before it, so
// the lowest mark is exact.
func special(w uint64, ascii bool) uint64 {
	m := (w - lsb*0x20) &^ w // a byte below 0x20 (exact for a bound ≤ 0x80)
	m |= hasZero(w ^ (lsb * '"'))
	m |= hasZero(w ^ (lsb * '\\'))
	if ascii {
		m |= w
	}
	return m & msb
}

func hasZero(v uint64) uint64 { return (v - lsb) &^ v }

// SkipPlain returns the offset of the first byte of s at or after i that a
// JSON string cannot hold as it is (a quote, a backslash, a control
// character) or, when ascii is set, that is not ASCII; len(s) if none.
func SkipPlain[S ~string | ~[]byte](s S, i int, ascii bool) int {
	for ; i+8 <= len(s); i += 8 {
		if m := special(word(s, i), ascii); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || (ascii && c >= utf8.RuneSelf) {
			return i
		}
	}
	return i
}

// String checks the string starting at b[i] (a quote) and returns the offset
// past its closing quote and whether it holds escapes.
func String(b []byte, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(b); {
		j = SkipPlain(b, j, false)
		if j >= len(b) {
			break
		}
		c := b[j]
		switch {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return j, escaped, fail(j, "unterminated string")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) || !isHex4(b[j+2:j+6]) {
					return j, escaped, fail(j, "invalid \\u escape")
				}
				j += 6
			default:
				return j, escaped, fail(j, "invalid escape")
			}
		case c < 0x20:
			return j, escaped, fail(j, "control character in string")
		default:
			j++
		}
	}
	return len(b), escaped, fail(i, "unterminated string")
}

// Unquote decodes a string String has checked (quotes included), as
// encoding/json does: invalid UTF-8 and unpaired surrogates become U+FFFD.
func Unquote(q []byte, escaped bool) string {
	body := q[1 : len(q)-1]
	if !escaped {
		if utf8.Valid(body) {
			return string(body)
		}
		return string([]rune(string(body)))
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch body[i+1] {
		case '"', '\\', '/':
			out = append(out, body[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(body[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					r2 = hex4(body[i+2 : i+6])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					i += 6
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		}
		i += 2
	}
	if !utf8.Valid(out) {
		return string([]rune(string(out)))
	}
	return string(out)
}

// Number checks the number starting at b[i] and returns the offset past it.
func Number(b []byte, i int) (int, error) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	if j >= len(b) {
		return j, fail(j, "invalid number")
	}
	switch {
	case b[j] == '0':
		j++
	case b[j] >= '1' && b[j] <= '9':
		j = digits(b, j)
	default:
		return j, fail(j, "invalid number")
	}
	if j < len(b) && b[j] == '.' {
		start := j + 1
		if j = digits(b, start); j == start {
			return j, fail(j, "invalid number")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		start := j
		if j = digits(b, start); j == start {
			return j, fail(j, "invalid number")
		}
	}
	return j, nil
}

func digits(b []byte, j int) int {
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return j
}

func isHex4(h []byte) bool {
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// hex4 reads four hex digits String has checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// SkipValue returns the offset just past the JSON value starting at b[i]
// (after leading space), checking its grammar. Containers are tracked on an
// explicit stack, one byte per level.
func SkipValue(b []byte, i int) (int, error) {
	// One byte per open container, '{' or '['; the array keeps the
	// usual depths off the heap, with the race detector too.
	var open [32]byte
	stack := open[:0]
	i = SkipSpace(b, i)
	for {
		if i >= len(b) {
			return i, fail(i, "unexpected end of input")
		}
		// A value.
		switch c := b[i]; {
		case c == '{' || c == '[':
			j := SkipSpace(b, i+1)
			if j < len(b) && (b[j] == '}' && c == '{' || b[j] == ']' && c == '[') {
				i = j + 1
				break
			}
			stack = append(stack, c)
			i = j
			if c == '{' {
				var err error
				if i, err = skipKey(b, i); err != nil {
					return i, err
				}
			}
			continue
		case c == '"':
			j, _, err := String(b, i)
			if err != nil {
				return j, err
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j, err := Number(b, i)
			if err != nil {
				return j, err
			}
			i = j
		case c == 't':
			if !HasLiteral(b, i, "true") {
				return i, fail(i, "invalid literal")
			}
			i += 4
		case c == 'f':
			if !HasLiteral(b, i, "false") {
				return i, fail(i, "invalid literal")
			}
			i += 5
		case c == 'n':
			if !HasLiteral(b, i, "null") {
				return i, fail(i, "invalid literal")
			}
			i += 4
		default:
			return i, fail(i, fmt.Sprintf("unexpected character %q", c))
		}
		// After a value: close containers or move to the next member.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, fail(i, "unexpected end of input")
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				if top == '{' {
					var err error
					if i, err = skipKey(b, i); err != nil {
						return i, err
					}
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return i, fail(i, "expected , or end of container")
		}
	}
}

// skipKey reads `"key" :` and returns the offset of the value.
func skipKey(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return i, fail(i, "expected an object key")
	}
	j, _, err := String(b, i)
	if err != nil {
		return j, err
	}
	j = SkipSpace(b, j)
	if j >= len(b) || b[j] != ':' {
		return j, fail(j, "expected :")
	}
	return SkipSpace(b, j+1), nil
}
