// Package jsontext writes text as JSON strings: one escaper for the
// protocol engine's messages and for servers that build JSON by hand.
// Invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped so that
// the output is also valid JavaScript; nothing else is escaped but what JSON
// requires.
package jsontext

import (
	"strings"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
)

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped so the output is also valid JavaScript.
func AppendString(dst []byte, s string) []byte {
	return append(appendEscaped(append(dst, '"'), s), '"')
}

// AppendStrings appends one JSON string holding the parts one after another,
// as AppendString(strings.Join(parts, "")) would, without joining them.
func AppendStrings(dst []byte, parts ...string) []byte {
	dst = append(dst, '"')
	for _, s := range parts {
		dst = appendEscaped(dst, s)
	}
	return append(dst, '"')
}

// appendEscaped appends s escaped as the inside of a JSON string. Each of
// AppendStrings' parts is escaped on its own, so a rune split between two
// parts would become U+FFFD: its callers pass whole strings.
func appendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if i = jsonscan.SkipPlain(s, i, true); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit(c>>4), hexDigit(c&0xF))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigit(byte(r&0xF)))
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// StringLen is the length AppendString appends for s when s holds none of
// the rarer escapes (a control character other than newline, invalid UTF-8,
// U+2028, U+2029) and less otherwise: enough to size a buffer for JSON text
// and most prose at the cost of three vectorised counts, not a pass byte by
// byte.
func StringLen(s string) int {
	return len(s) + 2 + strings.Count(s, `"`) + strings.Count(s, `\`) + strings.Count(s, "\n")
}

func hexDigit(b byte) byte { return "0123456789abcdef"[b&0xF] }
