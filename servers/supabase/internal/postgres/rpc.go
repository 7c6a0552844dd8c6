package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/pgcall"
)

// fn is a function found in the catalog.
type fn struct {
	names     []string // input arguments, in order
	types     []string
	defaults  int // the last `defaults` inputs have defaults
	retset    bool
	composite bool
	void      bool
	readOnly  bool
}

// lookup finds the one function of that name the arguments fit.
func (d *DB) lookup(ctx context.Context, q *query.Call) (*fn, error) {
	var found []*fn
	var refusal error
	err := d.pool.Tx(ctx, d.opts(pgcall.ReadOnly), func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, functionSQL, q.Schema, q.Function)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				name, kind             string
				allNames, modes, types []string
				f                      fn
				ext, canExec, variadic bool
				defaults               int16
			)
			if err := rows.Scan(&name, &allNames, &modes, &types, &defaults, &f.retset, &f.composite, &f.void,
				&f.readOnly, &kind, &ext, &canExec, &variadic); err != nil {
				return err
			}
			switch {
			case kind != "f":
				refusal = mcperr.New(mcperr.PermissionDeny, "%s.%s is not a plain function (an aggregate, window function or procedure) and cannot be called", q.Schema, q.Function)
				continue
			case ext:
				refusal = mcperr.New(mcperr.PermissionDeny, "%s.%s belongs to a database extension; only the application's own functions can be called", q.Schema, q.Function)
				continue
			case !canExec:
				refusal = mcperr.New(mcperr.PermissionDeny, "the database role may not execute %s.%s", q.Schema, q.Function)
				continue
			case variadic:
				refusal = mcperr.Invalid("function", q.Function, "a function with named arguments", "%s.%s takes variadic arguments, which calls by name cannot pass", q.Schema, q.Function)
				continue
			}
			f.defaults = int(defaults)
			unnamed := false
			for i, n := range allNames {
				if len(modes) > 0 && modes[i] != "i" && modes[i] != "b" {
					continue
				}
				if n == "" {
					unnamed = true
				}
				f.names = append(f.names, n)
			}
			if len(allNames) == 0 && len(types) > 0 {
				unnamed = true
			}
			if unnamed {
				refusal = mcperr.Invalid("function", q.Function, "a function whose arguments have names", "%s.%s has unnamed arguments, which calls by name cannot pass", q.Schema, q.Function)
				continue
			}
			f.types = types
			found = append(found, &f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err)
	}
	var fits []*fn
	for _, f := range found {
		if fitsArgs(f, q.Args) {
			fits = append(fits, f)
		}
	}
	switch {
	case len(fits) == 1:
		return fits[0], nil
	case len(fits) > 1:
		return nil, mcperr.Invalid("params", nil, "arguments that choose one function", "%s.%s has several versions these arguments fit", q.Schema, q.Function)
	case len(found) > 0:
		f := found[0]
		return nil, mcperr.Invalid("params", nil, "the arguments "+strings.Join(f.names, ", "),
			"the arguments do not fit %s.%s(%s): every argument without a default is needed and no other name is accepted",
			q.Schema, q.Function, strings.Join(f.names, ", "))
	case refusal != nil:
		return nil, refusal
	}
	return nil, backend.NewDBError("PGRST202", fmt.Sprintf("function %s.%s does not exist or is not exposed", q.Schema, q.Function), "", "")
}

func fitsArgs(f *fn, args query.Row) bool {
	for _, k := range args.Keys {
		ok := false
		for _, n := range f.names {
			ok = ok || n == k
		}
		if !ok {
			return false
		}
	}
	for i, n := range f.names {
		if _, ok := args.Get(n); !ok && i < len(f.names)-f.defaults {
			return false
		}
	}
	return true
}

// Call runs a function of an exposed schema with named arguments: READ ONLY
// when the function is declared STABLE or IMMUTABLE (or the server is
// read-only), READ WRITE otherwise.
func (d *DB) Call(ctx context.Context, q *query.Call) (*backend.Result, error) {
	f, err := d.lookup(ctx, q)
	if err != nil {
		return nil, err
	}
	var args []any
	var b strings.Builder
	b.WriteString(query.QuoteIdent(q.Schema) + "." + query.QuoteIdent(q.Function) + "(")
	for i, k := range q.Args.Keys {
		var typ string
		for j, n := range f.names {
			if n == k {
				typ = f.types[j]
			}
		}
		v, err := bindJSON(&query.Column{Name: k, Type: typ}, q.Args.Values[i])
		if err != nil {
			return nil, err
		}
		if s := strings.TrimSpace(string(q.Args.Values[i])); !query.IsJSONType(typ) && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) {
			return nil, mcperr.Invalid("params."+k, nil, "a "+typ, "params.%s: %s.%s takes %s, not a JSON object or array", k, q.Schema, q.Function, typ)
		}
		args = append(args, v)
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s => $%d::%s", query.QuoteIdent(k), i+1, typ)
	}
	b.WriteString(")")
	call := b.String()
	var sql string
	switch {
	case f.void:
		sql = "SELECT 'null'::text FROM " + call + " AS _v"
	case f.retset || f.composite:
		sql = "SELECT coalesce(json_agg(_r), '[]'::json)::text FROM (SELECT * FROM " + call
		if q.Limit > 0 {
			sql += " LIMIT " + strconv.Itoa(q.Limit+1)
		}
		sql += ") _r"
	default:
		sql = "SELECT to_json(" + call + ")::text"
	}
	mode := pgcall.ReadWrite
	if f.readOnly {
		mode = pgcall.ReadOnly
	}
	vals, err := d.exec(ctx, mode, query.Statement{SQL: sql, Args: args}, false, nil)
	if err != nil {
		return nil, err
	}
	if f.retset || (f.composite && !f.void) {
		if !f.retset {
			// A single composite value: one object.
			elems, _, _, err := backend.TrimRows(vals[0], 0)
			if err != nil {
				return nil, err
			}
			if len(elems) == 1 {
				return &backend.Result{Scalar: true, Value: elems[0]}, nil
			}
		}
		return backend.RowsResult(vals[0], q.Limit)
	}
	if vals[0] == nil {
		return &backend.Result{Scalar: true, Value: json.RawMessage("null")}, nil
	}
	return &backend.Result{Scalar: true, Value: json.RawMessage(vals[0])}, nil
}

const functionSQL = `SELECT p.proname, coalesce(p.proargnames, '{}')::text[], coalesce(p.proargmodes::text[], '{}')::text[],
  ARRAY(SELECT pg_catalog.format_type(t, NULL) FROM unnest(p.proargtypes) WITH ORDINALITY u(t, i) ORDER BY u.i)::text[],
  p.pronargdefaults, p.proretset, rt.typtype = 'c' OR rt.oid = 'record'::regtype, rt.oid = 'void'::regtype,
  p.provolatile <> 'v', p.prokind,
  EXISTS (SELECT 1 FROM pg_catalog.pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e'),
  pg_catalog.has_function_privilege(p.oid, 'EXECUTE'), p.provariadic <> 0
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_type rt ON rt.oid = p.prorettype
WHERE n.nspname = $1 AND p.proname = $2`
