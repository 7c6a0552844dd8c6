// Package templates holds the gmail server's mail templates: for each, an
// HTML body (html/template: every value is escaped for where it lands), a
// plain-text body (text/template), a subject line and a declaration of the
// data it needs. Data is checked against the declaration before rendering,
// so a missing or mistyped value is a VALIDATION_ERROR naming it
// (template_data.aircraft[1].price_usd) instead of a half-filled mail. The
// built-in templates are embedded; a directory of the same files overrides
// them or adds new ones.
package templates

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	texttemplate "text/template"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

//go:embed builtin
var builtin embed.FS

// Builtin returns the embedded template files.
func Builtin() fs.FS {
	sub, _ := fs.Sub(builtin, "builtin")
	return sub
}

// Var declares one variable of a template's data.
type Var struct {
	Type        string          `json:"type"`
	Required    bool            `json:"required,omitempty"`
	Description string          `json:"description,omitempty"`
	MaxLength   int             `json:"max_length,omitempty"`
	Minimum     *float64        `json:"minimum,omitempty"`
	MinItems    int             `json:"min_items,omitempty"`
	MaxItems    int             `json:"max_items,omitempty"`
	Items       *Var            `json:"items,omitempty"`
	Fields      map[string]*Var `json:"fields,omitempty"`
}

// Template is one loaded template.
type Template struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Subject     string          `json:"subject"`
	Variables   map[string]*Var `json:"variables"`
	// Source is "builtin" or the override directory.
	Source string `json:"source"`

	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
}

// Set is the templates a server offers.
type Set struct {
	byName map[string]*Template
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

var types = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "date": true, "email": true, "array": true, "object": true}

// Load returns the built-in templates, overridden or extended by the
// templates in dir (if not empty): NAME.json with NAME.html and/or
// NAME.txt. A file missing beside an override's declaration is taken from
// the built-in template of that name. Every template is parsed, and its
// declaration checked, here: a broken one is a start-up error.
func Load(dir string) (*Set, error) {
	s := &Set{byName: map[string]*Template{}}
	if err := s.loadFrom(Builtin(), "builtin", nil); err != nil {
		return nil, err
	}
	if dir == "" {
		return s, nil
	}
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		err = &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
	}
	if err != nil {
		return nil, fmt.Errorf("templates directory: %w", err)
	}
	if err := s.loadFrom(os.DirFS(dir), dir, Builtin()); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Set) loadFrom(fsys fs.FS, source string, fallback fs.FS) error {
	decls, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return err
	}
	for _, d := range decls {
		name := strings.TrimSuffix(d, ".json")
		where := filepath.Join(source, d)
		if !nameRE.MatchString(name) {
			return fmt.Errorf("template %s: a name is lowercase letters, digits and _", where)
		}
		raw, err := fs.ReadFile(fsys, d)
		if err != nil {
			return fmt.Errorf("template %s: %w", where, err)
		}
		t := &Template{Name: name, Source: source}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(t); err != nil {
			return fmt.Errorf("template %s: %v", where, err)
		}
		t.Name, t.Source = name, source
		if err := checkVars(t.Variables, "template_data"); err != nil {
			return fmt.Errorf("template %s: %v", where, err)
		}
		read := func(ext string) (string, bool, error) {
			b, err := fs.ReadFile(fsys, name+ext)
			if err == nil {
				return string(b), true, nil
			}
			if fallback != nil {
				if b, err := fs.ReadFile(fallback, name+ext); err == nil {
					return string(b), true, nil
				}
			}
			return "", false, nil
		}
		htmlSrc, hasHTML, _ := read(".html")
		textSrc, hasText, _ := read(".txt")
		if !hasHTML && !hasText {
			return fmt.Errorf("template %s: no %s.html or %s.txt beside it", where, name, name)
		}
		if t.subject, err = texttemplate.New(name + ".subject").Funcs(funcs).Option("missingkey=error").Parse(t.Subject); err != nil {
			return fmt.Errorf("template %s: subject: %v", where, err)
		}
		if hasHTML {
			if t.html, err = htmltemplate.New(name + ".html").Funcs(htmltemplate.FuncMap(funcs)).Option("missingkey=error").Parse(htmlSrc); err != nil {
				return fmt.Errorf("template %s.html: %v", filepath.Join(source, name), err)
			}
		}
		if hasText {
			if t.text, err = texttemplate.New(name + ".txt").Funcs(funcs).Option("missingkey=error").Parse(textSrc); err != nil {
				return fmt.Errorf("template %s.txt: %v", filepath.Join(source, name), err)
			}
		}
		s.byName[name] = t
	}
	return nil
}

func checkVars(vars map[string]*Var, path string) error {
	for k, v := range vars {
		p := path + "." + k
		if v == nil || !types[v.Type] {
			return fmt.Errorf("%s: type must be one of string, number, integer, boolean, date, email, array, object", p)
		}
		if !nameRE.MatchString(k) {
			return fmt.Errorf("%s: a variable name is lowercase letters, digits and _", p)
		}
		switch v.Type {
		case "array":
			if v.Items == nil {
				return fmt.Errorf("%s: an array declares its items", p)
			}
			if err := checkVars(map[string]*Var{"items": v.Items}, p); err != nil {
				return err
			}
		case "object":
			if err := checkVars(v.Fields, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Names lists the templates, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns a template by name.
func (s *Set) Get(name string) (*Template, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// All returns every template, sorted by name.
func (s *Set) All() []*Template {
	var out []*Template
	for _, n := range s.Names() {
		out = append(out, s.byName[n])
	}
	return out
}

// Rendered is a template's output.
type Rendered struct {
	Subject string
	HTML    string
	Text    string
}

// Render checks data against the declaration and renders the subject and
// bodies.
func (t *Template) Render(data map[string]any) (*Rendered, error) {
	clean, err := checkObject(t.Name, t.Variables, data, "template_data")
	if err != nil {
		return nil, err
	}
	var out Rendered
	var b bytes.Buffer
	if err := t.subject.Execute(&b, clean); err != nil {
		return nil, renderError(t, err)
	}
	out.Subject = strings.Join(strings.Fields(b.String()), " ")
	if err := mailmsg.CheckHeaderValue("subject", out.Subject); err != nil {
		return nil, mcperr.Invalid("template_data", nil, "values without line breaks where the subject uses them",
			"the subject of template %s would not be one line of text", t.Name)
	}
	if t.html != nil {
		b.Reset()
		if err := t.html.Execute(&b, clean); err != nil {
			return nil, renderError(t, err)
		}
		out.HTML = b.String()
	}
	if t.text != nil {
		b.Reset()
		if err := t.text.Execute(&b, clean); err != nil {
			return nil, renderError(t, err)
		}
		out.Text = strings.TrimSpace(b.String()) + "\n"
	}
	return &out, nil
}

// Pair is one variable of a template's data as an agent gives it: a name
// and its value as text. Strict tool-calling modes (OpenAI's) refuse an
// argument that is an object open to any key, so template data travels as
// a list of pairs and is typed here, from the template's declaration.
type Pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Data turns pairs (the argument at path, e.g. template_data) into the
// data Render checks: each value is read as its variable's declared type —
// numbers and integers as decimal numbers, booleans as true or false, lists
// and objects as JSON, the rest as the text itself. An empty value leaves an
// optional variable out. A name the template does not declare, a name given
// twice or a value that cannot be read as its type is a VALIDATION_ERROR
// naming the pair (template_data[2].name).
func (t *Template) Data(pairs []Pair, path string) (map[string]any, error) {
	known := make([]string, 0, len(t.Variables))
	for n := range t.Variables {
		known = append(known, n)
	}
	sort.Strings(known)
	out := make(map[string]any, len(pairs))
	seen := make(map[string]int, len(pairs))
	for i, p := range pairs {
		field := fmt.Sprintf("%s[%d]", path, i)
		v, ok := t.Variables[p.Name]
		if !ok {
			return nil, mcperr.Invalid(field+".name", p.Name, "one of "+strings.Join(known, ", "),
				"%s.name %q is not a variable of template %s (it takes %s)", field, p.Name, t.Name, strings.Join(known, ", "))
		}
		if j, dup := seen[p.Name]; dup {
			return nil, mcperr.Invalid(field+".name", p.Name, "each variable once",
				"%s.name %q is given twice (also at %s[%d])", field, p.Name, path, j)
		}
		seen[p.Name] = i
		val, err := parseValue(v, p.Value)
		if err != nil {
			return nil, mcperr.Invalid(field+".value", p.Value, typeWord(v)+textForm(v),
				"%s.value (%s) must be %s%s: %v", field, p.Name, typeWord(v), textForm(v), err)
		}
		if val != nil {
			out[p.Name] = val
		}
	}
	return out, nil
}

// textForm says how a value of v's type is written as text.
func textForm(v *Var) string {
	switch v.Type {
	case "array", "object":
		return ", written as JSON"
	case "number", "integer":
		return ", written in digits such as 45000 or 1234.5"
	}
	return ""
}

// parseValue reads s as a value of v's type; nil is an absent value.
func parseValue(v *Var, s string) (any, error) {
	switch v.Type {
	case "string", "date", "email":
		return s, nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	switch v.Type {
	case "number", "integer":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("not a number")
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, errors.New("not true or false")
		}
		return b, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("not JSON (%v)", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return x, nil
}

func renderError(t *Template, err error) error {
	// The data was checked, so this is the template's own fault (an
	// operator's override using a variable it does not declare).
	return mcperr.New(mcperr.Internal, "template %s (%s) failed to render: %v", t.Name, t.Source, err)
}

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func typeWord(v *Var) string {
	switch v.Type {
	case "date":
		return "a date YYYY-MM-DD"
	case "email":
		return "an email address"
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "integer":
		return "a whole number"
	case "integer_or_number", "number":
		return "a number"
	case "boolean":
		return "true or false"
	}
	return "a string"
}

// checkObject validates data against vars and returns it with every
// declared variable present (absent optional ones as their zero value, so a
// template can test them with {{if}}).
func checkObject(tmpl string, vars map[string]*Var, data map[string]any, path string) (map[string]any, error) {
	out := make(map[string]any, len(vars))
	for k := range data {
		if _, ok := vars[k]; !ok {
			known := make([]string, 0, len(vars))
			for n := range vars {
				known = append(known, n)
			}
			sort.Strings(known)
			return nil, mcperr.Invalid(path+"."+k, data[k], "one of "+strings.Join(known, ", "),
				"%s is not a variable of template %s (it takes %s)", path+"."+k, tmpl, strings.Join(known, ", "))
		}
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, k := range names {
		v := vars[k]
		p := path + "." + k
		val, present := data[k]
		if !present || val == nil {
			if v.Required {
				desc := ""
				if v.Description != "" {
					desc = " (" + v.Description + ")"
				}
				return nil, mcperr.Invalid(p, nil, typeWord(v), "template %s needs %s: %s%s", tmpl, p, typeWord(v), desc)
			}
			out[k] = zero(v)
			continue
		}
		c, err := checkValue(tmpl, v, val, p)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

func zero(v *Var) any {
	switch v.Type {
	case "number", "integer":
		return 0
	case "boolean":
		return false
	case "array":
		return []any(nil)
	case "object":
		m, _ := checkObject("", v.Fields, nil, "")
		return m
	}
	return ""
}

func checkValue(tmpl string, v *Var, val any, p string) (any, error) {
	bad := func(why string) error {
		if why == "" {
			why = "must be " + typeWord(v)
		}
		return mcperr.Invalid(p, val, typeWord(v), "%s %s", p, why)
	}
	switch v.Type {
	case "string", "date", "email":
		s, ok := val.(string)
		if !ok {
			return nil, bad("")
		}
		if v.Required && strings.TrimSpace(s) == "" {
			return nil, bad("must not be empty")
		}
		if v.MaxLength > 0 && len([]rune(s)) > v.MaxLength {
			return nil, bad(fmt.Sprintf("is longer than %d characters", v.MaxLength))
		}
		switch v.Type {
		case "date":
			if _, err := time.Parse("2006-01-02", s); err != nil || !dateRE.MatchString(s) {
				if s == "" && !v.Required {
					return s, nil
				}
				return nil, bad("must be a date YYYY-MM-DD")
			}
		case "email":
			if s != "" {
				if _, err := mailmsg.ParseAddress(p, s); err != nil {
					return nil, err
				}
			}
		}
		return s, nil
	case "number", "integer":
		var f float64
		ok := true
		switch n := val.(type) {
		case float64:
			f = n
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		case json.Number:
			var err error
			if f, err = n.Float64(); err != nil {
				ok = false
			}
		default:
			ok = false
		}
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("")
		}
		if v.Type == "integer" && f != math.Trunc(f) {
			return nil, bad("must be a whole number")
		}
		if v.Minimum != nil && f < *v.Minimum {
			return nil, bad(fmt.Sprintf("must be at least %v", *v.Minimum))
		}
		if v.Type == "integer" {
			return int(f), nil
		}
		return f, nil
	case "boolean":
		b, ok := val.(bool)
		if !ok {
			return nil, bad("")
		}
		return b, nil
	case "array":
		list, ok := val.([]any)
		if !ok {
			return nil, bad("")
		}
		if v.Required && len(list) < max(v.MinItems, 1) || len(list) < v.MinItems {
			return nil, bad(fmt.Sprintf("needs at least %d item(s)", max(v.MinItems, 1)))
		}
		if v.MaxItems > 0 && len(list) > v.MaxItems {
			return nil, bad(fmt.Sprintf("has more than %d items", v.MaxItems))
		}
		out := make([]any, len(list))
		for i, item := range list {
			c, err := checkValue(tmpl, v.Items, item, fmt.Sprintf("%s[%d]", p, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case "object":
		m, ok := val.(map[string]any)
		if !ok {
			return nil, bad("")
		}
		return checkObject(tmpl, v.Fields, m, p)
	}
	return nil, bad("")
}

var funcs = texttemplate.FuncMap{
	"money": money,
	"date":  longDate,
	"add":   func(a, b int) int { return a + b },
	"paragraphs": func(s string) []string {
		var out []string
		for _, p := range regexp.MustCompile(`\n\s*\n`).Split(strings.TrimSpace(s), -1) {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	},
}

// money writes 45000 as 45,000 and 1234.5 as 1,234.50.
func money(v any) string {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		f = float64(n)
	default:
		return fmt.Sprint(v)
	}
	neg := f < 0
	f = math.Abs(f)
	cents := int64(math.Round(f * 100))
	whole, frac := cents/100, cents%100
	s := fmt.Sprint(whole)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != 0 {
		fmt.Fprintf(&b, ".%02d", frac)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// longDate writes 2025-11-15 as "Saturday, November 15, 2025".
func longDate(s string) string {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return s
	}
	return t.Format("Monday, January 2, 2006")
}
