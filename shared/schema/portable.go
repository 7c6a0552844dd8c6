package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The hosts that turn MCP tools into model function declarations accept
// different subsets of JSON Schema, and one schema a provider refuses makes
// it refuse the whole request. A tool's full schema (For) is what the kit
// validates calls against; what tools/list advertises is its portable
// projection (Advertise): the common subset of OpenAI function calling in
// strict mode, Gemini function declarations, Anthropic input_schema and the
// Vercel AI SDK. Keywords outside that subset are still enforced by the kit,
// and are stated in the property's description instead, so the model reads
// every rule it is held to.

// MaxDescription is the longest tool description OpenAI accepts.
const MaxDescription = 1024

// nameRule is the tool-name rule shared by OpenAI, Gemini and Anthropic.
var nameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// portableKeys are the keywords every host accepts (OpenAI's strict mode
// takes minLength, maxLength and default; Gemini reads the schema as
// parametersJsonSchema).
var portableKeys = map[string]bool{
	"type": true, "description": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "anyOf": true, "minimum": true, "maximum": true, "minItems": true,
	"maxItems": true, "pattern": true, "format": true, "title": true, "default": true, "minLength": true,
	"maxLength": true,
}

// portableFormats are the string formats both OpenAI strict mode and
// Gemini's function declarations accept.
var portableFormats = map[string]bool{"date-time": true, "date": true, "time": true}

// proseKeys are keywords outside the subset that the projection moves into
// the description, in this order.
var proseKeys = []string{"format", "exclusiveMinimum", "exclusiveMaximum", "uniqueItems", "minProperties", "maxProperties"}

// Advertise returns the portable projection of a full input schema: the
// keywords some host refuses are dropped and said in the description. A
// schema whose shape no projection can save (a type array, a property
// without a type, an object open to any key, an anyOf of objects) is an
// error naming each problem: the tool's argument type must change.
func Advertise(full json.RawMessage) (json.RawMessage, error) {
	root, err := projected(full)
	if err != nil {
		return nil, err
	}
	if probs := Problems(root); len(probs) > 0 {
		return nil, fmt.Errorf("schema is not portable to every LLM host: %s", strings.Join(probs, "; "))
	}
	return json.Marshal(root)
}

// Project is the projection alone, without the portability check: what
// tools/list advertises while a tool's argument type still has shapes some
// host refuses (Problems lists them).
func Project(full json.RawMessage) (json.RawMessage, error) {
	root, err := projected(full)
	if err != nil {
		return nil, err
	}
	return json.Marshal(root)
}

func projected(full json.RawMessage) (map[string]any, error) {
	var root map[string]any
	if err := json.Unmarshal(full, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	project(root)
	return root, nil
}

// project rewrites one schema node and its children in place.
func project(s map[string]any) {
	var notes []string
	for _, k := range proseKeys {
		v, ok := s[k]
		if !ok {
			continue
		}
		if k == "format" {
			if f, _ := v.(string); portableFormats[f] {
				continue
			}
		}
		delete(s, k)
		notes = append(notes, prose(k, v))
	}
	if len(notes) > 0 {
		d, _ := s["description"].(string)
		if d != "" {
			d += " "
		}
		s["description"] = d + "(" + strings.Join(notes, "; ") + ")"
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				project(m)
			}
		}
	}
	if m, ok := s["items"].(map[string]any); ok {
		project(m)
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				project(m)
			}
		}
	}
}

func prose(k string, v any) string {
	num := func() string {
		if f, ok := v.(float64); ok {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return fmt.Sprint(v)
	}
	switch k {
	case "format":
		return "format " + fmt.Sprint(v)
	case "exclusiveMinimum":
		return "greater than " + num()
	case "exclusiveMaximum":
		return "less than " + num()
	case "uniqueItems":
		return "no duplicates"
	case "minProperties":
		if num() == "1" {
			return "at least one member"
		}
		return "at least " + num() + " members"
	case "maxProperties":
		return "at most " + num() + " members"
	}
	return k
}

// Problems lists what makes an input schema unfit for some host, each with
// the property path; none means every host accepts it.
func Problems(root map[string]any) []string {
	var out []string
	if root["type"] != "object" {
		out = append(out, "the input schema must be of type object")
	}
	check(root, "", &out)
	sort.Strings(out)
	return out
}

func check(s map[string]any, path string, out *[]string) {
	at := path
	if at == "" {
		at = "(arguments)"
	}
	for k := range s {
		if !portableKeys[k] {
			*out = append(*out, fmt.Sprintf("%s: keyword %q", at, k))
		}
	}
	if f, ok := s["format"].(string); ok && !portableFormats[f] {
		*out = append(*out, fmt.Sprintf("%s: format %q", at, f))
	}
	anyOf, hasAnyOf := s["anyOf"].([]any)
	switch t := s["type"].(type) {
	case string:
	case nil:
		if !hasAnyOf {
			*out = append(*out, at+": no type (every property needs one)")
		}
	default:
		*out = append(*out, fmt.Sprintf("%s: a type array %v (use anyOf)", at, t))
	}
	if s["type"] == "object" {
		if s["additionalProperties"] != false {
			*out = append(*out, at+": an object open to any key (additionalProperties must be false; use an array of name/value items)")
		}
		if _, ok := s["properties"].(map[string]any); !ok {
			*out = append(*out, at+": an object without properties")
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			m, ok := props[n].(map[string]any)
			if !ok {
				*out = append(*out, fmt.Sprintf("%s.%s: not a schema object", path, n))
				continue
			}
			check(m, path+"."+n, out)
		}
	}
	if it, ok := s["items"]; ok {
		m, ok := it.(map[string]any)
		if !ok {
			*out = append(*out, at+"[]: items must be one schema object")
		} else {
			check(m, path+"[]", out)
		}
	} else if s["type"] == "array" {
		*out = append(*out, at+": an array without items")
	}
	for i, b := range anyOf {
		m, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s|%d: not a schema object", at, i))
			continue
		}
		if m["type"] == "object" {
			// OpenAI's strict conversion cannot tell which branch an
			// argument took, so it refuses object branches.
			*out = append(*out, fmt.Sprintf("%s|%d: an object inside anyOf", at, i))
		}
		check(m, fmt.Sprintf("%s|%d", path, i), out)
	}
}

// ToolProblems checks what hosts require of a tool beyond its schema: the
// name and the description's length.
func ToolProblems(name, description string) []string {
	var out []string
	if !nameRule.MatchString(name) {
		out = append(out, fmt.Sprintf("name %q must match %s", name, nameRule))
	}
	if n := len(description); n > MaxDescription {
		out = append(out, fmt.Sprintf("description is %d bytes (at most %d)", n, MaxDescription))
	}
	return out
}

// Output returns the output schema of a tool result type, which must be a
// struct: what structuredContent holds. Slices, maps and pointers may be
// null, as encoding/json writes them.
func Output[T any]() (json.RawMessage, error) { return OutputType(reflect.TypeFor[T]()) }

// OutputType is Output with a reflect.Type.
func OutputType(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema: a result type must be a struct (structuredContent is an object), not %s", t)
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	nullableMaps(root)
	return json.Marshal(root)
}

// nullableMaps lets a nil map be null, as encoding/json writes it, and
// turns the boolean schema true (any value) into {}, which every client
// reads.
func nullableMaps(s map[string]any) {
	if s["type"] == "object" && s["additionalProperties"] != false && s["properties"] == nil {
		s["type"] = []any{"null", "object"}
	}
	fix := func(v any) any {
		if v == true {
			return map[string]any{}
		}
		if m, ok := v.(map[string]any); ok {
			nullableMaps(m)
		}
		return v
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k, p := range props {
			props[k] = fix(p)
		}
	}
	if it, ok := s["items"]; ok {
		s["items"] = fix(it)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		nullableMaps(ap)
	}
}
