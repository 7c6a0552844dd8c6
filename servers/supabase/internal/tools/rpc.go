package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

type rpcArgs struct {
	Function string  `json:"function" jsonschema:"function to call, e.g. calculate_quote_scores" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Schema   string  `json:"schema,omitempty" jsonschema:"schema of the function (default: the first exposed schema)" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Params   []param `json:"params,omitempty" jsonschema:"named arguments, each {name, value}, or {name, json} with JSON text for a json or jsonb argument" mcp:"maxItems=100"`
	Limit    int     `json:"limit,omitempty" jsonschema:"rows to return from a function that returns rows (default {defaultLimit}, at most {maxLimit})" mcp:"min=1,max={maxLimit}"`
}

// param is one named argument of a function call.
type param struct {
	Name  string          `json:"name" jsonschema:"argument name" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Value json.RawMessage `json:"value,omitempty" jsonschema:"the value" mcp:"type=string|number|integer|boolean|null"`
	JSON  string          `json:"json,omitempty" jsonschema:"for a json or jsonb argument instead of value: the value as JSON text, e.g. [{\"id\": \"q1\"}]" mcp:"maxLength=1000000"`
}

// callResult is a function's rows (a function returning a set or a
// table) or its value.
type callResult struct {
	Function string `json:"function"`
	// Rows are the rows as JSON objects, data from the database.
	Rows      *[]json.RawMessage `json:"rows,omitempty"`
	RowCount  *int               `json:"row_count,omitempty"`
	Truncated bool               `json:"truncated,omitempty"`
	Value     json.RawMessage    `json:"value,omitempty"`
}

func rpcTool(d Deps) kit.Tool {
	return kit.NewTool(d.tool(kit.Tool{
		Name:  "supabase_rpc",
		Title: "Call a database function",
		Description: d.text("Call a function of the exposed schemas (" + strings.Join(d.Policy.Schemas, ", ") + ") with named arguments " +
			"(params: [{name, value}], or {name, json} with JSON text for json/jsonb) and return its rows (a set or table function; " +
			"truncated when more than limit exist or they would not fit the result) or its value. Only the application's own functions: " +
			"never the database's (pg_*), those of extensions, or any outside the exposed schemas. It may change data. Example: " +
			"calculate_quote_scores with params [{\"name\": \"quotes\", \"json\": \"[{\\\"id\\\": \\\"quote-456\\\", " +
			"\\\"total_price_usd\\\": 48200, \\\"safety_rating\\\": 4.6}]\"}] (optional: client_preferences {max_budget}, " +
			"weights {price, safety, speed, comfort}) returns each quote's price, safety, speed, comfort and total scores (0-100) and " +
			"rank; safety_rating may be a certification (ARGUS Platinum, Gold+, Gold, Silver; Wyvern Wingman; IS-BAO Stage 1-3). " +
			d.backendLine()),
		Paging:    "ask for fewer rows with limit",
		Effect:    kit.Destructive,
		AuditOmit: []string{"params"},
	}), func(ctx context.Context, c *kit.Call, a rpcArgs) (kit.Fenced[callResult], error) {
		var none kit.Fenced[callResult]
		s, err := d.Policy.Schema(a.Schema)
		if err != nil {
			return none, err
		}
		if err := query.CheckIdent("function", "function", a.Function); err != nil {
			return none, err
		}
		if err := d.Policy.Function(s, a.Function); err != nil {
			return none, err
		}
		q := &query.Call{Schema: s, Function: a.Function, Limit: a.Limit}
		if q.Limit == 0 {
			q.Limit = d.Limits.DefaultLimit
		}
		seen := map[string]bool{}
		for i, p := range a.Params {
			at := fmt.Sprintf("params.%d", i)
			if err := query.CheckIdent(at+".name", "argument", p.Name); err != nil {
				return none, err
			}
			if seen[p.Name] {
				return none, mcperr.Invalid(at+".name", p.Name, "each argument once", "params names argument %q twice", p.Name)
			}
			seen[p.Name] = true
			v, err := cellValue(at, p.Value, p.JSON)
			if err != nil {
				return none, err
			}
			q.Args.Keys = append(q.Args.Keys, p.Name)
			q.Args.Values = append(q.Args.Values, v)
		}
		res, err := d.Backend.Call(ctx, q)
		if err != nil {
			return none, err
		}
		out := kit.Fenced[callResult]{Source: fmt.Sprintf("result of %s.%s", s, a.Function), Value: callResult{Function: a.Function}}
		if res.Scalar {
			out.Value.Value = res.Value
			return out, nil
		}
		rows, fit, err := fitRows(res.Rows, c.Room())
		if err != nil {
			return none, err
		}
		if len(rows) == 0 && !fit {
			return none, mcperr.Invalid("function", a.Function, "a function whose rows are smaller",
				"one row of %s is larger than this server's result budget (%d bytes)", a.Function, c.Room())
		}
		n := len(rows)
		out.Value.Rows, out.Value.RowCount, out.Value.Truncated = &rows, &n, res.Truncated || !fit
		return out, nil
	})
}

type listArgs struct {
	Schema string `json:"schema,omitempty" jsonschema:"schema to list (default: the first exposed schema)" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
}

// maxListed bounds a listing: it is for a model's context.
const maxListed = 300

// tableList is the result of supabase_list_tables.
type tableList struct {
	Schema    string   `json:"schema"`
	Tables    []string `json:"tables"`
	Truncated bool     `json:"truncated,omitempty"`
}

func listTablesTool(d Deps) kit.Tool {
	return kit.NewTool(d.tool(kit.Tool{
		Name:  "supabase_list_tables",
		Title: "List tables",
		Description: fmt.Sprintf("List the tables and views agents may use, one line each: name, kind, estimated rows, number of columns "+
			"(at most %d, with truncated when there are more). Then call supabase_describe_table for a table's columns and keys. ", maxListed) +
			d.backendLine(),
		Effect: kit.ReadOnly,
	}), func(ctx context.Context, c *kit.Call, a listArgs) (tableList, error) {
		s, err := d.Policy.Schema(a.Schema)
		if err != nil {
			return tableList{}, err
		}
		list, err := d.Backend.Tables(ctx, s)
		if err != nil {
			return tableList{}, err
		}
		out := tableList{Schema: s, Tables: []string{}}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		for _, t := range list {
			if !d.Policy.TableAllowed(s, t.Name) {
				continue
			}
			if len(out.Tables) == maxListed {
				out.Truncated = true
				break
			}
			rows := "rows unknown"
			if t.RowEstimate >= 0 {
				rows = fmt.Sprintf("~%d rows", t.RowEstimate)
			}
			out.Tables = append(out.Tables, fmt.Sprintf("%s (%s, %s, %d columns)", t.Name, t.Kind, rows, t.Columns))
		}
		return out, nil
	})
}

type describeArgs struct {
	Table  string `json:"table" jsonschema:"table or view to describe" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Schema string `json:"schema,omitempty" jsonschema:"schema of the table (default: the first exposed schema)" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
}

func describeTableTool(d Deps) kit.Tool {
	return kit.NewTool(d.tool(kit.Tool{
		Name:  "supabase_describe_table",
		Title: "Describe a table",
		Description: "Describe a table or view: its columns in order (name, type, nullable, default, position in the primary key), " +
			"primary key, unique columns, foreign keys to other tables and from them (which related tables supabase_query can embed). " +
			d.backendLine(),
		Effect: kit.ReadOnly,
	}), func(ctx context.Context, c *kit.Call, a describeArgs) (query.Table, error) {
		s, err := d.target(a.Schema, a.Table)
		if err != nil {
			return query.Table{}, err
		}
		t, err := d.Backend.Describe(ctx, s, a.Table)
		if err != nil {
			return query.Table{}, err
		}
		if t.Columns == nil {
			t.Columns = []query.Column{}
		}
		// Relations to tables agents may not reach are not shown.
		t.ForeignKeys = keep(d, t.ForeignKeys)
		t.Referenced = keep(d, t.Referenced)
		return *t, nil
	})
}

func keep(d Deps, fks []query.ForeignKey) []query.ForeignKey {
	var out []query.ForeignKey
	for _, fk := range fks {
		if d.Policy.TableAllowed(fk.RefSchema, fk.RefTable) {
			out = append(out, fk)
		}
	}
	return out
}
