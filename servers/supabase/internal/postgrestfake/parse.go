package postgrestfake

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
)

// This file reads query strings by PostgREST's grammar (its QueryParams
// module), written from that grammar rather than from this server's
// renderer, so a value the renderer quotes wrongly is read wrongly here.

// parseErr is a PGRST100 error.
type parseErr struct{ msg string }

func (e *parseErr) Error() string { return e.msg }

func failf(format string, a ...any) error { return &parseErr{fmt.Sprintf(format, a...)} }

var simpleOps = map[string]query.Op{"eq": query.Eq, "neq": query.Neq, "gt": query.Gt, "gte": query.Gte, "lt": query.Lt,
	"lte": query.Lte, "like": query.Like, "ilike": query.ILike}

type scanner struct {
	s string
	i int
}

func (p *scanner) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *scanner) eat(lit string) bool {
	if strings.HasPrefix(p.s[p.i:], lit) {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *scanner) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// quoted reads "…" with backslash escapes; ok is false (and nothing is
// consumed) unless the closing quote is followed by , or ).
func (p *scanner) quoted() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	var b strings.Builder
	j := p.i + 1
	for j < len(p.s) {
		c := p.s[j]
		switch {
		case c == '\\' && j+1 < len(p.s):
			b.WriteByte(p.s[j+1])
			j += 2
		case c == '"':
			if j+1 < len(p.s) && p.s[j+1] != ',' && p.s[j+1] != ')' {
				return "", false
			}
			p.i = j + 1
			return b.String(), true
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", false
}

// until reads up to (not including) any of stop.
func (p *scanner) until(stop string) string {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(stop, rune(p.s[p.i])) {
		p.i++
	}
	return p.s[start:p.i]
}

// field reads a column name (letters, digits, _ and $; no JSON paths here).
func (p *scanner) field() (string, error) {
	p.ws()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	name := p.s[start:p.i]
	p.ws()
	if name == "" {
		return "", failf("expecting field name at %q", p.s[p.i:])
	}
	return name, nil
}

// list reads (a,b,"c,d").
func (p *scanner) list() ([]query.Value, error) {
	p.ws()
	if !p.eat("(") {
		return nil, failf("expecting ( in %q", p.s)
	}
	p.ws()
	var out []query.Value
	for {
		if v, ok := p.quoted(); ok {
			out = append(out, query.Value{Kind: query.String, Text: v})
		} else {
			out = append(out, query.Value{Kind: query.String, Text: p.until(",)")})
		}
		if p.eat(",") {
			continue
		}
		p.ws()
		if !p.eat(")") {
			return nil, failf("expecting , or ) in %q", p.s)
		}
		p.ws()
		return out, nil
	}
}

// opExpr reads [not.]op.value; logic selects the value grammar of logic
// trees (quoted, {array} or up to , or )) over the rest-of-input grammar.
func (p *scanner) opExpr(col string, logic bool) (*query.Cond, error) {
	c := &query.Cond{Column: col}
	if p.eat("not.") {
		c.Not = true
	}
	switch {
	case p.eat("in."):
		c.Op = query.In
		vals, err := p.list()
		if err != nil {
			return nil, err
		}
		c.List = vals
		return c, nil
	case p.eat("is."):
		c.Op = query.Is
		var v string
		if logic {
			// The tree's separators skip blanks after the value.
			v = strings.TrimRight(p.until(",)"), " \t")
		} else {
			v = p.s[p.i:]
			p.i = len(p.s)
		}
		switch t := strings.ToLower(v); t {
		case "null", "true", "false", "unknown":
			c.Value = query.Value{Kind: query.Null, Text: t}
			return c, nil
		}
		return nil, failf("null or trilean value (unknown, true, false) expected, got %q", v)
	}
	name := p.until(".")
	op, ok := simpleOps[name]
	if !ok || !p.eat(".") {
		return nil, failf("unknown single value operator %s", name)
	}
	c.Op = op
	if !logic {
		c.Value = query.Value{Kind: query.String, Text: p.s[p.i:]}
		p.i = len(p.s)
		return c, nil
	}
	if v, ok := p.quoted(); ok {
		c.Value = query.Value{Kind: query.String, Text: v}
		return c, nil
	}
	if p.peek() == '{' {
		start := p.i
		if end := strings.IndexByte(p.s[p.i:], '}'); end >= 0 && !strings.ContainsRune(p.s[p.i+1:p.i+end], '{') {
			p.i += end + 1
			c.Value = query.Value{Kind: query.String, Text: p.s[start:p.i]}
			return c, nil
		}
	}
	c.Value = query.Value{Kind: query.String, Text: p.until(",)")}
	return c, nil
}

// tree reads and(…) / or(…) (after an optional not., which this fake
// does not support) or a filter.
func (p *scanner) tree() (query.Node, error) {
	p.ws()
	if strings.HasPrefix(p.s[p.i:], "not.and(") || strings.HasPrefix(p.s[p.i:], "not.or(") {
		return query.Node{}, failf("negated logic trees are not supported by this fake")
	}
	for _, op := range []string{"and", "or"} {
		if p.eat(op + "(") {
			g, err := p.items(op == "or")
			if err != nil {
				return query.Node{}, err
			}
			return query.Node{Group: &g}, nil
		}
	}
	col, err := p.field()
	if err != nil {
		return query.Node{}, err
	}
	if !p.eat(".") {
		return query.Node{}, failf("expecting delimiter (.) after %q", col)
	}
	c, err := p.opExpr(col, true)
	if err != nil {
		return query.Node{}, err
	}
	p.ws()
	return query.Node{Cond: c}, nil
}

// items reads tree items up to the closing parenthesis.
func (p *scanner) items(or bool) (query.Group, error) {
	g := query.Group{Or: or}
	for {
		n, err := p.tree()
		if err != nil {
			return g, err
		}
		g.Items = append(g.Items, n)
		p.ws()
		if p.eat(",") {
			continue
		}
		if !p.eat(")") {
			return g, failf("expecting , or ) in logic tree")
		}
		p.ws()
		return g, nil
	}
}

// logicParam reads the value of or=(…) / and=(…).
func logicParam(key, v string) (query.Node, error) {
	if strings.HasPrefix(key, "not.") {
		return query.Node{}, failf("negated logic trees are not supported by this fake")
	}
	p := &scanner{s: v}
	p.ws()
	if !p.eat("(") {
		return query.Node{}, failf("failed to parse logic tree (%s)", v)
	}
	g, err := p.items(key == "or")
	if err != nil {
		return query.Node{}, err
	}
	if p.i != len(p.s) {
		return query.Node{}, failf("failed to parse logic tree (%s): unexpected %q", v, p.s[p.i:])
	}
	return query.Node{Group: &g}, nil
}

// filterParam reads column=[not.]op.value.
func filterParam(col, v string) (*query.Cond, error) {
	if !query.ValidIdent(col) {
		return nil, failf("failed to parse tree path (%s)", col)
	}
	p := &scanner{s: v}
	c, err := p.opExpr(col, false)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, failf("failed to parse filter (%s)", v)
	}
	return c, nil
}

// orderParam reads col[.asc|.desc][.nullsfirst|.nullslast],…
func orderParam(v string) ([]query.Order, error) {
	var out []query.Order
	for _, term := range strings.Split(v, ",") {
		parts := strings.Split(strings.TrimSpace(term), ".")
		if !query.ValidIdent(parts[0]) {
			return nil, failf("failed to parse order (%s)", v)
		}
		o := query.Order{Column: parts[0]}
		rest := parts[1:]
		if len(rest) > 0 && (rest[0] == "asc" || rest[0] == "desc") {
			o.Desc = rest[0] == "desc"
			rest = rest[1:]
		}
		if len(rest) > 0 && (rest[0] == "nullsfirst" || rest[0] == "nullslast") {
			o.Nulls = strings.TrimPrefix(rest[0], "nulls")
			rest = rest[1:]
		}
		if len(rest) > 0 {
			return nil, failf("failed to parse order (%s)", v)
		}
		out = append(out, o)
	}
	return out, nil
}

// columnsParam reads "a","b" or a,b.
func columnsParam(v string) ([]string, error) {
	var out []string
	for _, c := range strings.Split(v, ",") {
		c = strings.TrimSpace(c)
		if len(c) >= 2 && c[0] == '"' && c[len(c)-1] == '"' {
			c = c[1 : len(c)-1]
		}
		if !query.ValidIdent(c) {
			return nil, failf("failed to parse columns parameter (%s)", v)
		}
		out = append(out, c)
	}
	return out, nil
}

func nonNegative(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, failf("%s must be a non-negative integer, got %q", name, v)
	}
	return n, nil
}
