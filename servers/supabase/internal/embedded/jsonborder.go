package embedded

import (
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"sort"

	"modernc.org/sqlite"
)

// jsonbKeyFunc is mcp_jsonb_key(value): a byte string whose order is
// PostgreSQL's jsonb order, so that gt/lt filters and ORDER BY on a jsonb
// column give on SQLite what they give on PostgreSQL, not the order of the
// JSON text. The order (PostgreSQL's documentation, "jsonb Indexing"):
// object > array > boolean > number > string > null; an object with more
// pairs is greater, then pairs compare in stored key order (shorter keys
// first, then bytewise); an array with more elements is greater, then
// elements compare in order; numbers numerically; strings bytewise (the C
// collation); false < true; and an empty top-level array sorts below null.
func jsonbKeyFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := text(args[0])
	if !ok || args[0] == nil {
		return nil, nil
	}
	v, err := decodeJSON(s)
	if err != nil {
		return nil, errors.New(argErrorPrefix + "a stored value is not JSON")
	}
	if a, ok := v.([]any); ok && len(a) == 0 {
		return []byte{0}, nil
	}
	return jsonbKey(nil, v), nil
}

// Type tags in jsonb order.
const (
	tagNull byte = iota + 1
	tagString
	tagNumber
	tagBool
	tagArray
	tagObject
)

func jsonbKey(out []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(out, tagNull)
	case string:
		return appendString(append(out, tagString), x)
	case json.Number:
		f, _ := x.Float64()
		return appendFloat(append(out, tagNumber), f)
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		return append(out, tagBool, b)
	case []any:
		out = binary.BigEndian.AppendUint32(append(out, tagArray), uint32(len(x)))
		for _, e := range x {
			out = jsonbKey(out, e)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if len(keys[i]) != len(keys[j]) {
				return len(keys[i]) < len(keys[j])
			}
			return keys[i] < keys[j]
		})
		out = binary.BigEndian.AppendUint32(append(out, tagObject), uint32(len(x)))
		for _, k := range keys {
			out = jsonbKey(appendString(out, k), x[k])
		}
		return out
	}
	return out
}

// appendString writes s so that bytewise order of the encodings is the
// order of the strings, and no encoding is a prefix of another: 0x00 is
// escaped as 00 FF, and 00 00 ends the string.
func appendString(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			out = append(out, 0, 0xFF)
			continue
		}
		out = append(out, s[i])
	}
	return append(out, 0, 0)
}

// appendFloat writes f big-endian with its sign bit flipped (all bits for
// negatives), so that bytewise order is numeric order.
func appendFloat(out []byte, f float64) []byte {
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(out, b)
}
