package query

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Dialect is what differs between PostgreSQL and the embedded SQLite
// database when rendering SQL.
type Dialect struct {
	// Postgres: $n placeholders with casts to the column's type, schema-
	// qualified names, rows built with row_to_json and joined with
	// RowSep (pgRows). Otherwise SQLite: ?n
	// placeholders, rows built with json_object.
	Postgres bool
	// BindValue converts a filter value compared with col.
	BindValue func(col *Column, v Value) (any, error)
	// BindJSON converts a JSON value written to col.
	BindJSON func(col *Column, raw json.RawMessage) (any, error)
	// TypeError is the error for an operator PostgreSQL refuses on a
	// column's type (SQLSTATE 42804), where SQLite would answer.
	TypeError func(msg string) error
}

func (d *Dialect) typeError(msg string) error {
	if d.TypeError != nil {
		return d.TypeError(msg)
	}
	return mcperr.Invalid("filters", nil, "an operator the column's type supports", "%s", msg)
}

// Statement is rendered SQL with its arguments.
type Statement struct {
	SQL  string
	Args []any
}

type sqlb struct {
	d    *Dialect
	b    strings.Builder
	args []any
}

func (s *sqlb) w(parts ...string) {
	for _, p := range parts {
		s.b.WriteString(p)
	}
}

// idents writes the quoted names cols, separated by commas, each after
// prefix (a table alias and its dot, or "").
func (s *sqlb) idents(prefix string, cols []string) {
	for i, c := range cols {
		if i > 0 {
			s.w(", ")
		}
		s.w(prefix, QuoteIdent(c))
	}
}

func (s *sqlb) param(v any, cast string) {
	s.args = append(s.args, v)
	n := strconv.Itoa(len(s.args))
	if s.d.Postgres {
		s.w("$", n)
		if cast != "" {
			s.w("::", cast)
		}
		return
	}
	s.w("?", n)
}

func (s *sqlb) stmt() Statement { return Statement{SQL: s.b.String(), Args: s.args} }

func (s *sqlb) table(t *Table) string {
	if s.d.Postgres {
		return QuoteIdent(t.Schema) + "." + QuoteIdent(t.Name)
	}
	return QuoteIdent(t.Name)
}

func (s *sqlb) where(t *Table, g Group) error {
	for i, n := range g.Items {
		if i > 0 {
			if g.Or {
				s.w(" OR ")
			} else {
				s.w(" AND ")
			}
		}
		if n.Group != nil {
			s.w("(")
			if err := s.where(t, *n.Group); err != nil {
				return err
			}
			s.w(")")
			continue
		}
		if err := s.cond(t, n.Cond); err != nil {
			return err
		}
	}
	return nil
}

var sqlOps = map[Op]string{Eq: " = ", Neq: " <> ", Gt: " > ", Gte: " >= ", Lt: " < ", Lte: " <= "}

func (s *sqlb) cond(t *Table, c *Cond) error {
	col := t.Column(c.Column)
	if col == nil {
		return UnknownColumn("filters", t, c.Column)
	}
	ref := "_t." + QuoteIdent(c.Column)
	if !s.d.Postgres && IsJSONType(col.Type) && (c.Op == Eq || c.Op == Neq || c.Op == In) {
		// jsonb equality ignores key order and spacing; the bound value is
		// in the same canonical form (BindValue).
		ref = "mcp_jsonb(" + ref + ")"
	}
	bind := func(v Value) error {
		a, err := s.d.BindValue(col, v)
		if err != nil {
			return err
		}
		s.param(a, "")
		return nil
	}
	if c.Op == Is {
		if !s.d.Postgres && col.Type != "boolean" && c.Value.Text != "null" {
			// SQLite compares any value with TRUE; PostgreSQL's IS TRUE
			// takes booleans only.
			return s.d.typeError(fmt.Sprintf("argument of IS %s must be type boolean, not type %s", strings.ToUpper(c.Value.Text), col.Type))
		}
		s.w(ref, " IS ")
		if c.Not {
			s.w("NOT ")
		}
		switch {
		case c.Value.Text == "unknown" && !s.d.Postgres:
			s.w("NULL")
		default:
			s.w(strings.ToUpper(c.Value.Text))
		}
		return nil
	}
	if c.Not {
		s.w("NOT (")
	}
	switch c.Op {
	case In:
		s.w(ref, " IN (")
		for i, v := range c.List {
			if i > 0 {
				s.w(", ")
			}
			if err := bind(v); err != nil {
				return err
			}
		}
		s.w(")")
	case Like, ILike:
		// As in PostgREST, * is a wildcard like %.
		pat := Value{Kind: String, Text: strings.ReplaceAll(c.Value.Text, "*", "%")}
		if s.d.Postgres {
			s.w(ref, map[Op]string{Like: " LIKE ", ILike: " ILIKE "}[c.Op])
			if err := bind(pat); err != nil {
				return err
			}
		} else {
			s.w("mcp_like(", ref, ", ")
			if err := bind(pat); err != nil {
				return err
			}
			s.w(map[Op]string{Like: ", 0)", ILike: ", 1)"}[c.Op])
		}
	case Gt, Gte, Lt, Lte:
		if !s.d.Postgres && col.Type == "jsonb" {
			// jsonb's order is not its text's (mcp_jsonb_key).
			s.w("mcp_jsonb_key(", ref, ")", sqlOps[c.Op], "mcp_jsonb_key(")
			if err := bind(c.Value); err != nil {
				return err
			}
			s.w(")")
			break
		}
		s.w(ref, sqlOps[c.Op])
		if err := bind(c.Value); err != nil {
			return err
		}
	default:
		op, ok := sqlOps[c.Op]
		if !ok {
			return mcperr.Invalid("filters", string(c.Op), opList, "unknown filter operator %q", c.Op)
		}
		s.w(ref, op)
		if err := bind(c.Value); err != nil {
			return err
		}
	}
	if c.Not {
		s.w(")")
	}
	return nil
}

func (s *sqlb) order(t *Table, os []Order) {
	for i, o := range os {
		if i == 0 {
			s.w(" ORDER BY ")
		} else {
			s.w(", ")
		}
		if col := t.Column(o.Column); col != nil && col.Type == "jsonb" && !s.d.Postgres {
			s.w("mcp_jsonb_key(_t.", QuoteIdent(o.Column), ")")
		} else {
			s.w("_t.", QuoteIdent(o.Column))
		}
		nulls := o.Nulls
		if o.Desc {
			s.w(" DESC")
			if nulls == "" {
				nulls = "first"
			}
		} else {
			s.w(" ASC")
			if nulls == "" {
				nulls = "last"
			}
		}
		// PostgreSQL's default null order, spelled out for SQLite, whose
		// default is the opposite.
		s.w(" NULLS ", strings.ToUpper(nulls))
	}
}

// jsonCol is a SQLite expression for a column as a JSON value.
func jsonCol(alias string, c *Column) string {
	ref := QuoteIdent(c.Name)
	if alias != "" {
		ref = alias + "." + ref
	}
	switch {
	case c.Type == "boolean":
		return "CASE WHEN " + ref + " IS NULL THEN NULL WHEN " + ref + " THEN json('true') ELSE json('false') END"
	case IsJSONType(c.Type):
		return "json(" + ref + ")"
	}
	return ref
}

// sqlString quotes a catalog name as an SQL string literal (the keys of
// json_object).
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// jsonObject is a SQLite json_object of the columns of t.
func jsonObject(alias string, t *Table, cols []string) string {
	var b strings.Builder
	b.WriteString("json_object(")
	for i, name := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(sqlString(name) + ", " + jsonCol(alias, t.Column(name)))
	}
	b.WriteString(")")
	return b.String()
}

func (s *sqlb) embed(ep EmbedPlan) {
	cols, _ := expand("select", ep.Rel, ep.Item.Items)
	from := s.table(ep.Rel) + " _x WHERE _x." + QuoteIdent(ep.Remote) + " = _t." + QuoteIdent(ep.Local)
	if s.d.Postgres {
		list := make([]string, len(cols))
		for i, c := range cols {
			list[i] = "_x." + QuoteIdent(c)
		}
		inner := "SELECT " + strings.Join(list, ", ") + " FROM " + from
		if ep.Many {
			s.w("(SELECT coalesce(json_agg(_e), '[]'::json) FROM (", inner, ") _e)")
		} else {
			s.w("(SELECT row_to_json(_e) FROM (", inner, " LIMIT 1) _e)")
		}
		s.w(" AS ", QuoteIdent(ep.Item.Relation))
		return
	}
	obj := jsonObject("_x", ep.Rel, cols)
	if ep.Many {
		s.w("json((SELECT json_group_array(json(_j)) FROM (SELECT ", obj, " AS _j FROM ", from, ")))")
	} else {
		s.w("json((SELECT ", obj, " FROM ", from, " LIMIT 1))")
	}
}

// SQLSelect renders a read of p as one statement, so that the rows and the
// count come from one snapshot without a transaction around them.
// PostgreSQL: the rows as one text (see pgRows) and, when asked, the exact
// count. SQLite: the number of rows, their JSON objects joined by RowSep in
// one text (NULL when there are none) and, when asked, the exact count: one
// result row, as the driver's cost is per row. One row
// more than Limit is read.
func SQLSelect(d *Dialect, p *Plan, q *Select) (Statement, error) {
	s := &sqlb{d: d}
	body := func(s *sqlb) error {
		s.w(" FROM ", s.table(p.Table), " _t")
		if !q.Where.Empty() {
			s.w(" WHERE ")
			if err := s.where(p.Table, q.Where); err != nil {
				return err
			}
		}
		return nil
	}
	limits := func(s *sqlb) {
		s.order(p.Table, q.Order)
		if q.Limit > 0 {
			s.w(" LIMIT ", strconv.Itoa(q.Limit+1))
		}
		if q.Offset > 0 {
			if q.Limit <= 0 && !d.Postgres {
				s.w(" LIMIT -1")
			}
			// A parameter, so that every page is one prepared statement
			// rather than one for each offset, on both backends.
			s.w(" OFFSET ")
			if d.Postgres {
				s.param(strconv.Itoa(q.Offset), "bigint")
			} else {
				s.param(q.Offset, "")
			}
		}
	}
	if d.Postgres {
		s.w("SELECT ", pgRows("_r"))
		if q.Count {
			s.w(", (SELECT count(*)")
			if err := body(s); err != nil {
				return Statement{}, err
			}
			s.w(")")
		}
		s.w(" FROM (SELECT ")
		s.idents("_t.", p.Columns)
		for i, ep := range p.Embeds {
			if i > 0 || len(p.Columns) > 0 {
				s.w(", ")
			}
			s.embed(ep)
		}
		if err := body(s); err != nil {
			return Statement{}, err
		}
		limits(s)
		s.w(") _r")
		return s.stmt(), nil
	}
	obj := jsonObject("_t", p.Table, p.Columns)
	if len(p.Embeds) > 0 {
		// json_object of the columns, then each related table added.
		obj = strings.TrimSuffix(obj, ")")
		for i, ep := range p.Embeds {
			if i > 0 || len(p.Columns) > 0 {
				obj += ", "
			}
			obj += sqlString(ep.Item.Relation) + ", "
			sub := &sqlb{d: d}
			sub.embed(ep)
			obj += sub.b.String()
		}
		obj += ")"
	}
	// The subquery orders and limits the rows; an aggregate over a subquery
	// with ORDER BY reads it as a co-routine, in that order.
	s.w("SELECT count(*), group_concat(_r._j, char(", strconv.Itoa(RowSep), "))")
	if q.Count {
		s.w(", (SELECT count(*)")
		if err := body(s); err != nil {
			return Statement{}, err
		}
		s.w(")")
	}
	s.w(" FROM (SELECT ", obj, " AS _j")
	if err := body(s); err != nil {
		return Statement{}, err
	}
	limits(s)
	s.w(") _r")
	return s.stmt(), nil
}

// RowSep separates the rows of a read (SQLSelect) and of the rows a change
// returns on PostgreSQL, each a JSON object as row_to_json or json_object
// writes it: the record separator, a control character, which JSON text
// never holds unescaped, so the backends split the rows with a byte search
// instead of scanning a JSON array.
const RowSep = 0x1e

func (s *sqlb) returning(t *Table, cols []string) {
	if s.d.Postgres {
		s.w(" RETURNING ")
		s.idents("_t.", cols)
		return
	}
	s.w(" RETURNING ", jsonObject("", t, cols))
}

func (s *sqlb) value(c *Column, raw json.RawMessage) error {
	a, err := s.d.BindJSON(c, raw)
	if err != nil {
		return err
	}
	cast := ""
	if s.d.Postgres {
		cast = c.Type
	}
	s.param(a, cast)
	return nil
}

// pgRows aggregates the rows of the relation alias into one text: their
// JSON objects joined with RowSep, empty for no rows.
func pgRows(alias string) string {
	return "coalesce(string_agg(row_to_json(" + alias + ")::text, E'\\x1e'), '')"
}

// pgWrap turns a data-changing statement that returns rows into one that
// gives them as pgRows does (at most cap rows) and the number changed.
func pgWrap(s *sqlb, cap int) {
	inner := s.b.String()
	s.b.Reset()
	s.w("WITH _m AS (", inner, ") SELECT (SELECT ", pgRows("_x"), " FROM (SELECT * FROM _m")
	if cap > 0 {
		s.w(" LIMIT ", strconv.Itoa(cap))
	}
	s.w(") _x), (SELECT count(*) FROM _m)")
}

// SQLInsert renders an insert. PostgreSQL: one statement for all rows (a
// missing column takes its DEFAULT) giving the rows as JSON and their count.
// SQLite: one statement per row (its own columns) returning a JSON object.
func SQLInsert(d *Dialect, p *WritePlan, q *Insert) ([]Statement, error) {
	t := p.Table
	conflict := func(s *sqlb, cols []string) {
		if len(q.OnConflict) == 0 {
			return
		}
		quoted := make([]string, len(q.OnConflict))
		for i, c := range q.OnConflict {
			quoted[i] = QuoteIdent(c)
		}
		s.w(" ON CONFLICT (", strings.Join(quoted, ", "), ")")
		if q.IgnoreDuplicates {
			s.w(" DO NOTHING")
			return
		}
		s.w(" DO UPDATE SET ")
		for i, c := range cols {
			if i > 0 {
				s.w(", ")
			}
			s.w(QuoteIdent(c), " = excluded.", QuoteIdent(c))
		}
	}
	if d.Postgres {
		cols := Columns(q.Rows)
		s := &sqlb{d: d}
		s.w("INSERT INTO ", s.table(t), " AS _t (")
		s.idents("", cols)
		s.w(") VALUES ")
		for i, r := range q.Rows {
			if i > 0 {
				s.w(", ")
			}
			s.w("(")
			for j, c := range cols {
				if j > 0 {
					s.w(", ")
				}
				raw, ok := r.Get(c)
				if !ok {
					s.w("DEFAULT")
					continue
				}
				if err := s.value(t.Column(c), raw); err != nil {
					return nil, err
				}
			}
			s.w(")")
		}
		conflict(s, cols)
		s.returning(t, p.Returning)
		pgWrap(s, 0)
		return []Statement{s.stmt()}, nil
	}
	out := make([]Statement, 0, len(q.Rows))
	for _, r := range q.Rows {
		s := &sqlb{d: d}
		s.w("INSERT INTO ", s.table(t), " (")
		s.idents("", r.Keys)
		s.w(") VALUES (")
		for i, c := range r.Keys {
			if i > 0 {
				s.w(", ")
			}
			if err := s.value(t.Column(c), r.Values[i]); err != nil {
				return nil, err
			}
		}
		s.w(")")
		conflict(s, r.Keys)
		s.returning(t, p.Returning)
		out = append(out, s.stmt())
	}
	return out, nil
}

// SQLCount renders the count of rows g matches (SQLite checks a write's
// guard with it before writing).
func SQLCount(d *Dialect, t *Table, g Group) (Statement, error) {
	s := &sqlb{d: d}
	s.w("SELECT count(*) FROM ", s.table(t), " AS _t WHERE ")
	if err := s.where(t, g); err != nil {
		return Statement{}, err
	}
	return s.stmt(), nil
}

// SQLUpdate renders an update. PostgreSQL: the rows (at most MaxAffected)
// as JSON and the number changed, which the caller checks before the
// transaction commits. SQLite: UPDATE … RETURNING a JSON object per row.
func SQLUpdate(d *Dialect, p *WritePlan, q *Update) (Statement, error) {
	if err := RequireFilter(q.Where); err != nil {
		return Statement{}, err
	}
	t := p.Table
	s := &sqlb{d: d}
	s.w("UPDATE ", s.table(t), " AS _t SET ")
	for i, c := range q.Set.Keys {
		if i > 0 {
			s.w(", ")
		}
		s.w(QuoteIdent(c), " = ")
		if err := s.value(t.Column(c), q.Set.Values[i]); err != nil {
			return Statement{}, err
		}
	}
	s.w(" WHERE ")
	return s.guarded(p, q.Where, q.MaxAffected)
}

// SQLDelete renders a delete, like SQLUpdate.
func SQLDelete(d *Dialect, p *WritePlan, q *Delete) (Statement, error) {
	if err := RequireFilter(q.Where); err != nil {
		return Statement{}, err
	}
	s := &sqlb{d: d}
	s.w("DELETE FROM ", s.table(p.Table), " AS _t WHERE ")
	return s.guarded(p, q.Where, q.MaxAffected)
}

// guarded ends an update or delete: its conditions, the rows it returns
// and, on PostgreSQL, the count of changed rows checked against
// maxAffected.
func (s *sqlb) guarded(p *WritePlan, where Group, maxAffected int) (Statement, error) {
	if err := s.where(p.Table, where); err != nil {
		return Statement{}, err
	}
	s.returning(p.Table, p.Returning)
	if s.d.Postgres {
		pgWrap(s, maxAffected)
	}
	return s.stmt(), nil
}
