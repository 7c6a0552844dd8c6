package wire

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
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

func appendID(dst, id []byte) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// AppendResult appends a whole response: {"jsonrpc":"2.0","id":…,"result":…}.
// result must be one JSON value.
func AppendResult(dst, id, result []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, len(id)+len(result)+40)
	}
	dst = AppendResultHead(dst, id)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendResultHead appends a response's opening up to its result,
// {"jsonrpc":"2.0","id":…,"result":, for a result written in place after
// it; a '}' closes the response.
func AppendResultHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendError appends an error response. data, if not nil, must be one JSON
// value. A nil id is written as null (the request's id could not be read).
func AppendError(dst, id []byte, code int, message string, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, message)
	if data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, "}}"...)
}

// AppendNotification appends a notification; params may be nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendRequest appends a request the server sends to its client.
func AppendRequest(dst, id []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// Truncate shortens s to at most n bytes on a rune boundary, marking the cut,
// so that names and values echoed in errors stay small.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
