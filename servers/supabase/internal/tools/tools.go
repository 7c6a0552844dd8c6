// Package tools defines the Supabase server's tools: reads, inserts,
// updates, deletes and function calls on the agents' workflow state, and
// table discovery. Each tool's definition sits beside its handler; all of
// them run on one backend.Backend (PostgREST, PostgreSQL or the embedded
// database) under the operator's policy.
package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// Deps is what the tools need.
type Deps struct {
	Backend backend.Backend
	Policy  *backend.Policy
	Limits  query.Limits
	// Timeout is the backend's per-call time limit; the tools allow a
	// little more, so the backend's own clearer error comes first.
	Timeout time.Duration
}

// All returns every tool.
func All(d Deps) []kit.Tool {
	if d.Timeout <= 0 {
		d.Timeout = 30 * time.Second
	}
	return []kit.Tool{queryTool(d), insertTool(d), updateTool(d), deleteTool(d), rpcTool(d), listTablesTool(d), describeTableTool(d)}
}

func (d Deps) vars() schema.Vars {
	return schema.Vars{"defaultLimit": d.Limits.DefaultLimit, "maxLimit": d.Limits.MaxLimit, "maxRows": d.Limits.MaxRows,
		"maxAffected": d.Limits.MaxAffected, "maxConditions": d.Limits.MaxConditions, "maxIn": d.Limits.MaxInValues}
}

// text replaces {name} in a description with the limit of that name.
func (d Deps) text(s string) string {
	var pairs []string
	for k, v := range d.vars() {
		pairs = append(pairs, "{"+k+"}", fmt.Sprint(v))
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

func (d Deps) timeout() time.Duration { return d.Timeout + 10*time.Second }

// tool completes def with what every tool of the server shares: the limits
// its schema and description name, whether the database is another
// service's, and the time limit of a call.
func (d Deps) tool(def kit.Tool) kit.Tool {
	def.Vars, def.OpenWorld, def.Timeout = d.vars(), d.openWorld(), d.timeout()
	return def
}

func (d Deps) openWorld() bool { return d.Backend.Kind() != "embedded" }

func (d Deps) backendLine() string {
	switch d.Backend.Kind() {
	case "postgrest":
		return "Backend: the Supabase REST API (PostgREST)."
	case "postgres":
		return "Backend: PostgreSQL (DATABASE_URL)."
	}
	return "Backend: the embedded database (no Supabase project or DATABASE_URL is configured)."
}

// target resolves and checks a call's schema and table.
func (d Deps) target(schemaArg, table string) (string, error) {
	s, err := d.Policy.Schema(schemaArg)
	if err != nil {
		return "", err
	}
	if err := query.CheckIdent("table", "table", table); err != nil {
		return "", err
	}
	return s, d.Policy.Table("table", s, table)
}

// embedsAllowed checks the related tables of a select list.
func (d Deps) embedsAllowed(schema string, items []query.Item) error {
	for _, it := range items {
		if it.Embed != nil {
			if err := d.Policy.Table("select", schema, it.Embed.Relation); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowsResult is the result of a tool that returns a table's rows.
type rowsResult struct {
	Table string `json:"table"`
	// Rows are the rows as JSON objects, data from the database.
	Rows     []json.RawMessage `json:"rows"`
	RowCount int               `json:"row_count"`
	Count    *int64            `json:"count,omitempty"`
	// Truncated: more rows match (a read), or the result shows only the
	// first rows the call wrote (a write).
	Truncated  bool `json:"truncated,omitempty"`
	NextOffset *int `json:"next_offset,omitempty"`
}

// AppendJSON encodes the result with its rows as the database encoded them:
// encoding/json would scan every row again to compact it, a quarter of a
// 100-row query's time. The kit checks what it appends against the tool's
// outputSchema. TestRowsResultAppendsWhatJSONMarshals holds it to
// json.Marshal's output.
func (r rowsResult) AppendJSON(dst []byte) ([]byte, error) {
	table, err := json.Marshal(r.Table)
	if err != nil {
		return nil, err
	}
	size := len(table) + 128
	for _, row := range r.Rows {
		size += len(row) + 1
	}
	dst = slices.Grow(dst, size)
	dst = append(append(dst, `{"table":`...), table...)
	if r.Rows == nil {
		dst = append(dst, `,"rows":null`...)
	} else {
		dst = append(dst, `,"rows":[`...)
		for i, row := range r.Rows {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, row...)
		}
		dst = append(dst, ']')
	}
	dst = strconv.AppendInt(append(dst, `,"row_count":`...), int64(r.RowCount), 10)
	if r.Count != nil {
		dst = strconv.AppendInt(append(dst, `,"count":`...), *r.Count, 10)
	}
	if r.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	if r.NextOffset != nil {
		dst = strconv.AppendInt(append(dst, `,"next_offset":`...), int64(*r.NextOffset), 10)
	}
	return append(dst, '}'), nil
}

// fitRows keeps the rows, from the first, that fit room (kit.FitItems
// measures each as the backend encoded it); fit is false when some were
// left out.
func fitRows(rows []json.RawMessage, room int) ([]json.RawMessage, bool, error) {
	if rows == nil {
		rows = []json.RawMessage{}
	}
	if maxCost(rows) <= room {
		return rows, true, nil
	}
	n, err := kit.FitItems(rows, room)
	if err != nil {
		return nil, false, err
	}
	return rows[:n], n == len(rows), nil
}

// maxCost bounds what kit.FitItems would count for rows: a byte of JSON
// costs at most 3 (itself in structuredContent, and escaped in the text),
// so rows well within the budget, the common case, are not scanned byte by
// byte.
func maxCost(rows []json.RawMessage) int {
	n := 4
	for _, r := range rows {
		n += 3*len(r) + 2
	}
	return n
}

// tooWide is the error for a first row that alone exceeds the result
// budget: no page size can help, fewer columns can.
func tooWide(room int) error {
	return mcperr.Invalid("select", nil, "fewer or smaller columns",
		"one row is larger than this server's result budget (%d bytes): select fewer columns", room)
}

// source names where a result's rows come from. Built by concatenation:
// it runs on every read, where fmt's reflection showed in profiles.
func source(schema, name string) string { return "rows of " + schema + "." + name }

// selectItems parses a select argument (default *).
func selectItems(s string) ([]query.Item, error) { return query.ParseSelect("select", s) }

// The arguments that carry values (filters, rows, function arguments) are
// lists of name/value items whose values are scalars: every LLM host
// accepts that schema, where an object open to any column is refused. json
// and jsonb values travel as JSON text (cell.JSON).

// condition is one filter condition.
type condition struct {
	Column string            `json:"column" jsonschema:"column to test" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Op     string            `json:"op" jsonschema:"operator: eq, neq, gt, gte, lt, lte; like and ilike (case-insensitive) take a pattern, % or * any text, _ one character; in matches any of values; is compares with null, true or false" mcp:"enum=eq|neq|gt|gte|lt|lte|like|ilike|in|is"`
	Value  json.RawMessage   `json:"value,omitempty" jsonschema:"what the column is compared with (every op but in)" mcp:"type=string|number|integer|boolean|null"`
	Values []json.RawMessage `json:"values,omitempty" jsonschema:"for op in: the values to match, at most {maxIn}" mcp:"itemType=string|number|integer|boolean,maxItems={maxIn}"`
	Not    bool              `json:"not,omitempty" jsonschema:"negate the condition, e.g. op in with not: none of values"`
}

// cell is one column's value in a row to write.
type cell struct {
	Column string          `json:"column" jsonschema:"column name" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Value  json.RawMessage `json:"value,omitempty" jsonschema:"the value; timestamps as ISO 8601 strings" mcp:"type=string|number|integer|boolean|null"`
	JSON   string          `json:"json,omitempty" jsonschema:"for a json or jsonb column instead of value: the value as JSON text, e.g. {\"max_budget\": 60000}" mcp:"maxLength=1000000"`
}

// orderTerm is one ordering term.
type orderTerm struct {
	Column    string `json:"column" jsonschema:"column to sort by" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Direction string `json:"direction,omitempty" jsonschema:"asc (the default) or desc" mcp:"enum=asc|desc"`
	Nulls     string `json:"nulls,omitempty" jsonschema:"where nulls go: first or last (default: last ascending, first descending)" mcp:"enum=first|last"`
}

const filtersHelp = "filters: conditions all rows must meet, each {column, op, value} (op in: values; not: true negates); " +
	"or: groups of conditions of which at least one must hold as a whole."

// where builds the conditions of filters and or: every condition of
// filters, and at least one group of or (all of its conditions).
func (d Deps) where(filters []condition, or [][]condition) (query.Group, error) {
	n := 0
	build := func(field string, list []condition) ([]query.Node, error) {
		var out []query.Node
		for i, f := range list {
			at := field + "." + strconv.Itoa(i)
			if n++; n > d.Limits.MaxConditions {
				return nil, mcperr.Invalid(at, nil, fmt.Sprintf("at most %d conditions", d.Limits.MaxConditions), "too many filter conditions")
			}
			c, err := query.NewCond(at, f.Column, f.Op, f.Not, f.Value, f.Values, d.Limits)
			if err != nil {
				return nil, err
			}
			out = append(out, query.Node{Cond: c})
		}
		return out, nil
	}
	var g query.Group
	var err error
	if g.Items, err = build("filters", filters); err != nil {
		return query.Group{}, err
	}
	if len(or) == 0 {
		return g, nil
	}
	anyOf := query.Group{Or: true}
	for i, list := range or {
		field := "or." + strconv.Itoa(i)
		if len(list) == 0 {
			return query.Group{}, mcperr.Invalid(field, nil, "at least one condition", "%s is an empty group", field)
		}
		items, err := build(field, list)
		if err != nil {
			return query.Group{}, err
		}
		if len(items) == 1 {
			anyOf.Items = append(anyOf.Items, items[0])
		} else {
			anyOf.Items = append(anyOf.Items, query.Node{Group: &query.Group{Items: items}})
		}
	}
	g.Items = append(g.Items, query.Node{Group: &anyOf})
	return g, nil
}

// order turns orderBy into ordering terms.
func order(terms []orderTerm) []query.Order {
	var out []query.Order
	for _, t := range terms {
		out = append(out, query.Order{Column: t.Column, Desc: t.Direction == "desc", Nulls: t.Nulls})
	}
	return out
}

// row turns the cells of one row into a query.Row: each column once, a
// value or JSON text.
func row(field string, cells []cell) (query.Row, error) {
	var r query.Row
	seen := map[string]bool{}
	for i, c := range cells {
		at := field + "." + strconv.Itoa(i)
		if err := query.CheckIdent(at+".column", "column", c.Column); err != nil {
			return query.Row{}, err
		}
		if seen[c.Column] {
			return query.Row{}, mcperr.Invalid(at+".column", c.Column, "each column once", "%s names column %q twice", field, c.Column)
		}
		seen[c.Column] = true
		v, err := cellValue(at, c.Value, c.JSON)
		if err != nil {
			return query.Row{}, err
		}
		r.Keys = append(r.Keys, c.Column)
		r.Values = append(r.Values, v)
	}
	return r, nil
}

// cellValue is a written value: value, or the JSON text in json (for json
// and jsonb columns and arguments), checked to be one JSON value.
func cellValue(at string, value json.RawMessage, text string) (json.RawMessage, error) {
	if text == "" {
		if value == nil {
			return nil, mcperr.Invalid(at+".value", nil, "value or json", "%s has neither value nor json (use value null for NULL)", at)
		}
		return value, nil
	}
	if value != nil && string(value) != "null" {
		return nil, mcperr.Invalid(at+".json", nil, "value or json, not both", "%s gives both value and json", at)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return nil, mcperr.Invalid(at+".json", nil, "JSON text, e.g. {\"a\": 1} or [1, 2]", "%s.json is not valid JSON: %v", at, err)
	}
	return b.Bytes(), nil
}
