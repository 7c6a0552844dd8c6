package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// NewTool declares a tool by its argument type In and its result type Out,
// as the official Go SDK's AddTool[In, Out] does. The input schema comes
// from In (package schema: json, jsonschema, mcp and pattern tags, with
// def.Vars for "{name}" placeholders) and the output schema from Out, so
// neither can drift from the code. Before the handler runs, the kit
// validates the arguments against the schema, applies the defaults of In's
// mcp tags, decodes them into In once, and calls In's Validate method when
// it has one — the place for rules between arguments ("give command or argv,
// not both") that a portable schema cannot state. Out must be a struct (or
// Fenced of one): it is what structuredContent holds. An Out that holds JSON
// already (rows as a database encoded them) may encode itself with a method
// AppendJSON(dst []byte) ([]byte, error), sparing encoding/json a second
// scan of every byte; what it appends is checked against the outputSchema,
// and so for being well-formed, like any result. dst is a recycled buffer:
// AppendJSON appends to it and returns the result, and keeps neither.
//
// A schema that cannot be built or is not portable to every LLM host makes
// the tool fail its registration check, so the server does not start.
func NewTool[In, Out any](def Tool, h func(ctx context.Context, c *Call, in In) (Out, error)) Tool {
	in, err := schema.For[In](def.Vars)
	if err != nil {
		def.defErr = err
		return def
	}
	def.InputSchema = in
	outType := reflect.TypeFor[Out]()
	var zero Out
	if f, ok := any(zero).(fencedResult); ok {
		outType = f.valueType()
	}
	out, err := schema.OutputType(outType)
	if err != nil {
		def.defErr = err
		return def
	}
	def.OutputSchema = out
	defaults, err := defaultsOf(reflect.TypeFor[In](), def.Vars)
	if err != nil {
		def.defErr = err
		return def
	}
	def.Handler = func(ctx context.Context, c *Call) (any, error) {
		var args In
		rv := reflect.ValueOf(&args).Elem()
		for _, d := range defaults {
			d(rv)
		}
		if len(c.Args) > 0 {
			if err := json.Unmarshal(c.Args, &args); err != nil {
				return nil, mcperr.Invalid("arguments", nil, "arguments matching the tool's schema", "cannot decode arguments: %v", err)
			}
		}
		if v, ok := any(&args).(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return nil, err
			}
		}
		res, err := h(ctx, c, args)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	return def
}

// Fenced is a result whose content comes from outside (a web page, a mail
// body, rows anyone may have written): its text part reaches the model
// fenced as data (package untrusted); structuredContent carries Value plain,
// for programs. Source says where the content came from.
type Fenced[T any] struct {
	Source string
	Value  T
}

type fencedResult interface {
	valueType() reflect.Type
	untrusted() Untrusted
}

func (f Fenced[T]) valueType() reflect.Type { return reflect.TypeFor[T]() }
func (f Fenced[T]) untrusted() Untrusted    { return Untrusted{Source: f.Source, Value: f.Value} }

// defaultsOf returns, for each top-level field of t with a default in its
// mcp tag, a function that sets it. Each call gets fresh values, so a
// pointer default is never shared between calls.
func defaultsOf(t reflect.Type, vars schema.Vars) ([]func(reflect.Value), error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("an argument type must be a struct, not %s", t)
	}
	var out []func(reflect.Value)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("mcp")
		if !ok || !f.IsExported() {
			continue
		}
		for _, part := range strings.Split(tag, ",") {
			key, val, _ := strings.Cut(strings.TrimSpace(part), "=")
			if key != "default" {
				continue
			}
			val, err := schema.Expand(val, vars)
			if err != nil {
				return nil, fmt.Errorf("field %s: default: %w", f.Name, err)
			}
			set, err := setter(f.Type, val)
			if err != nil {
				return nil, fmt.Errorf("field %s: default %q: %w", f.Name, val, err)
			}
			idx := i
			out = append(out, func(v reflect.Value) { set(v.Field(idx)) })
		}
	}
	return out, nil
}

// setter parses a default for a field of type t (or a pointer to one).
func setter(t reflect.Type, val string) (func(reflect.Value), error) {
	ptr := t.Kind() == reflect.Pointer
	base := t
	if ptr {
		base = t.Elem()
	}
	var x reflect.Value
	switch base.Kind() {
	case reflect.String:
		x = reflect.ValueOf(val).Convert(base)
	case reflect.Bool:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return nil, err
		}
		x = reflect.ValueOf(b).Convert(base)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, err
		}
		x = reflect.New(base).Elem()
		x.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return nil, err
		}
		x = reflect.New(base).Elem()
		x.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, err
		}
		x = reflect.New(base).Elem()
		x.SetFloat(n)
	default:
		// Slices and maps are parsed again for each call: a shared
		// backing array would carry one call's changes into the next.
		if err := json.Unmarshal([]byte(val), reflect.New(base).Interface()); err != nil {
			return nil, err
		}
		return func(v reflect.Value) {
			p := reflect.New(base)
			_ = json.Unmarshal([]byte(val), p.Interface())
			if ptr {
				v.Set(p)
			} else {
				v.Set(p.Elem())
			}
		}, nil
	}
	if !ptr {
		return func(v reflect.Value) { v.Set(x) }, nil
	}
	return func(v reflect.Value) {
		p := reflect.New(base)
		p.Elem().Set(x)
		v.Set(p)
	}, nil
}
