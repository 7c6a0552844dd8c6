package query

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Param is one query-string parameter.
type Param struct{ Key, Value string }

// Request is a PostgREST request: method, path below the REST root
// ("/iso_workflows", "/rpc/fn"), query parameters in order, headers (apikey
// and Authorization are added by the client) and body.
type Request struct {
	Method  string
	Path    string
	Query   []Param
	Headers map[string]string
	Body    json.RawMessage
}

// RawQuery encodes the parameters as an HTML form serializer does (what
// PostgREST's own JavaScript client sends): letters, digits and *-._ stay,
// a space becomes +, everything else is percent-encoded.
func (r *Request) RawQuery() string {
	var b strings.Builder
	for i, p := range r.Query {
		if i > 0 {
			b.WriteByte('&')
		}
		formEncode(&b, p.Key)
		b.WriteByte('=')
		formEncode(&b, p.Value)
	}
	return b.String()
}

func formEncode(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// reservedKeys are query parameters PostgREST does not read as filters; a
// filter on a column of that name goes into an and=(…) group instead.
var reservedKeys = map[string]bool{"select": true, "columns": true, "on_conflict": true, "order": true,
	"limit": true, "offset": true, "and": true, "or": true}

// listValue renders one element of an in.(…) list. PostgREST reads an
// element up to the next comma or closing parenthesis, drops leading blanks
// of the first, and reads a leading double quote as the start of a quoted
// element with backslash escapes; its JavaScript client quotes elements
// holding , ( or ). Quoted here: those, and elements that start with a
// quote or a blank, or are empty.
func listValue(v Value) string {
	s := v.Text
	if v.Kind != String {
		return s
	}
	if s == "" || strings.ContainsAny(s, ",()") || s[0] == '"' || s[0] == ' ' || s[0] == '\t' {
		return quoteValue(s)
	}
	return s
}

// logicValue renders a value inside an or=(…)/and=(…) tree, where
// PostgREST ends a value at , or ), reads a leading " as a quoted value and
// a leading { as an array literal. Quoted here, as PostgREST's documentation
// asks: values holding its reserved characters , . : ( ) or a quote or
// backslash, values starting with { or a blank or ending with a blank, and
// the empty value.
func logicValue(v Value) string {
	s := v.Text
	if v.Kind != String {
		return s
	}
	if s == "" || strings.ContainsAny(s, ",.:()\"\\") || s[0] == '{' || s[0] == ' ' || s[0] == '\t' ||
		strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t") {
		return quoteValue(s)
	}
	return s
}

func quoteValue(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// condExpr renders "op.value" for a condition (without the column).
func condExpr(c *Cond, inLogic bool) string {
	var b strings.Builder
	if c.Not {
		b.WriteString("not.")
	}
	b.WriteString(string(c.Op))
	b.WriteByte('.')
	switch c.Op {
	case In:
		b.WriteByte('(')
		for i, v := range c.List {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(listValue(v))
		}
		b.WriteByte(')')
	case Is:
		b.WriteString(c.Value.Text)
	default:
		if inLogic {
			b.WriteString(logicValue(c.Value))
		} else {
			b.WriteString(c.Value.Text)
		}
	}
	return b.String()
}

// logicTree renders a group's items as a PostgREST logic tree body.
func logicTree(g Group) string {
	var b strings.Builder
	for i, n := range g.Items {
		if i > 0 {
			b.WriteByte(',')
		}
		if n.Cond != nil {
			b.WriteString(n.Cond.Column)
			b.WriteByte('.')
			b.WriteString(condExpr(n.Cond, true))
			continue
		}
		if n.Group.Or {
			b.WriteString("or(")
		} else {
			b.WriteString("and(")
		}
		b.WriteString(logicTree(*n.Group))
		b.WriteByte(')')
	}
	return b.String()
}

// filterParams renders the top-level AND group: each condition as
// column=op.value, each nested group as or=(…) / and=(…).
func filterParams(g Group) []Param {
	var out []Param
	var reserved Group
	for _, n := range g.Items {
		switch {
		case n.Cond != nil && reservedKeys[n.Cond.Column]:
			reserved.Items = append(reserved.Items, n)
		case n.Cond != nil:
			out = append(out, Param{n.Cond.Column, condExpr(n.Cond, false)})
		case n.Group.Or:
			out = append(out, Param{"or", "(" + logicTree(*n.Group) + ")"})
		default:
			out = append(out, Param{"and", "(" + logicTree(*n.Group) + ")"})
		}
	}
	if !reserved.Empty() {
		out = append(out, Param{"and", "(" + logicTree(reserved) + ")"})
	}
	return out
}

func orderParam(os []Order) string {
	var b strings.Builder
	for i, o := range os {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(o.Column)
		if o.Desc {
			b.WriteString(".desc")
		} else {
			b.WriteString(".asc")
		}
		if o.Nulls != "" {
			b.WriteString(".nulls" + o.Nulls)
		}
	}
	return b.String()
}

func path(table string) string { return "/" + table }

func profile(h map[string]string, method, schema string) {
	if schema == "" {
		return
	}
	if method == "GET" || method == "HEAD" {
		h["Accept-Profile"] = schema
	} else {
		h["Content-Profile"] = schema
	}
}

// prefer joins Prefer values the way a Headers object joins repeated ones.
func prefer(h map[string]string, parts ...string) {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	if len(keep) > 0 {
		h["Prefer"] = strings.Join(keep, ", ")
	}
}

// PostgRESTSelect renders a read. One row more than Limit is asked for.
func PostgRESTSelect(q *Select) *Request {
	r := &Request{Method: "GET", Path: path(q.Table), Headers: map[string]string{}}
	r.Query = append(r.Query, Param{"select", SelectString(q.Items)})
	r.Query = append(r.Query, filterParams(q.Where)...)
	if len(q.Order) > 0 {
		r.Query = append(r.Query, Param{"order", orderParam(q.Order)})
	}
	// With an offset, offset comes first, as Supabase's client writes a
	// range; the order means nothing to PostgREST.
	if q.Offset > 0 {
		r.Query = append(r.Query, Param{"offset", strconv.Itoa(q.Offset)})
	}
	if q.Limit > 0 {
		r.Query = append(r.Query, Param{"limit", strconv.Itoa(q.Limit + 1)})
	}
	if q.Count {
		prefer(r.Headers, "count=exact")
	}
	profile(r.Headers, r.Method, q.Schema)
	return r
}

func bodyOf(rows []Row) json.RawMessage {
	if len(rows) == 1 {
		return rows[0].JSON()
	}
	b := []byte{'['}
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.JSON()...)
	}
	return append(b, ']')
}

// PostgRESTInsert renders an insert or upsert that returns the rows. A
// column missing from a row takes its default (Prefer: missing=default).
func PostgRESTInsert(q *Insert) (*Request, error) {
	if len(q.Rows) == 0 {
		return nil, mcperr.Invalid("data", nil, "at least one row", "nothing to insert")
	}
	r := &Request{Method: "POST", Path: path(q.Table), Headers: map[string]string{"Content-Type": "application/json"}}
	resolution := ""
	if len(q.OnConflict) > 0 {
		resolution = "resolution=merge-duplicates"
		if q.IgnoreDuplicates {
			resolution = "resolution=ignore-duplicates"
		}
		r.Query = append(r.Query, Param{"on_conflict", strings.Join(q.OnConflict, ",")})
	}
	if len(q.Rows) > 1 {
		cols := Columns(q.Rows)
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = `"` + c + `"`
		}
		r.Query = append(r.Query, Param{"columns", strings.Join(quoted, ",")})
	}
	r.Query = append(r.Query, Param{"select", SelectString(q.Returning)})
	prefer(r.Headers, resolution, "missing=default", "return=representation")
	profile(r.Headers, r.Method, q.Schema)
	r.Body = bodyOf(q.Rows)
	return r, nil
}

// PostgRESTUpdate renders an update that returns the rows and that
// PostgREST refuses, and rolls back, past MaxAffected rows.
func PostgRESTUpdate(q *Update) (*Request, error) {
	if err := RequireFilter(q.Where); err != nil {
		return nil, err
	}
	r := guarded("PATCH", q.Schema, q.Table, q.Where, q.Returning, q.MaxAffected)
	r.Body = q.Set.JSON()
	return r, nil
}

// PostgRESTDelete renders a delete, with the same guard.
func PostgRESTDelete(q *Delete) (*Request, error) {
	if err := RequireFilter(q.Where); err != nil {
		return nil, err
	}
	return guarded("DELETE", q.Schema, q.Table, q.Where, q.Returning, q.MaxAffected), nil
}

// guarded is the request of an update or delete: the rows where selects,
// returned, and refused past most rows.
func guarded(method, schema, table string, where Group, returning []Item, most int) *Request {
	r := &Request{Method: method, Path: path(table), Headers: map[string]string{"Content-Type": "application/json"}}
	r.Query = append(r.Query, filterParams(where)...)
	r.Query = append(r.Query, Param{"select", SelectString(returning)})
	prefer(r.Headers, "return=representation", "handling=strict", maxAffected(most))
	profile(r.Headers, r.Method, schema)
	return r
}

func maxAffected(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("max-affected=%d", n)
}

// PostgRESTCall renders a function call with named arguments in the body.
func PostgRESTCall(q *Call) *Request {
	r := &Request{Method: "POST", Path: "/rpc/" + q.Function, Headers: map[string]string{"Content-Type": "application/json"}}
	profile(r.Headers, r.Method, q.Schema)
	r.Body = q.Args.JSON()
	return r
}
