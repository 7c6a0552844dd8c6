// Package query reads the part of Gmail's search syntax the local mailbox
// understands — from:, to:, cc:, bcc:, subject:, has:attachment,
// filename:, after:, before:, older_than:, newer_than:, in: and label:,
// rfc822msgid:, "quoted phrases", free words and -negation — and matches
// messages against it. Anything else is refused with the operator named,
// rather than silently ignored.
package query

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Term is one condition; all terms of a query must hold.
type Term struct {
	// Field is "" for free text, else the operator (from, subject…).
	Field string
	Value string
	Neg   bool
	// Time is the bound of after/before/older_than/newer_than.
	Time time.Time
}

// Query is a parsed search.
type Query struct {
	Terms []Term
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
}

var supported = []string{"from", "to", "cc", "bcc", "subject", "has", "filename", "after", "before", "older_than", "newer_than", "in", "label", "rfc822msgid"}

// Parse reads q; now anchors older_than/newer_than. Errors name the field
// "query".
func Parse(q string, now time.Time) (*Query, error) {
	toks, err := tokenize(q)
	if err != nil {
		return nil, err
	}
	out := &Query{}
	for _, tok := range toks {
		t := Term{Neg: tok.neg}
		if tok.key == "" {
			if !tok.quoted && (tok.val == "OR" || tok.val == "AND" || strings.ContainsAny(tok.val, "{}()")) {
				return nil, mcperr.Invalid("query", q, "terms that must all match", "the local mailbox does not support %q in a search; list terms that must all match", tok.val)
			}
			t.Value = strings.ToLower(tok.val)
			out.Terms = append(out.Terms, t)
			continue
		}
		key := strings.ToLower(tok.key)
		t.Field, t.Value = key, strings.ToLower(tok.val)
		switch key {
		case "from", "to", "cc", "bcc", "subject", "filename", "rfc822msgid":
		case "has":
			if t.Value != "attachment" {
				return nil, mcperr.Invalid("query", q, "has:attachment", "the local mailbox supports has:attachment only, not has:%s", tok.val)
			}
		case "in", "label":
			t.Field = "label"
			if t.Value == "draft" {
				t.Value = "drafts"
			}
		case "after", "before":
			d, err := parseDate(tok.val)
			if err != nil {
				return nil, mcperr.Invalid("query", q, "a date such as 2025/11/15", "%s:%s is not a date (use YYYY/MM/DD)", key, tok.val)
			}
			t.Time = d
		case "older_than", "newer_than":
			d, err := parseAge(tok.val)
			if err != nil {
				return nil, mcperr.Invalid("query", q, "an age such as 7d, 2m or 1y", "%s:%s is not an age (a number and d, m or y)", key, tok.val)
			}
			t.Time = d(now)
		default:
			return nil, mcperr.Invalid("query", q, "operators "+strings.Join(supported, ", "),
				"the local mailbox does not support the search operator %s: (it supports %s)", tok.key, strings.Join(supported, ", "))
		}
		out.Terms = append(out.Terms, t)
	}
	return out, nil
}

type token struct {
	key, val    string
	neg, quoted bool
}

func tokenize(q string) ([]token, error) {
	var out []token
	r := []rune(q)
	for i := 0; i < len(r); {
		if unicode.IsSpace(r[i]) {
			i++
			continue
		}
		var t token
		if r[i] == '-' {
			t.neg = true
			i++
		}
		start := i
		for i < len(r) && !unicode.IsSpace(r[i]) && r[i] != ':' && r[i] != '"' {
			i++
		}
		if i < len(r) && r[i] == ':' && i > start {
			t.key = string(r[start:i])
			i++
			start = i
		} else {
			i = start
		}
		if i < len(r) && r[i] == '"' {
			end := i + 1
			for end < len(r) && r[end] != '"' {
				end++
			}
			if end >= len(r) {
				return nil, mcperr.Invalid("query", q, "balanced quotes", "the search has an unclosed quote")
			}
			t.val, t.quoted = string(r[i+1:end]), true
			i = end + 1
		} else {
			for i < len(r) && !unicode.IsSpace(r[i]) {
				i++
			}
			t.val = string(r[start:i])
		}
		if t.val == "" && !t.quoted {
			if t.key != "" {
				return nil, mcperr.Invalid("query", q, "operator:value", "%s: has no value", t.key)
			}
			continue
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

// Match reports whether d satisfies every term.
func (q *Query) Match(d *Doc) bool {
	for _, t := range q.Terms {
		if t.match(d) == t.Neg {
			return false
		}
	}
	return true
}

func contains(hay, needle string) bool { return strings.Contains(strings.ToLower(hay), needle) }

func (t Term) match(d *Doc) bool {
	switch t.Field {
	case "":
		return contains(d.Subject, t.Value) || contains(d.Body, t.Value) || contains(d.From, t.Value) ||
			contains(d.To, t.Value) || contains(d.Cc, t.Value) || anyContains(d.Filenames, t.Value)
	case "from":
		return contains(d.From, t.Value)
	case "to":
		return contains(d.To, t.Value) || contains(d.Cc, t.Value) || contains(d.Bcc, t.Value)
	case "cc":
		return contains(d.Cc, t.Value)
	case "bcc":
		return contains(d.Bcc, t.Value)
	case "subject":
		return contains(d.Subject, t.Value)
	case "has":
		return len(d.Filenames) > 0
	case "filename":
		return anyContains(d.Filenames, t.Value)
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

func anyContains(list []string, v string) bool {
	for _, s := range list {
		if contains(s, v) {
			return true
		}
	}
	return false
}
