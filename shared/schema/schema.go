// Package schema derives a tool's input JSON Schema from the Go struct its
// handler binds the arguments to, so the two cannot disagree. Structure,
// property names and required fields come from the struct and its json tags
// (github.com/google/jsonschema-go infers them); descriptions come from
// `jsonschema:"…"` tags, as in the official Go SDK; limits and choices come
// from an `mcp:"…"` tag:
//
//	type readArgs struct {
//		Path  string `json:"path" jsonschema:"file to read, relative to the first root" mcp:"minLength=1"`
//		Limit int    `json:"limit,omitempty" jsonschema:"bytes to read, at most {maxRead}" mcp:"min=1,max={maxRead},default=4096"`
//		Mode  string `json:"mode,omitempty" mcp:"enum=text|base64"`
//		ICAO  string `json:"icao" pattern:"^[A-Z]{4}$"`
//	}
//	schema.MustFor[readArgs](schema.Vars{"maxRead": cfg.MaxRead})
//
// Keys of the mcp tag: min, max, exclusiveMin, minLength, maxLength,
// minItems, maxItems, uniqueItems, minProperties, maxProperties, enum (values
// separated by |), default, format, and type (object, array, string, number,
// integer, boolean or null; for a json.RawMessage or any field whose JSON type is
// known, several joined by | become an anyOf), and itemType, the same for the
// elements of a slice such as []json.RawMessage. A pattern, which may hold any character,
// has a tag of its own. "{name}" in a tag value or a description is replaced
// by Vars[name], so a limit set by a flag appears in the schema and in the
// text the model reads; a name missing from Vars is an error at start-up.
// A field without omitempty/omitzero is required; optional pointers accept
// absence, not null.
package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcp-fleet/mcp-fleet/shared/internal/ident"
)

// Vars are the values "{name}" placeholders in tags stand for.
type Vars map[string]any

// For returns the input schema of T, which must be a struct.
func For[T any](vars ...Vars) (json.RawMessage, error) {
	return ForType(reflect.TypeFor[T](), vars...)
}

// MustFor is For for package-level tool definitions: a bad tag is a
// programming error and panics at start-up.
func MustFor[T any](vars ...Vars) json.RawMessage {
	raw, err := For[T](vars...)
	if err != nil {
		panic(err)
	}
	return raw
}

// ForType is For with a reflect.Type.
func ForType(t reflect.Type, vars ...Vars) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema: %s is not a struct", t)
	}
	all := Vars{}
	for _, v := range vars {
		for k, x := range v {
			all[k] = x
		}
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := annotate(s, t, all, t.Name()); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if s.Properties == nil {
		// Some clients refuse an object schema without "properties", even
		// an empty one; a tool without arguments still says it has none.
		raw = append([]byte(`{"properties":{},`), raw[1:]...)
	}
	return raw, nil
}

// annotate walks a struct type beside its inferred schema and applies tags.
func annotate(s *jsonschema.Schema, t reflect.Type, vars Vars, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dropNull(s)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return annotate(s.Items, t.Elem(), vars, path+"[]")
		}
		return nil
	case reflect.Map:
		if s.AdditionalProperties != nil && t.Elem().Kind() != reflect.Interface {
			return annotate(s.AdditionalProperties, t.Elem(), vars, path+"{}")
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		// encoding/json promotes the fields of an embedded struct, exported
		// type or not, so their tags apply here too.
		if f.Anonymous && f.Tag.Get("json") == "" {
			if err := annotate(s, f.Type, vars, path); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if name == "-" {
			continue
		}
		prop := s.Properties[name]
		if prop == nil {
			continue
		}
		where := path + "." + name
		if d, ok := f.Tag.Lookup("jsonschema"); ok {
			text, err := expand(d, vars)
			if err != nil {
				return fmt.Errorf("schema: %s description: %w", where, err)
			}
			prop.Description = text
		}
		if p, ok := f.Tag.Lookup("pattern"); ok {
			prop.Pattern = p
		}
		if err := annotate(prop, f.Type, vars, where); err != nil {
			return err
		}
		if tag, ok := f.Tag.Lookup("mcp"); ok {
			if err := applyTag(prop, f.Type, tag, vars); err != nil {
				return fmt.Errorf("schema: %s: %w", where, err)
			}
		}
		if b, _ := json.Marshal(prop); string(b) == "true" {
			// An empty schema is written as true, which some clients reject
			// as a property schema; a description keeps it an object.
			prop.Description = "any JSON value"
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// dropNull turns ["null", T] into T: an optional argument is one that is
// left out, and a model offered null as a type tends to send it.
func dropNull(s *jsonschema.Schema) {
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
}

// Expand replaces each {name} in text with vars[name]; a name missing from
// vars is an error.
func Expand(text string, vars Vars) (string, error) { return expand(text, vars) }

// expand replaces {name} with vars[name].
func expand(text string, vars Vars) (string, error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		key := text[i+1 : i+j]
		if !ident.Is(key) {
			b.WriteString(text[:i+j+1])
			text = text[i+j+1:]
			continue
		}
		v, ok := vars[key]
		if !ok {
			return "", fmt.Errorf("no value for {%s}", key)
		}
		b.WriteString(text[:i])
		b.WriteString(fmt.Sprint(v))
		text = text[i+j+1:]
	}
}

func applyTag(s *jsonschema.Schema, t reflect.Type, tag string, vars Vars) error {
	for _, part := range strings.Split(tag, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, raw, hasValue := strings.Cut(part, "=")
		val, err := expand(raw, vars)
		if err != nil {
			return err
		}
		num := func() (float64, error) { return strconv.ParseFloat(val, 64) }
		count := func() (*int, error) {
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s wants a count, got %q", key, val)
			}
			return &n, nil
		}
		if !hasValue && key != "uniqueItems" {
			return fmt.Errorf("%q needs a value", key)
		}
		switch key {
		case "min", "max", "exclusiveMin":
			f, err := num()
			if err != nil {
				return fmt.Errorf("%s wants a number, got %q", key, val)
			}
			switch key {
			case "min":
				s.Minimum = &f
			case "max":
				s.Maximum = &f
			default:
				s.ExclusiveMinimum = &f
			}
		case "minLength":
			s.MinLength, err = count()
		case "maxLength":
			s.MaxLength, err = count()
		case "minItems":
			s.MinItems, err = count()
		case "maxItems":
			s.MaxItems, err = count()
		case "minProperties":
			s.MinProperties, err = count()
		case "maxProperties":
			s.MaxProperties, err = count()
		case "uniqueItems":
			s.UniqueItems = true
		case "format":
			s.Format = val
		case "type":
			err = setTypes(s, val)
		case "itemType":
			// The elements of a []json.RawMessage: a list of values of
			// several scalar types, which the Go type cannot say.
			if s.Items == nil {
				return fmt.Errorf("itemType needs an array field")
			}
			err = setTypes(s.Items, val)
		case "enum":
			s.Enum = nil
			for _, v := range strings.Split(val, "|") {
				ev, err := typed(t, v)
				if err != nil {
					return fmt.Errorf("enum: %w", err)
				}
				s.Enum = append(s.Enum, ev)
			}
		case "default":
			dv, err := typed(t, val)
			if err != nil {
				return fmt.Errorf("default: %w", err)
			}
			s.Default, _ = json.Marshal(dv)
		default:
			return fmt.Errorf("unknown mcp tag key %q", key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setTypes gives s the JSON type(s) in val, separated by |.
func setTypes(s *jsonschema.Schema, val string) error {
	types := strings.Split(val, "|")
	for _, t := range types {
		switch t {
		case "object", "array", "string", "number", "integer", "boolean", "null":
		default:
			return fmt.Errorf("type %q is not a JSON Schema type", t)
		}
	}
	if len(types) == 1 {
		s.Type, s.Types = types[0], nil
		return nil
	}
	// A type array is refused by Gemini and by OpenAI's strict mode; anyOf
	// of single types means the same to everyone.
	s.Type, s.Types = "", nil
	for _, t := range types {
		s.AnyOf = append(s.AnyOf, &jsonschema.Schema{Type: t})
	}
	return nil
}

// typed converts a tag value to the field's JSON type.
func typed(t reflect.Type, v string) (any, error) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return v, nil
	case reflect.Bool:
		return strconv.ParseBool(v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseInt(v, 10, 64)
	case reflect.Float32, reflect.Float64:
		return strconv.ParseFloat(v, 64)
	}
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return nil, fmt.Errorf("%q is not valid JSON for %s", v, t)
	}
	return x, nil
}
