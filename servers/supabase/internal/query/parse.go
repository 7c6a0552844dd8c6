package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Limits bound what one call may ask for.
type Limits struct {
	// DefaultLimit is the rows a read returns when it names no limit;
	// MaxLimit the most it may ask for.
	DefaultLimit, MaxLimit int
	// MaxRows caps the rows of one insert.
	MaxRows int
	// MaxConditions caps the conditions of one filter, MaxInValues the values
	// of one "in" list, MaxDepth the nesting of or/and groups.
	MaxConditions, MaxInValues, MaxDepth int
	// MaxAffected refuses an update or delete that would change more rows.
	MaxAffected int
}

// DefaultLimits are the limits when none are configured.
func DefaultLimits() Limits {
	return Limits{DefaultLimit: 100, MaxLimit: 1000, MaxRows: 500, MaxConditions: 50, MaxInValues: 500, MaxDepth: 4, MaxAffected: 100}
}

// ParseObject decodes a JSON object keeping its keys in order. Duplicate
// keys are refused: which one a database would keep is not defined.
func ParseObject(field string, raw json.RawMessage) (Row, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return Row{}, mcperr.Invalid(field, nil, "a JSON object", "%s must be a JSON object", field)
	}
	var row Row
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Row{}, mcperr.Invalid(field, nil, "a JSON object", "%s is not valid JSON", field)
		}
		key := tok.(string)
		if seen[key] {
			return Row{}, mcperr.Invalid(field, key, "each key once", "%s names %q twice", field, key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return Row{}, mcperr.Invalid(field, nil, "a JSON object", "%s is not valid JSON", field)
		}
		row.Keys = append(row.Keys, key)
		row.Values = append(row.Values, v)
	}
	if _, err := dec.Token(); err != nil {
		return Row{}, mcperr.Invalid(field, nil, "a JSON object", "%s is not valid JSON", field)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Row{}, mcperr.Invalid(field, nil, "a JSON object", "%s holds more than one JSON value", field)
	}
	return row, nil
}

// jsonKind returns the first byte class of a JSON value.
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; {
	case c == '"', c == '{', c == '[', c == 't', c == 'f', c == 'n':
		return c
	default:
		return '0'
	}
}

// scalar turns a JSON value into a Value; objects and arrays are refused.
func scalar(field string, raw json.RawMessage) (Value, error) {
	switch jsonKind(raw) {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return Value{}, mcperr.Invalid(field, nil, "a string", "%s is not a valid JSON string", field)
		}
		return Value{Kind: String, Text: s}, nil
	case '0':
		return Value{Kind: Number, Text: string(bytes.TrimSpace(raw))}, nil
	case 't':
		return Value{Kind: Bool, Text: "true"}, nil
	case 'f':
		return Value{Kind: Bool, Text: "false"}, nil
	case 'n':
		return Value{Kind: Null, Text: "null"}, nil
	}
	return Value{}, mcperr.Invalid(field, nil, "a string, number or boolean",
		"%s must be a string, number or boolean, not an object or array", field)
}

var ops = map[string]Op{"eq": Eq, "neq": Neq, "gt": Gt, "gte": Gte, "lt": Lt, "lte": Lte,
	"like": Like, "ilike": ILike, "in": In, "is": Is}

const opList = "eq, neq, gt, gte, lt, lte, like, ilike, in, is, not"

type filterParser struct {
	lim   Limits
	conds int
}

// ParseFilters reads the object form of the filter language, as
// supabase-js builds it: an object whose keys are columns (a value means
// equality, null means "is null", an object of operators means each of
// them) or "or"/"and" (an array of such objects). Empty or absent filters
// give an empty group. The tools take typed conditions instead (NewCond),
// which every LLM host accepts; this form replays supabase-js's requests
// in the PostgREST client's tests.
func ParseFilters(field string, raw json.RawMessage, lim Limits) (Group, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Group{}, nil
	}
	p := &filterParser{lim: lim}
	return p.object(field, raw, 1)
}

func (p *filterParser) object(field string, raw json.RawMessage, depth int) (Group, error) {
	if depth > p.lim.MaxDepth {
		return Group{}, mcperr.Invalid(field, nil, fmt.Sprintf("or/and groups nested at most %d deep", p.lim.MaxDepth),
			"%s nests or/and groups too deeply", field)
	}
	obj, err := ParseObject(field, raw)
	if err != nil {
		return Group{}, err
	}
	var g Group
	for i, key := range obj.Keys {
		val := obj.Values[i]
		where := field + "." + key
		switch key {
		case "or", "and":
			sub, err := p.list(where, val, key == "or", depth)
			if err != nil {
				return Group{}, err
			}
			g.Items = append(g.Items, Node{Group: &sub})
			continue
		}
		if err := CheckIdent(where, "column", key); err != nil {
			return Group{}, err
		}
		conds, err := p.column(where, key, val)
		if err != nil {
			return Group{}, err
		}
		for _, c := range conds {
			g.Items = append(g.Items, Node{Cond: c})
		}
	}
	return g, nil
}

func (p *filterParser) list(field string, raw json.RawMessage, or bool, depth int) (Group, error) {
	var elems []json.RawMessage
	if jsonKind(raw) != '[' || json.Unmarshal(raw, &elems) != nil || len(elems) == 0 {
		return Group{}, mcperr.Invalid(field, nil, "a non-empty array of filter objects",
			`%s must be a non-empty array of filter objects, e.g. [{"state": "FAILED"}, {"retry_count": {"gte": 3}}]`, field)
	}
	g := Group{Or: or}
	for i, e := range elems {
		sub, err := p.object(fmt.Sprintf("%s[%d]", field, i), e, depth+1)
		if err != nil {
			return Group{}, err
		}
		if sub.Empty() {
			return Group{}, mcperr.Invalid(field, nil, "filter objects with at least one condition", "%s[%d] is empty", field, i)
		}
		if len(sub.Items) == 1 {
			g.Items = append(g.Items, sub.Items[0])
		} else {
			g.Items = append(g.Items, Node{Group: &sub})
		}
	}
	return g, nil
}

func (p *filterParser) count(field string) error {
	p.conds++
	if p.conds > p.lim.MaxConditions {
		return mcperr.Invalid(field, nil, fmt.Sprintf("at most %d conditions", p.lim.MaxConditions), "too many filter conditions")
	}
	return nil
}

func (p *filterParser) column(field, col string, raw json.RawMessage) ([]*Cond, error) {
	switch jsonKind(raw) {
	case '[':
		return nil, mcperr.Invalid(field, nil, `a value, null, or an object of operators`,
			`%s: to match any of several values use {"in": [...]}`, field)
	case '{':
	default:
		if err := p.count(field); err != nil {
			return nil, err
		}
		v, err := scalar(field, raw)
		if err != nil {
			return nil, err
		}
		if v.Kind == Null {
			return []*Cond{{Column: col, Op: Is, Value: Value{Kind: Null, Text: "null"}}}, nil
		}
		return []*Cond{{Column: col, Op: Eq, Value: v}}, nil
	}
	obj, err := ParseObject(field, raw)
	if err != nil {
		return nil, err
	}
	if len(obj.Keys) == 0 {
		return nil, mcperr.Invalid(field, nil, "at least one operator ("+opList+")", "%s has no operator", field)
	}
	var out []*Cond
	for i, name := range obj.Keys {
		where := field + "." + name
		if err := p.count(where); err != nil {
			return nil, err
		}
		not := false
		val := obj.Values[i]
		if name == "not" {
			inner, err := ParseObject(where, val)
			if err != nil || len(inner.Keys) != 1 || inner.Keys[0] == "not" {
				return nil, mcperr.Invalid(where, nil, `exactly one operator, e.g. {"not": {"in": ["a", "b"]}}`,
					"%s must hold exactly one operator (%s)", where, strings.TrimSuffix(opList, ", not"))
			}
			not, name, val = true, inner.Keys[0], inner.Values[0]
			where += "." + name
		}
		op, ok := ops[name]
		if !ok {
			return nil, mcperr.Invalid(where, name, opList, "unknown filter operator %q (operators: %s)", name, opList)
		}
		c, err := p.cond(where, col, op, val)
		if err != nil {
			return nil, err
		}
		c.Not = not
		out = append(out, c)
	}
	return out, nil
}

// NewCond builds one condition from typed arguments: the operator's name,
// value for every operator but in, and list for in. field names the
// condition in errors (e.g. filters[2]); counting conditions against
// MaxConditions is the caller's.
func NewCond(field, col, op string, not bool, value json.RawMessage, list []json.RawMessage, lim Limits) (*Cond, error) {
	if err := CheckIdent(field+".column", "column", col); err != nil {
		return nil, err
	}
	o, ok := ops[op]
	if !ok {
		return nil, mcperr.Invalid(field+".op", op, strings.TrimSuffix(opList, ", not"), "%s.op: unknown filter operator %q (operators: %s)",
			field, op, strings.TrimSuffix(opList, ", not"))
	}
	p := &filterParser{lim: lim}
	var c *Cond
	var err error
	if o == In {
		if value != nil && string(value) != "null" {
			return nil, mcperr.Invalid(field+".value", nil, "values", "%s: op in takes its values in values, not value", field)
		}
		raw, _ := json.Marshal(list)
		c, err = p.cond(field+".values", col, o, raw)
	} else {
		if len(list) > 0 {
			return nil, mcperr.Invalid(field+".values", nil, "value", "%s: values is for op in only; op %s compares with value", field, op)
		}
		if value == nil {
			return nil, mcperr.Invalid(field+".value", nil, "a value", "%s: op %s needs a value", field, op)
		}
		c, err = p.cond(field+".value", col, o, value)
	}
	if err != nil {
		return nil, err
	}
	c.Not = not
	return c, nil
}

func (p *filterParser) cond(field, col string, op Op, raw json.RawMessage) (*Cond, error) {
	c := &Cond{Column: col, Op: op}
	switch op {
	case In:
		var elems []json.RawMessage
		if jsonKind(raw) != '[' || json.Unmarshal(raw, &elems) != nil || len(elems) == 0 {
			return nil, mcperr.Invalid(field, nil, "a non-empty array of values", "%s needs a non-empty array of values", field)
		}
		if len(elems) > p.lim.MaxInValues {
			return nil, mcperr.Invalid(field, nil, fmt.Sprintf("at most %d values", p.lim.MaxInValues), "%s has too many values", field)
		}
		seen := map[Value]bool{}
		for i, e := range elems {
			v, err := scalar(fmt.Sprintf("%s[%d]", field, i), e)
			if err != nil {
				return nil, err
			}
			if v.Kind == Null {
				return nil, mcperr.Invalid(field, nil, "values other than null", `%s: null never matches in a list; compare with null by is`, field)
			}
			// A repeated value changes nothing; PostgREST's own client drops
			// repeats too.
			if !seen[v] {
				seen[v] = true
				c.List = append(c.List, v)
			}
		}
		return c, nil
	case Is:
		v, err := scalar(field, raw)
		if err != nil {
			return nil, err
		}
		t := strings.ToLower(v.Text)
		if (v.Kind == String && (t == "null" || t == "true" || t == "false" || t == "unknown")) || v.Kind == Null || v.Kind == Bool {
			c.Value = Value{Kind: Null, Text: t}
			return c, nil
		}
		return nil, mcperr.Invalid(field, v.Text, "null, true, false or \"unknown\"", "%s: is compares with null, true, false or unknown only", field)
	}
	v, err := scalar(field, raw)
	if err != nil {
		return nil, err
	}
	if v.Kind == Null {
		return nil, mcperr.Invalid(field, nil, "a string, number or boolean", `%s: nothing equals null; compare with null by is`, field)
	}
	if (op == Like || op == ILike) && v.Kind != String {
		return nil, mcperr.Invalid(field, v.Text, "a string pattern", "%s needs a string pattern (%% or * for any text, _ for one character)", field)
	}
	c.Value = v
	return c, nil
}

// ParseSelect reads a select list: "*" or columns separated by commas, and
// related tables as name(columns). Whitespace is ignored.
func ParseSelect(field, s string) ([]Item, error) {
	s = strings.Join(strings.Fields(s), "")
	if s == "" {
		return []Item{{Star: true}}, nil
	}
	items, rest, err := parseItems(field, s, 0)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, mcperr.Invalid(field, s, "columns separated by commas, * and related(columns)", "%s: unexpected %q", field, rest)
	}
	return items, nil
}

func parseItems(field, s string, depth int) ([]Item, string, error) {
	var items []Item
	for {
		end := strings.IndexAny(s, ",()")
		if end < 0 {
			end = len(s)
		}
		name := s[:end]
		s = s[end:]
		switch {
		case name == "*":
			items = append(items, Item{Star: true})
		case strings.HasPrefix(s, "("):
			if err := CheckIdent(field, "related table", name); err != nil {
				return nil, "", err
			}
			if depth > 0 {
				return nil, "", mcperr.Invalid(field, name, "related tables one level deep", "%s: related tables nest one level only", field)
			}
			sub, rest, err := parseItems(field, s[1:], depth+1)
			if err != nil {
				return nil, "", err
			}
			if !strings.HasPrefix(rest, ")") {
				return nil, "", mcperr.Invalid(field, nil, "a closing parenthesis", "%s: %s( is not closed", field, name)
			}
			items = append(items, Item{Embed: &Embed{Relation: name, Items: sub}})
			s = rest[1:]
		default:
			if err := CheckIdent(field, "column", name); err != nil {
				return nil, "", err
			}
			items = append(items, Item{Column: name})
		}
		if len(items) > 200 {
			return nil, "", mcperr.Invalid(field, nil, "at most 200 items", "%s names too many columns", field)
		}
		if !strings.HasPrefix(s, ",") {
			return items, s, nil
		}
		s = s[1:]
	}
}

// SelectString renders a select list the way PostgREST reads it.
func SelectString(items []Item) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case it.Star:
			b.WriteByte('*')
		case it.Embed != nil:
			b.WriteString(it.Embed.Relation)
			b.WriteByte('(')
			b.WriteString(SelectString(it.Embed.Items))
			b.WriteByte(')')
		default:
			b.WriteString(it.Column)
		}
	}
	return b.String()
}

// ColumnsOnly refuses related tables in a select list (the rows a write
// returns are the written table's own).
func ColumnsOnly(field string, items []Item) error {
	for _, it := range items {
		if it.Embed != nil {
			return mcperr.Invalid(field, it.Embed.Relation, "columns of the written table or *",
				"%s: the rows a write returns cannot embed related tables; read them with supabase_query", field)
		}
	}
	return nil
}

// ParseOrder reads {column, ascending, nullsFirst} or a list of them.
func ParseOrder(field string, raw json.RawMessage) ([]Order, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var terms []json.RawMessage
	switch jsonKind(raw) {
	case '{':
		terms = []json.RawMessage{raw}
	case '[':
		if err := json.Unmarshal(raw, &terms); err != nil {
			return nil, mcperr.Invalid(field, nil, "an array of {column, ascending}", "%s is not valid JSON", field)
		}
	default:
		return nil, mcperr.Invalid(field, nil, `{"column": "...", "ascending": true} or a list of them`, "%s must be an object or a list of objects", field)
	}
	if len(terms) > 10 {
		return nil, mcperr.Invalid(field, nil, "at most 10 terms", "%s has too many terms", field)
	}
	var out []Order
	for i, t := range terms {
		where := fmt.Sprintf("%s[%d]", field, i)
		if len(terms) == 1 && jsonKind(raw) == '{' {
			where = field
		}
		var o struct {
			Column     *string `json:"column"`
			Ascending  *bool   `json:"ascending"`
			NullsFirst *bool   `json:"nullsFirst"`
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if jsonKind(t) != '{' || dec.Decode(&o) != nil || o.Column == nil {
			return nil, mcperr.Invalid(where, nil, `{"column": "...", "ascending": true, "nullsFirst": false}`,
				"%s must be an object with column, and optionally ascending and nullsFirst", where)
		}
		if err := CheckIdent(where+".column", "column", *o.Column); err != nil {
			return nil, err
		}
		ord := Order{Column: *o.Column, Desc: o.Ascending != nil && !*o.Ascending}
		if o.NullsFirst != nil {
			ord.Nulls = "last"
			if *o.NullsFirst {
				ord.Nulls = "first"
			}
		}
		out = append(out, ord)
	}
	return out, nil
}

// ParseRows reads one object or a non-empty array of objects.
func ParseRows(field string, raw json.RawMessage, lim Limits) ([]Row, error) {
	switch jsonKind(raw) {
	case '{':
		r, err := ParseObject(field, raw)
		if err != nil {
			return nil, err
		}
		if len(r.Keys) == 0 {
			return nil, mcperr.Invalid(field, nil, "at least one column", "%s names no column", field)
		}
		return []Row{r}, checkRowKeys(field, r)
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil || len(elems) == 0 {
			return nil, mcperr.Invalid(field, nil, "a non-empty array of objects", "%s must be an object or a non-empty array of objects", field)
		}
		if len(elems) > lim.MaxRows {
			return nil, mcperr.Invalid(field, len(elems), fmt.Sprintf("at most %d rows", lim.MaxRows), "%s holds %d rows; insert at most %d at once", field, len(elems), lim.MaxRows)
		}
		rows := make([]Row, len(elems))
		for i, e := range elems {
			where := fmt.Sprintf("%s[%d]", field, i)
			if jsonKind(e) != '{' {
				return nil, mcperr.Invalid(where, nil, "an object", "%s must be an object", where)
			}
			r, err := ParseObject(where, e)
			if err != nil {
				return nil, err
			}
			if len(r.Keys) == 0 {
				return nil, mcperr.Invalid(where, nil, "at least one column", "%s names no column", where)
			}
			if err := checkRowKeys(where, r); err != nil {
				return nil, err
			}
			rows[i] = r
		}
		return rows, nil
	}
	return nil, mcperr.Invalid(field, nil, "an object or an array of objects", "%s must be an object (one row) or an array of objects", field)
}

func checkRowKeys(field string, r Row) error {
	for _, k := range r.Keys {
		if err := CheckIdent(field+"."+k, "column", k); err != nil {
			return err
		}
	}
	return nil
}

// Columns returns the union of the rows' keys, in order of first appearance.
func Columns(rows []Row) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range r.Keys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// SameKeys reports whether every row names the same set of columns.
func SameKeys(rows []Row) bool {
	if len(rows) == 0 {
		return true
	}
	first := map[string]bool{}
	for _, k := range rows[0].Keys {
		first[k] = true
	}
	for _, r := range rows[1:] {
		if len(r.Keys) != len(first) {
			return false
		}
		for _, k := range r.Keys {
			if !first[k] {
				return false
			}
		}
	}
	return true
}
