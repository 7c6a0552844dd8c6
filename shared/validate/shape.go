package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/internal/jsonscan"
)

// A shape is a schema of the subset that schemas derived from Go types use —
// type (one or a list), properties, required, additionalProperties, items,
// minimum, maximum, minLength, maxLength, minItems, maxItems, pattern, enum
// of strings, anyOf, plus annotations — compiled so that a document is
// checked in one pass: an encoded one (a tool's result) over its bytes, with
// no decoding, and a decoded one (a call's arguments) without the full
// validator's conversions. Tool results are checked against it before they
// are sent, arguments before a handler runs; decoding each result into
// generic values for the full validator cost more than the tool's own work.
// A schema with any other keyword has no shape and is checked by the full
// validator, which also writes the error a caller sees for bad arguments.
type shape struct {
	types    typeSet // 0: any type
	props    map[string]prop
	required int // how many properties are required (each has a bit)
	closed   bool
	extra    *shape // additionalProperties as a schema; nil: any
	items    *shape // nil: any
	min, max *float64
	// minLen and maxLen bound a string's length in characters, minItems
	// and maxItems an array's; -1: no bound.
	minLen, maxLen     int
	minItems, maxItems int
	pattern            *regexp.Regexp
	enum               []string // nil: any value
	anyOf              []*shape
	// free: nothing but its types constrains a value (see skip).
	free bool
}

type prop struct {
	s   *shape
	bit uint64 // its bit among the required ones; 0 when optional
}

type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tInteger
	tString
)

var typeNames = map[string]typeSet{"null": tNull, "boolean": tBoolean, "object": tObject, "array": tArray,
	"number": tNumber, "integer": tInteger, "string": tString}

// annotations are keywords that never fail a document.
var annotations = map[string]bool{"description": true, "title": true, "default": true, "examples": true,
	"$schema": true, "$comment": true, "$id": true, "readOnly": true, "writeOnly": true, "deprecated": true}

// maxRequired: a schema with more required properties than bits has no shape.
const maxRequired = 64

// unbounded is a shape with no length or item bounds (a zero bound would
// mean "at most 0").
func unbounded() *shape { return &shape{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1} }

// compileShape returns the shape of raw, or nil when raw uses a keyword
// outside the subset.
func compileShape(raw json.RawMessage) *shape {
	switch string(raw) {
	case "true", "{}":
		sh := unbounded()
		sh.free = true
		return sh
	}
	var kw map[string]json.RawMessage
	if json.Unmarshal(raw, &kw) != nil {
		return nil
	}
	sh := unbounded()
	for k, v := range kw {
		switch {
		case annotations[k]:
		case k == "type":
			var one string
			var list []string
			if json.Unmarshal(v, &one) == nil {
				list = []string{one}
			} else if json.Unmarshal(v, &list) != nil || len(list) == 0 {
				return nil
			}
			for _, n := range list {
				t, ok := typeNames[n]
				if !ok {
					return nil
				}
				sh.types |= t
			}
		case k == "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			sh.props = make(map[string]prop, len(props))
			for name, sub := range props {
				s := compileShape(sub)
				if s == nil {
					return nil
				}
				sh.props[name] = prop{s: s}
			}
		case k == "additionalProperties":
			if string(v) == "false" {
				sh.closed = true
			} else if string(v) != "true" {
				if sh.extra = compileShape(v); sh.extra == nil {
					return nil
				}
			}
		case k == "items":
			if sh.items = compileShape(v); sh.items == nil {
				return nil // includes the array form of items
			}
		case k == "minimum" || k == "maximum":
			var f float64
			if json.Unmarshal(v, &f) != nil {
				return nil
			}
			if k == "minimum" {
				sh.min = &f
			} else {
				sh.max = &f
			}
		case k == "minLength" || k == "maxLength" || k == "minItems" || k == "maxItems":
			var n int
			if json.Unmarshal(v, &n) != nil || n < 0 {
				return nil
			}
			switch k {
			case "minLength":
				sh.minLen = n
			case "maxLength":
				sh.maxLen = n
			case "minItems":
				sh.minItems = n
			default:
				sh.maxItems = n
			}
		case k == "pattern":
			var p string
			if json.Unmarshal(v, &p) != nil {
				return nil
			}
			re, err := regexp.Compile(p)
			if err != nil {
				return nil
			}
			sh.pattern = re
		case k == "enum":
			// Strings only: other values compare by rules the shape does not
			// repeat.
			var vals []json.RawMessage
			if json.Unmarshal(v, &vals) != nil || len(vals) == 0 {
				return nil
			}
			sh.enum = make([]string, len(vals))
			for i, val := range vals {
				if len(val) == 0 || val[0] != '"' || json.Unmarshal(val, &sh.enum[i]) != nil {
					return nil
				}
			}
		case k == "anyOf":
			var alts []json.RawMessage
			if json.Unmarshal(v, &alts) != nil || len(alts) == 0 {
				return nil
			}
			for _, a := range alts {
				alt := compileShape(a)
				if alt == nil {
					return nil
				}
				sh.anyOf = append(sh.anyOf, alt)
			}
		case k != "required":
			return nil
		}
	}
	if v, ok := kw["required"]; ok {
		var req []string
		if json.Unmarshal(v, &req) != nil || len(req) > maxRequired {
			return nil
		}
		if sh.props == nil {
			sh.props = map[string]prop{}
		}
		for _, name := range req {
			p, ok := sh.props[name]
			if !ok {
				if sh.closed || sh.extra != nil {
					return nil // required, yet ruled by additionalProperties: rare, left to the full validator
				}
				// Required but not described: any value will do.
				p = prop{s: unbounded()}
			}
			if p.bit == 0 {
				p.bit = 1 << sh.required
				sh.required++
			}
			sh.props[name] = p
		}
	}
	sh.free = sh.props == nil && !sh.closed && sh.extra == nil && sh.items == nil && sh.min == nil && sh.max == nil &&
		sh.minLen < 0 && sh.maxLen < 0 && sh.minItems < 0 && sh.maxItems < 0 && sh.pattern == nil && sh.enum == nil &&
		sh.anyOf == nil
	return sh
}

// shapeError is a document that does not fit its shape; Path names where,
// as a dotted path ("files.3.size").
type shapeError struct {
	Path string
	Msg  string
}

func (e *shapeError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// check checks the one JSON document b holds.
func (sh *shape) check(b []byte) error {
	w := walker{b: b}
	i, err := w.value(sh, jsonscan.SkipSpace(b, 0))
	if err != nil {
		return err
	}
	if i = jsonscan.SkipSpace(b, i); i != len(b) {
		return w.fail(fmt.Sprintf("unexpected data after the document at offset %d", i))
	}
	return nil
}

// walker walks one document. Where it is — the member names and array
// indexes down to the current value — is kept as offsets, and turned into a
// path only for an error.
type walker struct {
	b    []byte
	path []step
	// args is set for a walk over a call's arguments (Schema.Admits).
	args *argWalk
}

// argWalk is what a walk over a call's arguments adds to a walk over a
// document, so that what it admits Decode and CheckValue accept too: the
// decoding limits, a key named twice refused, no null (a null may stand for
// an absent property, which the decoding path removes), and numbers a
// float64 decides exactly.
type argWalk struct {
	values int
	// keys are the member names of the objects being walked, innermost
	// last; each object looks only at its own.
	keys []keyRef
}

// keyRef is a member name, its quoted bytes b[from:to]; when those differ
// from the name (escapes, invalid UTF-8), the name decoded once.
type keyRef struct {
	from, to int
	escaped  bool
	decoded  string
}

// maxQuickEscapedKey bounds a member name with escapes in a walk over
// arguments: it is decoded to be compared, so a longer one is left to Decode.
const maxQuickEscapedKey = 256

// maxQuickKeys bounds the members of one object in a walk over arguments:
// names are compared pairwise, so a larger object is left to Decode, which
// uses a map.
const maxQuickKeys = 64

// step is a member name (its quoted bytes b[from:to]) or an array index.
type step struct {
	from, to int
	index    int
}

func (w *walker) fail(msg string) error {
	var path string
	for _, st := range w.path {
		el := strconv.Itoa(st.index)
		if st.to > 0 {
			el = jsonscan.Unquote(w.b[st.from:st.to], true)
		}
		if path != "" {
			path += "."
		}
		path += el
	}
	return &shapeError{Path: path, Msg: msg}
}

// value checks the value starting at b[i] and returns the offset past it.
// A nil shape accepts any value (it still has to be well-formed).
func (w *walker) value(sh *shape, i int) (int, error) {
	b := w.b
	if i >= len(b) {
		return i, w.fail("unexpected end of the document")
	}
	if a := w.args; a != nil {
		if a.values++; a.values > DefaultLimits.MaxValues || len(w.path) > DefaultLimits.MaxDepth {
			return i, w.fail("beyond the decoding limits")
		}
		if b[i] == 'n' {
			return i, w.fail("a null")
		}
	}
	lead := leadType(b[i])
	if w.args == nil && (sh == nil || sh.free) && (lead&tNumber == 0 || sh == nil || sh.types == 0 || sh.types&tNumber != 0) && sh.mayBe(lead) {
		// Nothing inside the value is constrained, and its first byte
		// decides its type: it need only be well-formed, which
		// jsonscan.SkipValue decides without a path or property lookups (a
		// result's rows, each an object of any members). A value that is
		// not is walked again below, for the error's place.
		if end, err := jsonscan.SkipValue(b, i); err == nil {
			return end, nil
		}
	}
	if lead&(tObject|tArray) != 0 && !sh.mayBe(lead) {
		// Refused before it is walked: a large object where a string
		// belongs costs nothing.
		return i, w.fail(fmt.Sprintf("%s is not allowed (want %s)", lead, sh.types))
	}
	if sh != nil && len(sh.anyOf) > 0 {
		if err := w.anyOf(sh, i); err != nil {
			return i, err
		}
	}
	var got typeSet
	var end int
	var err error
	switch c := b[i]; {
	case c == '{':
		got = tObject
		end, err = w.object(sh, i)
	case c == '[':
		got = tArray
		end, err = w.array(sh, i)
	case c == '"':
		got = tString
		var escaped bool
		if end, escaped, err = jsonscan.String(b, i); err != nil {
			err = w.fail(err.Error())
		} else if sh.stringRules() {
			if msg := sh.checkString(jsonscan.Unquote(b[i:end], escaped)); msg != "" {
				err = w.fail(msg)
			}
		}
	case c == 't' && jsonscan.HasLiteral(b, i, "true"):
		got, end = tBoolean, i+4
	case c == 'f' && jsonscan.HasLiteral(b, i, "false"):
		got, end = tBoolean, i+5
	case c == 'n' && jsonscan.HasLiteral(b, i, "null"):
		got, end = tNull, i+4
	case c == '-' || (c >= '0' && c <= '9'):
		if end, err = jsonscan.Number(b, i); err != nil {
			err = w.fail(err.Error())
		} else {
			got, err = w.number(sh, b[i:end])
		}
	default:
		return i, w.fail(fmt.Sprintf("invalid JSON at offset %d", i))
	}
	if err != nil {
		return end, err
	}
	if sh != nil && sh.types != 0 && sh.types&got == 0 && !(got == tInteger && sh.types&tNumber != 0) {
		return end, w.fail(fmt.Sprintf("%s is not allowed (want %s)", got, sh.types))
	}
	return end, nil
}

// number classifies a number as integer or number and checks its bounds.
func (w *walker) number(sh *shape, n []byte) (typeSet, error) {
	if (sh == nil || (sh.min == nil && sh.max == nil)) && !bytes.ContainsAny(n, ".eE") {
		return tInteger, nil // the common case, without converting n
	}
	t, exact, msg := sh.number(string(n))
	if msg != "" {
		return t, w.fail(msg)
	}
	if !exact && w.args != nil {
		return t, w.fail("a number a float64 cannot decide exactly")
	}
	return t, nil
}

func (w *walker) object(sh *shape, i int) (int, error) {
	b := w.b
	var seen uint64
	first := 0
	if w.args != nil {
		first = len(w.args.keys)
		defer func() { w.args.keys = w.args.keys[:first] }()
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, w.missing(sh, seen)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, w.fail(fmt.Sprintf("want a member name at offset %d", i))
		}
		kEnd, escaped, err := jsonscan.String(b, i)
		if err != nil {
			return kEnd, w.fail(err.Error())
		}
		// A name with escapes or invalid UTF-8 (which decodes as U+FFFD)
		// differs from its bytes: it is compared and looked up decoded.
		name := b[i+1 : kEnd-1]
		odd := escaped || !utf8.Valid(name)
		var decoded string
		if odd {
			if w.args != nil && kEnd-i > maxQuickEscapedKey {
				return i, w.fail("a long member name with escapes")
			}
			decoded = jsonscan.Unquote(b[i:kEnd], escaped)
		}
		if w.args != nil {
			if err := w.newKey(first, keyRef{from: i, to: kEnd, escaped: odd, decoded: decoded}); err != nil {
				return i, err
			}
		}
		var sub *shape
		if sh != nil {
			var p prop
			var ok bool
			if odd {
				p, ok = sh.props[decoded]
			} else {
				p, ok = sh.props[string(name)]
			}
			switch {
			case ok:
				sub = p.s
				seen |= p.bit
			case sh.closed:
				w.path = append(w.path, step{from: i, to: kEnd})
				return i, w.fail("this property is not allowed")
			default:
				sub = sh.extra
			}
		}
		w.path = append(w.path, step{from: i, to: kEnd})
		i = jsonscan.SkipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return i, w.fail(fmt.Sprintf("want ':' at offset %d", i))
		}
		if i, err = w.value(sub, jsonscan.SkipSpace(b, i+1)); err != nil {
			return i, err
		}
		w.path = w.path[:len(w.path)-1]
		i = jsonscan.SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, w.missing(sh, seen)
		}
		return i, w.fail(fmt.Sprintf("want ',' or '}' at offset %d", i))
	}
}

// newKey records a member name of the object whose names start at
// keys[first], refusing one it has already.
func (w *walker) newKey(first int, k keyRef) error {
	a := w.args
	if len(a.keys)-first >= maxQuickKeys {
		return w.fail("too many members for a quick walk")
	}
	for _, o := range a.keys[first:] {
		var same bool
		switch {
		case !o.escaped && !k.escaped:
			same = bytes.Equal(w.b[o.from:o.to], w.b[k.from:k.to])
		case o.escaped && k.escaped:
			same = o.decoded == k.decoded
		case o.escaped:
			same = o.decoded == string(w.b[k.from+1:k.to-1])
		default:
			same = k.decoded == string(w.b[o.from+1:o.to-1])
		}
		if same {
			return w.fail("a key named twice")
		}
	}
	a.keys = append(a.keys, k)
	return nil
}

// leadType is the type of the value that starts with c, as far as that
// byte tells: a number may be an integer.
func leadType(c byte) typeSet {
	switch {
	case c == '{':
		return tObject
	case c == '[':
		return tArray
	case c == '"':
		return tString
	case c == 't' || c == 'f':
		return tBoolean
	case c == 'n':
		return tNull
	case c == '-' || (c >= '0' && c <= '9'):
		return tNumber | tInteger
	}
	return 0
}

// mayBe reports whether a value of a type in lead may fit sh's types.
func (sh *shape) mayBe(lead typeSet) bool {
	return sh == nil || sh.types == 0 || lead == 0 || sh.types&lead != 0 || (lead&tInteger != 0 && sh.types&tNumber != 0)
}

// missing names the first required property an object lacks.
func (w *walker) missing(sh *shape, seen uint64) error {
	if sh == nil || sh.required == 0 || seen == 1<<sh.required-1 {
		return nil
	}
	var names []string
	for name, p := range sh.props {
		if p.bit != 0 && seen&p.bit == 0 {
			names = append(names, strconv.Quote(name))
		}
	}
	sort.Strings(names)
	return w.fail("required properties are missing: " + strings.Join(names, ", "))
}

func (w *walker) array(sh *shape, i int) (int, error) {
	b := w.b
	var items *shape
	if sh != nil {
		items = sh.items
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, w.count(sh, 0)
	}
	w.path = append(w.path, step{})
	for n := 0; ; n++ {
		w.path[len(w.path)-1].index = n
		var err error
		if i, err = w.value(items, i); err != nil {
			return i, err
		}
		i = jsonscan.SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			w.path = w.path[:len(w.path)-1]
			return i + 1, w.count(sh, n+1)
		}
		return i, w.fail(fmt.Sprintf("want ',' or ']' at offset %d", i))
	}
}

// anyOf checks the value at b[i] against each alternative until one fits.
func (w *walker) anyOf(sh *shape, i int) error {
	depth := len(w.path)
	lead := leadType(w.b[i])
	for _, alt := range sh.anyOf {
		if !alt.mayBe(lead) {
			continue // its type rules the value out without a walk
		}
		_, err := w.value(alt, i)
		w.path = w.path[:depth]
		if err == nil {
			return nil
		}
	}
	return w.fail("the value fits none of the schemas of anyOf")
}

// count checks an array's length.
func (w *walker) count(sh *shape, n int) error {
	if msg := sh.checkCount(n); msg != "" {
		return w.fail(msg)
	}
	return nil
}

func (sh *shape) checkCount(n int) string {
	switch {
	case sh == nil:
	case sh.minItems >= 0 && n < sh.minItems:
		return fmt.Sprintf("%d items, fewer than %d", n, sh.minItems)
	case sh.maxItems >= 0 && n > sh.maxItems:
		return fmt.Sprintf("%d items, more than %d", n, sh.maxItems)
	}
	return ""
}

// stringRules: the shape has rules for a string's content.
func (sh *shape) stringRules() bool {
	return sh != nil && (sh.minLen >= 0 || sh.maxLen >= 0 || sh.pattern != nil || sh.enum != nil)
}

// checkString checks a string's content (length in characters, as JSON
// Schema counts it); "" when it fits.
func (sh *shape) checkString(v string) string {
	if !sh.stringRules() {
		return ""
	}
	if sh.minLen >= 0 || sh.maxLen >= 0 {
		n := utf8.RuneCountInString(v)
		if sh.minLen >= 0 && n < sh.minLen {
			return fmt.Sprintf("%d characters, fewer than %d", n, sh.minLen)
		}
		if sh.maxLen >= 0 && n > sh.maxLen {
			return fmt.Sprintf("%d characters, more than %d", n, sh.maxLen)
		}
	}
	if sh.pattern != nil && !sh.pattern.MatchString(v) {
		return "does not match the pattern " + sh.pattern.String()
	}
	if sh.enum != nil && !slices.Contains(sh.enum, v) {
		return "not one of the allowed values"
	}
	return ""
}

// accepts reports whether a decoded document (Decode's values: maps,
// slices, strings, json.Number, bools, nil) fits the shape. It answers
// false whenever it is not sure, so that the full validator decides and
// writes the error.
func (sh *shape) accepts(v any) bool {
	if sh == nil {
		return true
	}
	if len(sh.anyOf) > 0 && !slices.ContainsFunc(sh.anyOf, func(alt *shape) bool { return alt.accepts(v) }) {
		return false
	}
	var got typeSet
	switch x := v.(type) {
	case nil:
		got = tNull
	case bool:
		got = tBoolean
	case string:
		got = tString
		if sh.checkString(x) != "" {
			return false
		}
	case json.Number:
		var exact bool
		var msg string
		if got, exact, msg = sh.number(string(x)); !exact || msg != "" {
			return false
		}
	case []any:
		got = tArray
		if sh.checkCount(len(x)) != "" {
			return false
		}
		for _, it := range x {
			if !sh.items.accepts(it) {
				return false
			}
		}
	case map[string]any:
		got = tObject
		var seen uint64
		for k, val := range x {
			p, ok := sh.props[k]
			switch {
			case ok:
				seen |= p.bit
				if !p.s.accepts(val) {
					return false
				}
			case sh.closed:
				return false
			default:
				if !sh.extra.accepts(val) {
					return false
				}
			}
		}
		if sh.required > 0 && seen != 1<<sh.required-1 {
			return false
		}
	default:
		return false
	}
	return sh.types == 0 || sh.types&got != 0 || (got == tInteger && sh.types&tNumber != 0)
}

// number classifies the number n as integer or number and checks its
// bounds: msg says why it does not fit. exact is false when a float64
// cannot decide exactly (more than 15 characters, or out of its range), so
// that the walk over decoded arguments leaves the verdict to the full
// validator.
func (sh *shape) number(n string) (t typeSet, exact bool, msg string) {
	integral := !strings.ContainsAny(n, ".eE")
	if integral && (sh == nil || (sh.min == nil && sh.max == nil)) {
		return tInteger, true, ""
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil && !math.IsInf(f, 0) {
		return tNumber, false, "invalid number " + n
	}
	t = tNumber
	if integral || f == math.Trunc(f) {
		t = tInteger
	}
	exact = err == nil && len(n) <= 15
	switch {
	case sh != nil && sh.min != nil && f < *sh.min:
		msg = fmt.Sprintf("%s is less than the minimum %v", n, *sh.min)
	case sh != nil && sh.max != nil && f > *sh.max:
		msg = fmt.Sprintf("%s is greater than the maximum %v", n, *sh.max)
	}
	return t, exact, msg
}

func (t typeSet) String() string {
	names := []string{"null", "boolean", "object", "array", "number", "integer", "string"}
	out := ""
	for i, n := range names {
		if t&(1<<i) != 0 {
			if out != "" {
				out += " or "
			}
			out += n
		}
	}
	return out
}
