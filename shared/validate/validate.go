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
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/xeipuuv/gojsonschema"
)

// Schema is a compiled input schema; compile once at registration.
type Schema struct {
	s *gojsonschema.Schema
	// closed holds the top-level properties of an object schema that allows
	// no others, so that unknown keys are refused before the full validator
	// walks (and reports) every one of them.
	closed map[string]bool
	// nulls says where a null stands for an absent optional property.
	nulls *nullNode
	// shape checks encoded documents in one pass; nil when the schema is
	// outside its subset.
	shape *shape
}

// maxReported bounds the problems listed in one validation error: enough
// for a model to fix several at once, never a message the size of the input.
const maxReported = 5

// Compile parses and compiles a JSON Schema document.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty schema")
	}
	s, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	out := &Schema{s: s, nulls: nullTree(raw), shape: compileShape(raw)}
	var top struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		PatternProperties    json.RawMessage            `json:"patternProperties"`
	}
	if json.Unmarshal(raw, &top) == nil && top.AdditionalProperties != nil && !*top.AdditionalProperties && top.PatternProperties == nil {
		out.closed = make(map[string]bool, len(top.Properties))
		for k := range top.Properties {
			out.closed[k] = true
		}
	}
	return out, nil
}

// unknownKeys refuses top-level keys a closed schema does not know, naming
// the first few and counting the rest.
func (s *Schema) unknownKeys(v any) *mcperr.Error {
	m, ok := v.(map[string]any)
	if !ok || s.closed == nil {
		return nil
	}
	var unknown []string
	n := 0
	for k := range m {
		if !s.closed[k] {
			n++
			if len(unknown) < maxReported {
				unknown = append(unknown, k)
			}
		}
	}
	if n <= maxReported {
		return nil // few enough for the full validator to report with the rest
	}
	sort.Strings(unknown)
	for i, k := range unknown {
		unknown[i] = truncate(k)
	}
	msg := fmt.Sprintf("%d unknown arguments: %s and %d more", n, strings.Join(unknown, ", "), n-len(unknown))
	known := make([]string, 0, len(s.closed))
	for k := range s.closed {
		known = append(known, k)
	}
	sort.Strings(known)
	return mcperr.Invalid(unknown[0], nil, "one of: "+strings.Join(known, ", "), "%s", msg)
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

// CheckDocument checks one encoded JSON document, such as a tool's result,
// against the schema: in one pass over its bytes when the schema is within
// the structural subset that schemas derived from Go types use (see shape),
// else by decoding it for the full validator. The error names the first
// place that does not fit.
func (s *Schema) CheckDocument(b []byte) error {
	if s.shape != nil {
		return s.shape.check(b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the document")
	}
	if verr := s.CheckValue(doc); verr != nil {
		return errors.New(verr.Message)
	}
	return nil
}

// Admits reports whether raw, a call's arguments as sent, is an object
// that Decode accepts and whose decoded value CheckValue accepts, decided in
// one walk over its bytes without building the value. It answers false
// whenever it is not sure — the schema is outside the shape subset, the
// arguments are not an object, hold a null or more than a quick walk
// compares, or do not fit — and the caller then decodes and checks them,
// which also writes the error.
func (s *Schema) Admits(raw []byte) bool {
	if s.shape == nil {
		return false
	}
	i := jsonscan.SkipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return false
	}
	w := walker{b: raw, args: &argWalk{}}
	i, err := w.value(s.shape, i)
	return err == nil && jsonscan.SkipSpace(raw, i) == len(raw)
}

// DecodeError describes a Decode failure to the client.
func DecodeError(err error) *mcperr.Error {
	switch {
	case errors.Is(err, ErrDuplicateKey):
		return mcperr.Invalid("arguments", nil, "each key once", "arguments are ambiguous: %v", err)
	case errors.Is(err, ErrTooLarge):
		return mcperr.Invalid("arguments", nil, "smaller arguments", "%v", err)
	}
	return mcperr.Invalid("arguments", nil, "a JSON object", "arguments are not valid JSON: %v", err)
}

// CheckValue validates arguments already decoded by Decode, so a caller that
// also needs the decoded value (the audit log) parses the JSON only once.
func (s *Schema) CheckValue(v any) *mcperr.Error {
	if s.shape != nil && s.shape.accepts(v) {
		// Well-formed arguments, the common case, are decided in one walk;
		// the full validator runs for the rest and writes the error.
		return nil
	}
	if e := s.unknownKeys(v); e != nil {
		return e
	}
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
		more := make([]string, 0, maxReported)
		for _, e := range errs[1:min(len(errs), maxReported)] {
			more = append(more, describe(e))
		}
		msg += "; also: " + strings.Join(more, "; ")
		if len(errs) > maxReported {
			msg += fmt.Sprintf("; and %d more problems", len(errs)-maxReported)
		}
	}
	return mcperr.Invalid(truncate(fieldOf(first)), valueOf(first), expectedOf(first), "%s", msg)
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

// expectedByType says what a rule wants, from the detail of the error that
// holds its limit: format with that detail's value.
var expectedByType = map[string]struct{ format, detail string }{
	"invalid_type":    {"%v", "expected"},
	"enum":            {"one of %v", "allowed"},
	"string_gte":      {"at least %v characters", "min"},
	"string_lte":      {"at most %v characters", "max"},
	"number_gte":      {">= %v", "min"},
	"number_lte":      {"<= %v", "max"},
	"number_gt":       {"> %v", "min"},
	"number_lt":       {"< %v", "max"},
	"pattern":         {"matching %v", "pattern"},
	"array_min_items": {"at least %v items", "min"},
	"array_max_items": {"at most %v items", "max"},
	"format":          {"format %v", "format"},
}

func expectedOf(e gojsonschema.ResultError) string {
	switch e.Type() {
	case "required":
		return "a value (required)"
	case "additional_property_not_allowed":
		return "no such property"
	}
	if x, ok := expectedByType[e.Type()]; ok {
		return fmt.Sprintf(x.format, e.Details()[x.detail])
	}
	return e.Description()
}

func describe(e gojsonschema.ResultError) string {
	f := truncate(fieldOf(e))
	switch e.Type() {
	case "required":
		return fmt.Sprintf("%s is required", f)
	case "additional_property_not_allowed":
		return fmt.Sprintf("%s is not a known argument", f)
	case "array_max_items":
		// The limit, and how far over it the call is: a model fixes it in one
		// retry.
		if v, ok := e.Value().([]any); ok {
			return fmt.Sprintf("%s: too many items: %d > %v", f, len(v), e.Details()["max"])
		}
	case "string_lte":
		if v, ok := e.Value().(string); ok {
			return fmt.Sprintf("%s: too long: %d characters > %v", f, utf8.RuneCountInString(v), e.Details()["max"])
		}
	}
	d := e.Description()
	if strings.HasPrefix(d, f+" ") {
		return d
	}
	return fmt.Sprintf("%s: %s", f, d)
}
