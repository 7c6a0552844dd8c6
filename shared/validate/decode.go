package validate

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

// Limits bound what decoding one set of arguments may cost. The work of a
// call stays proportional to its size: a hostile document of a million keys
// is refused after MaxValues of them, before anything builds on it.
type Limits struct {
	// MaxDepth bounds nesting.
	MaxDepth int
	// MaxValues bounds the number of values (each object member, array item
	// and scalar counts one).
	MaxValues int
}

// DefaultLimits suit every tool in the fleet: no tool takes arguments
// nested 64 deep, and 100 000 values is a large insert of rows.
var DefaultLimits = Limits{MaxDepth: 64, MaxValues: 100_000}

// ErrDuplicateKey is returned for an object that names a key twice. Such
// arguments are ambiguous — the handler sees the last value, a reader of
// the audit log may see the first — so they are refused outright.
var ErrDuplicateKey = errors.New("duplicate key")

// ErrTooLarge is returned when arguments exceed Limits.
var ErrTooLarge = errors.New("arguments too large")

// Decode parses arguments the way CheckValue expects them (numbers kept as
// json.Number, so large integers keep their precision) within DefaultLimits.
// Empty or null input is an empty object. Trailing data is an error.
func Decode(raw json.RawMessage) (any, error) { return DefaultLimits.Decode(raw) }

// Decode parses arguments within l.
func (l Limits) Decode(raw json.RawMessage) (any, error) {
	d := decoder{b: raw, limits: l}
	d.space()
	if d.i == len(d.b) {
		return map[string]any{}, nil
	}
	if d.lit("null") {
		d.space()
		if d.i == len(d.b) {
			return map[string]any{}, nil
		}
		return nil, d.fail("unexpected data after the arguments object")
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.b) {
		return nil, d.fail("unexpected data after the arguments object")
	}
	return v, nil
}

type decoder struct {
	b      []byte
	i      int
	values int
	limits Limits
}

func (d *decoder) fail(what string) error {
	return fmt.Errorf("%s (at byte %d)", what, d.i)
}

func (d *decoder) space() { d.i = jsonscan.SkipSpace(d.b, d.i) }

func (d *decoder) lit(s string) bool {
	if jsonscan.HasLiteral(d.b, d.i, s) {
		d.i += len(s)
		return true
	}
	return false
}

func (d *decoder) value(depth int) (any, error) {
	if depth > d.limits.MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", ErrTooLarge, d.limits.MaxDepth)
	}
	if d.values++; d.values > d.limits.MaxValues {
		return nil, fmt.Errorf("%w: more than %d values", ErrTooLarge, d.limits.MaxValues)
	}
	d.space()
	if d.i >= len(d.b) {
		return nil, d.fail("unexpected end of input")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		m := map[string]any{}
		d.space()
		if d.i < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return m, nil
		}
		for {
			d.space()
			if d.i >= len(d.b) || d.b[d.i] != '"' {
				return nil, d.fail("expected an object key")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("%w %q", ErrDuplicateKey, truncate(k))
			}
			d.space()
			if d.i >= len(d.b) || d.b[d.i] != ':' {
				return nil, d.fail("expected :")
			}
			d.i++
			if m[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
			d.space()
			if d.i < len(d.b) && d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.i < len(d.b) && d.b[d.i] == '}' {
				d.i++
				return m, nil
			}
			return nil, d.fail("expected , or }")
		}
	case c == '[':
		d.i++
		a := []any{}
		d.space()
		if d.i < len(d.b) && d.b[d.i] == ']' {
			d.i++
			return a, nil
		}
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			d.space()
			if d.i < len(d.b) && d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.i < len(d.b) && d.b[d.i] == ']' {
				d.i++
				return a, nil
			}
			return nil, d.fail("expected , or ]")
		}
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case d.lit("true"):
		return true, nil
	case d.lit("false"):
		return false, nil
	case d.lit("null"):
		return nil, nil
	}
	return nil, d.fail("unexpected character")
}

func (d *decoder) number() (json.Number, error) {
	end, err := jsonscan.Number(d.b, d.i)
	if err != nil {
		return "", d.scanErr(err)
	}
	n := json.Number(d.b[d.i:end])
	d.i = end
	return n, nil
}

// str reads a string at d.b[d.i] (a quote).
func (d *decoder) str() (string, error) {
	end, esc, err := jsonscan.String(d.b, d.i)
	if err != nil {
		return "", d.scanErr(err)
	}
	s := jsonscan.Unquote(d.b[d.i:end], esc)
	d.i = end
	return s, nil
}

// scanErr gives a jsonscan error the decoder's form.
func (d *decoder) scanErr(err error) error {
	if e, ok := err.(*jsonscan.Error); ok {
		return fmt.Errorf("%s (at byte %d)", e.What, e.Off)
	}
	return err
}

func truncate(s string) string { return textcut.Ellipsis(s, 64) }
