package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Column describes a table column. Type is PostgreSQL's name for it
// (text, integer, numeric, boolean, date, timestamp with time zone, jsonb…),
// on every backend.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
	Default  string `json:"default,omitempty"`
	// PrimaryKey is the column's position in the primary key (1…), 0 when
	// it is not part of it.
	PrimaryKey int  `json:"primary_key,omitempty"`
	Generated  bool `json:"generated,omitempty"`
}

// ForeignKey is a reference from Columns to RefColumns of RefTable.
type ForeignKey struct {
	Name       string   `json:"name,omitempty"`
	Columns    []string `json:"columns"`
	RefSchema  string   `json:"references_schema"`
	RefTable   string   `json:"references_table"`
	RefColumns []string `json:"references_columns"`
}

// Table describes a table or view.
type Table struct {
	Schema      string       `json:"schema"`
	Name        string       `json:"name"`
	Kind        string       `json:"kind"` // "table" or "view"
	Columns     []Column     `json:"columns"`
	PrimaryKey  []string     `json:"primary_key,omitempty"`
	Unique      [][]string   `json:"unique,omitempty"`
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	// Referenced lists the foreign keys of other tables that point here.
	Referenced  []ForeignKey `json:"referenced_by,omitempty"`
	RowEstimate int64        `json:"row_estimate"`
	Comment     string       `json:"comment,omitempty"`
}

// Column returns the column called name.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// ColumnNames lists the columns in order.
func (t *Table) ColumnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// Catalog finds tables. A nil error with a nil table never happens: a
// missing table is a NOT_FOUND error.
type Catalog interface {
	Table(schema, name string) (*Table, error)
}

// TableNotFound is the error for a table that does not exist (or is not
// exposed).
func TableNotFound(field, schema, name string) error {
	e := mcperr.New(mcperr.NotFound, "table %s.%s does not exist or is not exposed; call supabase_list_tables to see the tables", schema, name)
	e.Field = field
	return e
}

// UnknownColumn is the error for a column a table lacks.
func UnknownColumn(field string, t *Table, name string) error {
	names := t.ColumnNames()
	list := strings.Join(names, ", ")
	if len(list) > 400 {
		list = list[:400] + "…"
	}
	return mcperr.Invalid(field, name, "a column of "+t.Schema+"."+t.Name,
		"%s.%s has no column %q (columns: %s)", t.Schema, t.Name, name, list)
}

// IsTextType reports types that like/ilike apply to.
func IsTextType(typ string) bool {
	return typ == "text" || typ == "citext" || strings.HasPrefix(typ, "character") || typ == "name"
}

// IsJSONType reports json and jsonb.
func IsJSONType(typ string) bool { return typ == "json" || typ == "jsonb" }

// EmbedPlan is a related table resolved through a foreign key.
type EmbedPlan struct {
	Item *Embed
	Rel  *Table
	// Many: the related table points here (an array of rows); otherwise
	// this table points there (one row or null).
	Many bool
	// Local is this table's column, Remote the related table's.
	Local, Remote string
}

// Plan is a read checked against a catalog.
type Plan struct {
	Table *Table
	// Columns are the columns selected, * expanded; Embeds the related
	// tables, in select-list order after them.
	Columns []string
	Embeds  []EmbedPlan
}

// checkWhere checks every column a filter names.
func checkWhere(field string, t *Table, g Group) error {
	for _, n := range g.Items {
		if n.Group != nil {
			if err := checkWhere(field, t, *n.Group); err != nil {
				return err
			}
			continue
		}
		c := t.Column(n.Cond.Column)
		if c == nil {
			return UnknownColumn(field, t, n.Cond.Column)
		}
		if (n.Cond.Op == Like || n.Cond.Op == ILike) && !IsTextType(c.Type) {
			return mcperr.Invalid(field, n.Cond.Column, "a text column",
				"%s: %s applies to text columns; %s is %s", field, n.Cond.Op, n.Cond.Column, c.Type)
		}
	}
	return nil
}

// expand resolves a select list of plain columns and * against t.
func expand(field string, t *Table, items []Item) ([]string, error) {
	var cols []string
	for _, it := range items {
		switch {
		case it.Star:
			for _, c := range t.Columns {
				if !slices.Contains(cols, c.Name) {
					cols = append(cols, c.Name)
				}
			}
		case it.Embed == nil:
			if t.Column(it.Column) == nil {
				return nil, UnknownColumn(field, t, it.Column)
			}
			if !slices.Contains(cols, it.Column) {
				cols = append(cols, it.Column)
			}
		}
	}
	return cols, nil
}

// PlanSelect checks a read against cat.
func PlanSelect(cat Catalog, q *Select) (*Plan, error) {
	t, err := cat.Table(q.Schema, q.Table)
	if err != nil {
		return nil, err
	}
	p := &Plan{Table: t}
	if p.Columns, err = expand("select", t, q.Items); err != nil {
		return nil, err
	}
	if err := checkWhere("filters", t, q.Where); err != nil {
		return nil, err
	}
	for _, o := range q.Order {
		if t.Column(o.Column) == nil {
			return nil, UnknownColumn("orderBy", t, o.Column)
		}
	}
	for _, it := range q.Items {
		if it.Embed == nil {
			continue
		}
		ep, err := planEmbed(cat, t, it.Embed)
		if err != nil {
			return nil, err
		}
		p.Embeds = append(p.Embeds, ep)
	}
	return p, nil
}

func planEmbed(cat Catalog, t *Table, e *Embed) (EmbedPlan, error) {
	rel, err := cat.Table(t.Schema, e.Relation)
	if err != nil {
		return EmbedPlan{}, mcperr.Invalid("select", e.Relation, "a table related to "+t.Name+" by a foreign key",
			"select: %s.%s is not a table related to %s", t.Schema, e.Relation, t.Name)
	}
	var found []EmbedPlan
	for _, fk := range t.ForeignKeys {
		if fk.RefSchema == rel.Schema && fk.RefTable == rel.Name && len(fk.Columns) == 1 {
			found = append(found, EmbedPlan{Item: e, Rel: rel, Local: fk.Columns[0], Remote: fk.RefColumns[0]})
		}
	}
	for _, fk := range rel.ForeignKeys {
		if fk.RefSchema == t.Schema && fk.RefTable == t.Name && len(fk.Columns) == 1 {
			found = append(found, EmbedPlan{Item: e, Rel: rel, Many: true, Local: fk.RefColumns[0], Remote: fk.Columns[0]})
		}
	}
	switch len(found) {
	case 0:
		return EmbedPlan{}, mcperr.Invalid("select", e.Relation, "a table related to "+t.Name+" by a foreign key",
			"select: no foreign key relates %s and %s; call supabase_describe_table to see the relations", t.Name, e.Relation)
	case 1:
	default:
		return EmbedPlan{}, mcperr.Invalid("select", e.Relation, "one foreign key between the tables",
			"select: %s and %s are related by more than one foreign key; query them separately", t.Name, e.Relation)
	}
	for _, it := range e.Items {
		if it.Embed != nil {
			return EmbedPlan{}, mcperr.Invalid("select", it.Embed.Relation, "columns", "select: related tables nest one level only")
		}
	}
	if _, err := expand("select", rel, e.Items); err != nil {
		return EmbedPlan{}, err
	}
	return found[0], nil
}

// WritePlan is a write checked against a catalog.
type WritePlan struct {
	Table     *Table
	Returning []string
}

func planWrite(cat Catalog, schema, table string, returning []Item) (*WritePlan, error) {
	t, err := cat.Table(schema, table)
	if err != nil {
		return nil, err
	}
	if t.Kind != "table" {
		return nil, mcperr.Invalid("table", table, "a table", "%s.%s is a view; write to its underlying tables", schema, table)
	}
	if err := ColumnsOnly("select", returning); err != nil {
		return nil, err
	}
	cols, err := expand("select", t, returning)
	if err != nil {
		return nil, err
	}
	return &WritePlan{Table: t, Returning: cols}, nil
}

func checkRow(field string, t *Table, r Row) error {
	for _, k := range r.Keys {
		c := t.Column(k)
		if c == nil {
			return UnknownColumn(field, t, k)
		}
		if c.Generated {
			return mcperr.Invalid(field+"."+k, k, "a column that is not generated", "%s.%s is generated by the database and cannot be written", t.Name, k)
		}
	}
	return nil
}

// PlanInsert checks an insert against cat.
func PlanInsert(cat Catalog, q *Insert) (*WritePlan, error) {
	p, err := planWrite(cat, q.Schema, q.Table, q.Returning)
	if err != nil {
		return nil, err
	}
	for i, r := range q.Rows {
		field := "data"
		if len(q.Rows) > 1 {
			field = fmt.Sprintf("data[%d]", i)
		}
		if err := checkRow(field, p.Table, r); err != nil {
			return nil, err
		}
	}
	for _, c := range q.OnConflict {
		if p.Table.Column(c) == nil {
			return nil, UnknownColumn("onConflict", p.Table, c)
		}
	}
	return p, nil
}

// PlanUpdate checks an update against cat.
func PlanUpdate(cat Catalog, q *Update) (*WritePlan, error) {
	if err := RequireFilter(q.Where); err != nil {
		return nil, err
	}
	p, err := planWrite(cat, q.Schema, q.Table, q.Returning)
	if err != nil {
		return nil, err
	}
	if err := checkRow("data", p.Table, q.Set); err != nil {
		return nil, err
	}
	return p, checkWhere("filters", p.Table, q.Where)
}

// PlanDelete checks a delete against cat.
func PlanDelete(cat Catalog, q *Delete) (*WritePlan, error) {
	if err := RequireFilter(q.Where); err != nil {
		return nil, err
	}
	p, err := planWrite(cat, q.Schema, q.Table, q.Returning)
	if err != nil {
		return nil, err
	}
	return p, checkWhere("filters", p.Table, q.Where)
}

// RequireFilter refuses an update or delete without a condition: it would
// change every row of the table.
func RequireFilter(g Group) error {
	if g.Empty() {
		return mcperr.Invalid("filters", nil, "at least one condition",
			"refused: an update or delete needs filters that select the rows to change; without them it would change every row")
	}
	return nil
}
