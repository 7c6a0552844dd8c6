// Package wire reads and writes JSON-RPC 2.0 messages for the kit's
// transports in one pass each way. Parse finds the envelope's members by
// scanning, without building values, and keeps each member as a slice of the
// input; the kit then decodes only what a method needs. The scanner has no
// recursion and no depth limit of its own, so a hostile document cannot
// exhaust the stack, and the id of a request whose params are too deep for
// the decoder is still known and echoed in the error.
package wire

import (
	"errors"
	"fmt"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
)

// ErrSyntax is wrapped by every error for input that is not JSON.
var ErrSyntax = errors.New("invalid JSON")

func syntaxErr(off int, what string) error {
	return fmt.Errorf("%w at offset %d: %s", ErrSyntax, off, what)
}

// The lexical rules are jsonscan's, shared with the argument decoder; these
// give its errors the package's form.

func skipSpace(b []byte, i int) int { return jsonscan.SkipSpace(b, i) }

// scanString checks the string starting at b[i] (a quote) and returns the
// offset past it and whether it holds escapes.
func scanString(b []byte, i int) (int, bool, error) {
	end, esc, err := jsonscan.String(b, i)
	return end, esc, asSyntax(err)
}

func asSyntax(err error) error {
	if e, ok := err.(*jsonscan.Error); ok {
		return syntaxErr(e.Off, e.What)
	}
	return err
}

// skipValue returns the offset just past the JSON value starting at b[i]
// (after leading space), checking its grammar (jsonscan.SkipValue).
func skipValue(b []byte, i int) (int, error) {
	end, err := jsonscan.SkipValue(b, i)
	return end, asSyntax(err)
}

// Members calls fn for each member of the JSON object obj, in order, with
// the decoded key and the raw value. It stops at fn's first error.
func Members(obj []byte, fn func(key string, value []byte) error) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return fmt.Errorf("%w: not an object", ErrSyntax)
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return trailing(obj, i+1)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return syntaxErr(i, "expected an object key")
		}
		end, esc, err := scanString(obj, i)
		if err != nil {
			return err
		}
		key := jsonscan.Unquote(obj[i:end], esc)
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return syntaxErr(i, "expected :")
		}
		i = skipSpace(obj, i+1)
		vend, err := skipValue(obj, i)
		if err != nil {
			return err
		}
		if err := fn(key, obj[i:vend]); err != nil {
			return err
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return syntaxErr(i, "unterminated object")
		}
		if obj[i] == '}' {
			return trailing(obj, i+1)
		}
		if obj[i] != ',' {
			return syntaxErr(i, "expected , or }")
		}
		i = skipSpace(obj, i+1)
	}
}

// Elements calls fn for each element of the JSON array arr, in order, with
// its raw bytes. It stops at fn's first error, which it returns; a value
// that is not an array, or malformed, is a syntax error.
func Elements(arr []byte, fn func(elem []byte) error) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return fmt.Errorf("%w: not an array", ErrSyntax)
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return trailing(arr, i+1)
	}
	for {
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return syntaxErr(i, "unterminated array")
		}
		if arr[i] == ']' {
			return trailing(arr, i+1)
		}
		if arr[i] != ',' {
			return syntaxErr(i, "expected , or ]")
		}
		i = skipSpace(arr, i+1)
	}
}

func trailing(b []byte, i int) error {
	if i = skipSpace(b, i); i != len(b) {
		return syntaxErr(i, "data after the value")
	}
	return nil
}

// Valid reports whether b is exactly one JSON value.
func Valid(b []byte) bool {
	end, err := skipValue(b, 0)
	return err == nil && skipSpace(b, end) == len(b)
}

// String decodes a raw JSON string value.
func String(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", errors.New("not a string")
	}
	end, esc, err := scanString(raw, 0)
	if err != nil {
		return "", err
	}
	if end != len(raw) {
		return "", errors.New("not a single string")
	}
	return jsonscan.Unquote(raw, esc), nil
}
