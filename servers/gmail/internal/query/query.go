// Package query reads the part of Gmail's search syntax the local mailbox
// understands — from:, to:, cc:, bcc:, subject:, has:attachment,
// filename:, after:, before:, older_than:, newer_than:, in: and label:,
// rfc822msgid:, "quoted phrases", free words, -negation, OR (also |),
// {a b} (any of), (a b) (all of) and operator:(…) groups, with from:me and
// to:me meaning the mailbox's own address — and matches messages against
// it as Gmail does: words match whole words, not parts of them, and OR
// binds tighter than the implicit AND ("a b OR c" is a and (b or c)).
// Anything else is refused with the operator named, rather than silently
// ignored or matched as text.
package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Term is one condition.
type Term struct {
	// Field is "" for free text, else the operator (from, subject…).
	Field string
	Value string
	// Time is the bound of after/before/older_than/newer_than.
	Time time.Time
	// words are Value's words, for whole-word matching.
	words []string
}

// node is a condition: a term, or all/any of other nodes, or a negation.
type node interface {
	match(d *Doc) bool
}

type allOf []node
type anyOf []node
type not struct{ n node }

func (a allOf) match(d *Doc) bool {
	for _, n := range a {
		if !n.match(d) {
			return false
		}
	}
	return true
}

func (a anyOf) match(d *Doc) bool {
	for _, n := range a {
		if n.match(d) {
			return true
		}
	}
	return false
}

func (n not) match(d *Doc) bool { return !n.n.match(d) }

// Query is a parsed search.
type Query struct {
	root node
}

// Doc is what a message offers to matching.
type Doc struct {
	From, To, Cc, Bcc string
	Subject           string
	Body              string
	Date              time.Time
	Labels            []string
	MessageID         string
	Filenames         []string
	// Me is the mailbox's own address: what from:me and to:me name.
	Me string

	words map[string][]string // field → its words, made on first use
}

var supported = []string{"from", "to", "cc", "bcc", "subject", "has", "filename", "after", "before", "older_than", "newer_than", "in", "label", "rfc822msgid"}

// Parse reads q; now anchors older_than/newer_than. Errors name the field
// "query".
func Parse(q string, now time.Time) (*Query, error) {
	toks, err := tokenize(q)
	if err != nil {
		return nil, err
	}
	p := &parser{q: q, toks: toks, now: now}
	root, err := p.all("")
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, p.fail("a closing %s without an opening one", p.toks[p.i].val)
	}
	return &Query{root: root}, nil
}

type tokKind int

const (
	tWord tokKind = iota
	tPhrase
	tOpen  // ( or {
	tClose // ) or }
	tOr    // OR or |
	tNeg   // - before a term
)

type token struct {
	kind tokKind
	key  string // operator: before a word, phrase or group
	val  string
}

type parser struct {
	q    string
	toks []token
	i    int
	now  time.Time
}

func (p *parser) fail(format string, a ...any) error {
	return mcperr.Invalid("query", p.q, "Gmail search syntax this mailbox understands", "the search %q cannot be read: "+format, append([]any{p.q}, a...)...)
}

// terms reads terms, each with the terms joined to it by OR, up to the
// closing bracket (or the end).
func (p *parser) terms(key string) ([]node, error) {
	var out []node
	for p.i < len(p.toks) && p.toks[p.i].kind != tClose {
		n, err := p.or(key)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// all reads terms up to the closing bracket (or the end) and returns
// their conjunction.
func (p *parser) all(key string) (node, error) {
	out, err := p.terms(key)
	if err != nil {
		return nil, err
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return allOf(out), nil
}

// or reads one term and the terms joined to it by OR.
func (p *parser) or(key string) (node, error) {
	first, err := p.unary(key)
	if err != nil {
		return nil, err
	}
	alts := anyOf{first}
	for p.i < len(p.toks) && p.toks[p.i].kind == tOr {
		p.i++
		if p.i >= len(p.toks) || p.toks[p.i].kind == tClose {
			return nil, p.fail("OR has nothing after it")
		}
		n, err := p.unary(key)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	if len(alts) == 1 {
		return first, nil
	}
	return alts, nil
}

func (p *parser) unary(key string) (node, error) {
	t := p.toks[p.i]
	switch t.kind {
	case tNeg:
		p.i++
		if p.i >= len(p.toks) || p.toks[p.i].kind == tClose || p.toks[p.i].kind == tOr {
			return nil, p.fail("- has nothing after it")
		}
		n, err := p.unary(key)
		if err != nil {
			return nil, err
		}
		return not{n}, nil
	case tOr:
		return nil, p.fail("OR has nothing before it")
	case tOpen:
		if t.key != "" {
			if key != "" {
				return nil, p.fail("%s: inside %s:( )", t.key, key)
			}
			key = t.key
		}
		p.i++
		var n node
		var err error
		if t.val == "{" {
			var alts []node
			alts, err = p.terms(key)
			n = anyOf(alts)
		} else {
			n, err = p.all(key)
		}
		if err != nil {
			return nil, err
		}
		want := map[string]string{"(": ")", "{": "}"}[t.val]
		if p.i >= len(p.toks) || p.toks[p.i].val != want {
			return nil, p.fail("%s is not closed by %s", t.val, want)
		}
		p.i++
		if g, ok := n.(allOf); ok && len(g) == 0 {
			return nil, p.fail("%s%s is empty", t.val, want)
		}
		if g, ok := n.(anyOf); ok && len(g) == 0 {
			return nil, p.fail("%s%s is empty", t.val, want)
		}
		return n, nil
	}
	p.i++
	if t.key != "" && key != "" {
		return nil, p.fail("%s: inside %s:( )", t.key, key)
	}
	if t.key == "" {
		t.key = key
	}
	return p.term(t)
}

func (p *parser) term(tok token) (node, error) {
	if tok.key == "" {
		if tok.kind == tWord && (tok.val == "AND") {
			return allOf{}, nil
		}
		if tok.kind == tWord && (tok.val == "AROUND" || tok.val == "NEAR") {
			return nil, mcperr.Invalid("query", p.q, "words, phrases, operators, OR and groups", "the local mailbox does not support %s in a search", tok.val)
		}
		if len(words(tok.val)) == 0 {
			return nil, mcperr.Invalid("query", p.q, "words with letters or digits", "%q has no letter or digit to search for", tok.val)
		}
		return Term{Value: strings.ToLower(tok.val), words: words(tok.val)}, nil
	}
	key := strings.ToLower(tok.key)
	t := Term{Field: key, Value: strings.ToLower(tok.val), words: words(tok.val)}
	switch key {
	case "from", "to", "cc", "bcc", "subject", "filename":
		if len(t.words) == 0 {
			return nil, mcperr.Invalid("query", p.q, "words with letters or digits", "%s:%s has no letter or digit to search for", key, tok.val)
		}
	case "rfc822msgid":
	case "has":
		if t.Value != "attachment" {
			return nil, mcperr.Invalid("query", p.q, "has:attachment", "the local mailbox supports has:attachment only, not has:%s", tok.val)
		}
	case "in", "label":
		t.Field = "label"
		if t.Value == "draft" {
			t.Value = "drafts"
		}
	case "after", "before":
		d, err := parseDate(tok.val)
		if err != nil {
			return nil, mcperr.Invalid("query", p.q, "a date such as 2025/11/15", "%s:%s is not a date (use YYYY/MM/DD)", key, tok.val)
		}
		t.Time = d
	case "older_than", "newer_than":
		d, err := parseAge(tok.val)
		if err != nil {
			return nil, mcperr.Invalid("query", p.q, "an age such as 7d, 2m or 1y", "%s:%s is not an age (a number and d, m or y)", key, tok.val)
		}
		t.Time = d(p.now)
	default:
		return nil, mcperr.Invalid("query", p.q, "operators "+strings.Join(supported, ", "),
			"the local mailbox does not support the search operator %s: (it supports %s)", tok.key, strings.Join(supported, ", "))
	}
	return t, nil
}

func isPunct(r rune) bool {
	return r == '(' || r == ')' || r == '{' || r == '}' || r == '|' || r == '"'
}

func tokenize(q string) ([]token, error) {
	var out []token
	r := []rune(q)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
			continue
		case c == '(' || c == '{':
			out = append(out, token{kind: tOpen, val: string(c)})
			i++
			continue
		case c == ')' || c == '}':
			out = append(out, token{kind: tClose, val: string(c)})
			i++
			continue
		case c == '|':
			out = append(out, token{kind: tOr, val: "|"})
			i++
			continue
		case c == '-' && i+1 < len(r) && !unicode.IsSpace(r[i+1]):
			out = append(out, token{kind: tNeg, val: "-"})
			i++
			continue
		}
		var t token
		start := i
		for i < len(r) && !unicode.IsSpace(r[i]) && !isPunct(r[i]) && r[i] != ':' {
			i++
		}
		if i < len(r) && r[i] == ':' && i > start {
			t.key = string(r[start:i])
			i++
			start = i
		} else {
			i = start
		}
		switch {
		case i < len(r) && r[i] == '"':
			end := i + 1
			for end < len(r) && r[end] != '"' {
				end++
			}
			if end >= len(r) {
				return nil, mcperr.Invalid("query", q, "balanced quotes", "the search has an unclosed quote")
			}
			t.kind, t.val = tPhrase, string(r[i+1:end])
			i = end + 1
		case t.key != "" && i < len(r) && (r[i] == '(' || r[i] == '{'):
			t.kind, t.val = tOpen, string(r[i])
			i++
		default:
			for i < len(r) && !unicode.IsSpace(r[i]) && !isPunct(r[i]) {
				i++
			}
			t.kind, t.val = tWord, string(r[start:i])
			if t.val == "" {
				if t.key != "" {
					return nil, mcperr.Invalid("query", q, "operator:value", "%s: has no value", t.key)
				}
				continue
			}
			if t.key == "" && t.val == "OR" {
				t.kind = tOr
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func parseDate(s string) (time.Time, error) {
	for _, layout := range []string{"2006/01/02", "2006-01-02", "2006/1/2"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, fmt.Errorf("not a date")
}

func parseAge(s string) (func(time.Time) time.Time, error) {
	if len(s) < 2 {
		return nil, fmt.Errorf("not an age")
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("not an age")
	}
	switch s[len(s)-1] {
	case 'd':
		return func(t time.Time) time.Time { return t.AddDate(0, 0, -n) }, nil
	case 'm':
		return func(t time.Time) time.Time { return t.AddDate(0, -n, 0) }, nil
	case 'y':
		return func(t time.Time) time.Time { return t.AddDate(-n, 0, 0) }, nil
	}
	return nil, fmt.Errorf("not an age")
}

// Match reports whether d satisfies the query.
func (q *Query) Match(d *Doc) bool { return q.root.match(d) }

// words splits text into its words: runs of letters and digits, lower
// case. Gmail matches a search word against whole words like these.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// has reports whether the words of text contain want as a run.
func has(text []string, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for i := 0; i+len(want) <= len(text); i++ {
		if slices.Equal(text[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// field returns the words of one of the doc's fields, splitting them once.
func (d *Doc) field(name string) []string {
	if w, ok := d.words[name]; ok {
		return w
	}
	if d.words == nil {
		d.words = map[string][]string{}
	}
	var text string
	switch name {
	case "from":
		text = d.From
	case "to":
		text = d.To
	case "cc":
		text = d.Cc
	case "bcc":
		text = d.Bcc
	case "subject":
		text = d.Subject
	case "body":
		text = d.Body
	case "filename":
		text = strings.Join(d.Filenames, "\n")
	}
	w := words(text)
	d.words[name] = w
	return w
}

// in matches the term's words against the doc's fields; "me" names the
// mailbox's own address.
func (t Term) in(d *Doc, fields ...string) bool {
	want := t.words
	if t.Value == "me" && d.Me != "" {
		want = words(d.Me)
	}
	for _, f := range fields {
		if has(d.field(f), want) {
			return true
		}
	}
	return false
}

func (t Term) match(d *Doc) bool {
	switch t.Field {
	case "":
		return t.in(d, "subject", "body", "from", "to", "cc", "filename")
	case "from":
		return t.in(d, "from")
	case "to":
		return t.in(d, "to", "cc", "bcc")
	case "cc":
		return t.in(d, "cc")
	case "bcc":
		return t.in(d, "bcc")
	case "subject":
		return t.in(d, "subject")
	case "has":
		return len(d.Filenames) > 0
	case "filename":
		return t.in(d, "filename")
	case "label":
		if t.Value == "anywhere" {
			return true
		}
		for _, l := range d.Labels {
			if strings.EqualFold(l, t.Value) {
				return true
			}
		}
		return false
	case "rfc822msgid":
		return strings.Trim(strings.ToLower(d.MessageID), "<>") == strings.Trim(t.Value, "<>")
	case "after", "newer_than":
		return !d.Date.Before(t.Time)
	case "before", "older_than":
		return d.Date.Before(t.Time)
	}
	return false
}
