// Package validate checks tool arguments against the tool's own JSON Schema
// before any handler runs, so handlers only ever see well-formed input and a
// model that sent bad arguments is told exactly which field was wrong, what
// it sent and what was expected.
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/xeipuuv/gojsonschema"
)

// Schema is a compiled input schema; compile once at registration.
type Schema struct {
	s *gojsonschema.Schema
}

// Compile parses and compiles a JSON Schema document.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty schema")
	}
	s, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return &Schema{s: s}, nil
}

// Check validates raw JSON arguments. Missing or null arguments are treated as
// an empty object, as MCP clients send nothing for argument-less tools.
func (s *Schema) Check(raw json.RawMessage) *mcperr.Error {
	v, err := Decode(raw)
	if err != nil {
		return DecodeError(err)
	}
	return s.CheckValue(v)
}

// DecodeError describes a Decode failure to the client.
func DecodeError(err error) *mcperr.Error {
	if errors.Is(err, ErrDuplicateKey) {
		return mcperr.Invalid("arguments", nil, "each key once", "arguments are ambiguous: %v", err)
	}
	return mcperr.Invalid("arguments", nil, "a JSON object", "arguments are not valid JSON: %v", err)
}

// Decode parses arguments the way CheckValue expects them (numbers kept as
// json.Number, so large integers keep their precision). Empty or null input
// is an empty object. Trailing data after the value is an error.
func Decode(raw json.RawMessage) (any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the arguments object")
	}
	return v, nil
}

// maxDepth bounds nesting: no tool takes arguments this deep, and a bound
// keeps a hostile document from costing unbounded recursion.
const maxDepth = 64

// ErrDuplicateKey is returned for an object that names a key twice. Such
// arguments are ambiguous — the handler sees the last value, a reader of
// the audit log may see the first — so they are refused outright.
var ErrDuplicateKey = errors.New("duplicate key")

// decodeValue reads one JSON value token by token, refusing duplicate keys.
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("arguments nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("%w %q", ErrDuplicateKey, k)
				}
				if m[k], err = decodeValue(dec, depth+1); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token() // '}'
			return m, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // string, json.Number, bool or nil
	}
}

// CheckValue validates arguments already decoded by Decode, so a caller that
// also needs the decoded value (the audit log) parses the JSON only once.
func (s *Schema) CheckValue(v any) *mcperr.Error {
	res, err := s.s.Validate(gojsonschema.NewRawLoader(v))
	if err != nil {
		return mcperr.Invalid("arguments", nil, "a JSON object", "arguments could not be validated")
	}
	if res.Valid() {
		return nil
	}
	errs := res.Errors()
	// Report the first error deterministically; list the rest in the message
	// so a model can fix everything in one retry.
	sort.SliceStable(errs, func(i, j int) bool { return fieldOf(errs[i]) < fieldOf(errs[j]) })
	first := errs[0]
	msg := describe(first)
	if len(errs) > 1 {
		more := make([]string, 0, len(errs)-1)
		for _, e := range errs[1:] {
			more = append(more, describe(e))
		}
		msg += "; also: " + strings.Join(more, "; ")
	}
	return mcperr.Invalid(fieldOf(first), valueOf(first), expectedOf(first), "%s", msg)
}

// fieldOf names the offending property with a dotted path ("filters.limit"),
// including the property name for "required" and "additional property" errors
// whose gojsonschema field is the parent object.
func fieldOf(e gojsonschema.ResultError) string {
	field := e.Field()
	if field == "(root)" {
		field = ""
	}
	var child string
	switch e.Type() {
	case "required":
		child, _ = e.Details()["property"].(string)
	case "additional_property_not_allowed":
		child, _ = e.Details()["property"].(string)
	}
	if child != "" {
		if field == "" {
			return child
		}
		return field + "." + child
	}
	if field == "" {
		return "arguments"
	}
	return field
}

func valueOf(e gojsonschema.ResultError) any {
	switch e.Type() {
	case "required":
		return nil
	case "additional_property_not_allowed":
		return nil
	}
	v := e.Value()
	if s, ok := v.(string); ok && len(s) > 200 {
		return s[:200] + "…"
	}
	if _, ok := v.(map[string]any); ok {
		return nil
	}
	if _, ok := v.([]any); ok {
		return nil
	}
	return v
}

func expectedOf(e gojsonschema.ResultError) string {
	d := e.Details()
	switch e.Type() {
	case "required":
		return "a value (required)"
	case "additional_property_not_allowed":
		return "no such property"
	case "invalid_type":
		return fmt.Sprint(d["expected"])
	case "enum":
		return "one of " + fmt.Sprint(d["allowed"])
	case "string_gte":
		return fmt.Sprintf("at least %v characters", d["min"])
	case "string_lte":
		return fmt.Sprintf("at most %v characters", d["max"])
	case "number_gte":
		return fmt.Sprintf(">= %v", d["min"])
	case "number_lte":
		return fmt.Sprintf("<= %v", d["max"])
	case "number_gt":
		return fmt.Sprintf("> %v", d["min"])
	case "number_lt":
		return fmt.Sprintf("< %v", d["max"])
	case "pattern":
		return fmt.Sprintf("matching %v", d["pattern"])
	case "array_min_items":
		return fmt.Sprintf("at least %v items", d["min"])
	case "array_max_items":
		return fmt.Sprintf("at most %v items", d["max"])
	case "format":
		return fmt.Sprintf("format %v", d["format"])
	}
	return e.Description()
}

func describe(e gojsonschema.ResultError) string {
	f := fieldOf(e)
	switch e.Type() {
	case "required":
		return fmt.Sprintf("%s is required", f)
	case "additional_property_not_allowed":
		return fmt.Sprintf("%s is not a known argument", f)
	}
	d := e.Description()
	if strings.HasPrefix(d, f+" ") {
		return d
	}
	return fmt.Sprintf("%s: %s", f, d)
}
