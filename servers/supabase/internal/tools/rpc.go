package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

type rpcArgs struct {
	Function string          `json:"function" jsonschema:"function to call, e.g. calculate_quote_scores" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Schema   string          `json:"schema,omitempty" jsonschema:"schema of the function (default: the first exposed schema)" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Params   json.RawMessage `json:"params,omitempty" jsonschema:"named arguments: an object of argument name: value (objects and arrays for json/jsonb arguments)"`
	Limit    int             `json:"limit,omitempty" jsonschema:"rows to return from a function that returns rows (default {defaultLimit}, at most {maxLimit})" mcp:"min=1,max={maxLimit}"`
}

func rpcTool(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "supabase_rpc",
		Title: "Call a database function",
		Description: d.text("Call a function of the exposed schemas (" + strings.Join(d.Policy.Schemas, ", ") + ") with named arguments and " +
			"return its rows (a function returning a set or a table) or its value. Only the application's own functions can be called: " +
			"never the database's system functions (pg_*), functions of extensions, or anything outside the exposed schemas. " +
			"A function may change data. Example: function calculate_quote_scores with params {\"quotes\": [{\"id\": \"quote-456\", " +
			"\"total_price_usd\": 48200, \"safety_rating\": 4.6, \"comfort_rating\": 4.4, \"flight_time_minutes\": 165}], " +
			"\"client_preferences\": {\"max_budget\": 60000}, \"weights\": {\"price\": 0.30, \"safety\": 0.35, \"speed\": 0.15, \"comfort\": 0.20}} " +
			"returns each quote's price, safety, speed, comfort and total scores (0-100) and its rank; safety_rating may instead be a " +
			"certification (ARGUS Platinum, Gold+, Gold, Silver; Wyvern Wingman; IS-BAO Stage 1-3). " + d.backendLine()),
		InputSchema: schema.MustFor[rpcArgs](d.vars()),
		Effect:      kit.Destructive,
		OpenWorld:   d.openWorld(),
		Timeout:     d.timeout(),
		AuditOmit:   []string{"params"},
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a rpcArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			s, err := d.Policy.Schema(a.Schema)
			if err != nil {
				return nil, err
			}
			if err := query.CheckIdent("function", "function", a.Function); err != nil {
				return nil, err
			}
			if err := d.Policy.Function(s, a.Function); err != nil {
				return nil, err
			}
			q := &query.Call{Schema: s, Function: a.Function, Limit: a.Limit}
			if q.Limit == 0 {
				q.Limit = d.Limits.DefaultLimit
			}
			if len(a.Params) > 0 && string(a.Params) != "null" {
				if q.Args, err = query.ParseObject("params", a.Params); err != nil {
					return nil, err
				}
				for _, k := range q.Args.Keys {
					if err := query.CheckIdent("params."+k, "argument", k); err != nil {
						return nil, err
					}
				}
			}
			res, err := d.Backend.Call(ctx, q)
			if err != nil {
				return nil, err
			}
			src := fmt.Sprintf("result of %s.%s", s, a.Function)
			if res.Scalar {
				return fenced(src, struct {
					Function string          `json:"function"`
					Value    json.RawMessage `json:"value"`
				}{a.Function, res.Value}), nil
			}
			return fenced(src, rows{Function: a.Function, Rows: res.Rows, RowCount: res.RowCount, Truncated: res.Truncated}), nil
		},
	}
}

type listArgs struct {
	Schema string `json:"schema,omitempty" jsonschema:"schema to list (default: the first exposed schema)" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
}

// maxListed bounds a listing: it is for a model's context.
const maxListed = 300

func listTablesTool(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "supabase_list_tables",
		Title: "List tables",
		Description: "List the tables and views agents may use, one line each: name, kind, estimated rows, number of columns. " +
			"Then call supabase_describe_table for a table's columns and keys. " + d.backendLine(),
		InputSchema: schema.MustFor[listArgs](d.vars()),
		Effect:      kit.ReadOnly,
		OpenWorld:   d.openWorld(),
		Timeout:     d.timeout(),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a listArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			s, err := d.Policy.Schema(a.Schema)
			if err != nil {
				return nil, err
			}
			list, err := d.Backend.Tables(ctx, s)
			if err != nil {
				return nil, err
			}
			out := struct {
				Schema    string   `json:"schema"`
				Tables    []string `json:"tables"`
				Truncated bool     `json:"truncated,omitempty"`
			}{Schema: s, Tables: []string{}}
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
		},
	}
}

type describeArgs struct {
	Table  string `json:"table" jsonschema:"table or view to describe" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
	Schema string `json:"schema,omitempty" jsonschema:"schema of the table (default: the first exposed schema)" pattern:"^[A-Za-z_][A-Za-z0-9_]{0,62}$"`
}

func describeTableTool(d Deps) kit.Tool {
	return kit.Tool{
		Name:  "supabase_describe_table",
		Title: "Describe a table",
		Description: "Describe a table or view: its columns in order (name, type, nullable, default, position in the primary key), " +
			"primary key, unique columns, foreign keys to other tables and from them (which related tables supabase_query can embed). " +
			d.backendLine(),
		InputSchema: schema.MustFor[describeArgs](d.vars()),
		Effect:      kit.ReadOnly,
		OpenWorld:   d.openWorld(),
		Timeout:     d.timeout(),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a describeArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			s, err := d.target(a.Schema, a.Table)
			if err != nil {
				return nil, err
			}
			t, err := d.Backend.Describe(ctx, s, a.Table)
			if err != nil {
				return nil, err
			}
			if t.Columns == nil {
				t.Columns = []query.Column{}
			}
			// Relations to tables agents may not reach are not shown.
			t.ForeignKeys = keep(d, t.ForeignKeys)
			t.Referenced = keep(d, t.Referenced)
			return t, nil
		},
	}
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
