// Package query is the one model of what an agent asks of a Supabase
// database — a read, an insert, an update, a delete or a function call —
// together with its parsing from tool arguments, its checks against a table
// catalog, and its three renderings: a PostgREST request (query string,
// headers, body), parameterised SQL for PostgreSQL, and SQL for the embedded
// SQLite database.
//
// Identifiers (schemas, tables, columns, functions) must match a strict
// pattern and, where a catalog is known, name something that exists; they
// are always quoted when rendered. Values are never part of SQL text: every
// value is a parameter, and in a PostgREST query string a value is quoted
// and percent-encoded as PostgREST's grammar requires.
package query

import (
	"bytes"
	"encoding/json"
)

// Kind is the JSON kind of a filter value.
type Kind int

const (
	String Kind = iota
	Number
	Bool
	Null
)

// Value is a scalar a filter compares with. Text is the string itself, the
// number as written in JSON (every digit kept), or "true"/"false".
type Value struct {
	Kind Kind
	Text string
}

// Op is a filter operator.
type Op string

// The filter operators.
const (
	Eq    Op = "eq"
	Neq   Op = "neq"
	Gt    Op = "gt"
	Gte   Op = "gte"
	Lt    Op = "lt"
	Lte   Op = "lte"
	Like  Op = "like"
	ILike Op = "ilike"
	In    Op = "in"
	Is    Op = "is"
)

// Cond is one condition on a column. For In, List holds the values; for Is,
// Value.Text is "null", "true", "false" or "unknown".
type Cond struct {
	Column string
	Op     Op
	Not    bool
	Value  Value
	List   []Value
}

// Node is a condition or a nested group.
type Node struct {
	Cond  *Cond
	Group *Group
}

// Group joins its items with AND (Or false) or OR.
type Group struct {
	Or    bool
	Items []Node
}

// Empty reports whether the group holds no condition at all.
func (g Group) Empty() bool { return len(g.Items) == 0 }

// Order is one ordering term.
type Order struct {
	Column string
	Desc   bool
	// Nulls is "", "first" or "last".
	Nulls string
}

// Item is one element of a select list: a column, all columns (Star), or an
// embedded related table.
type Item struct {
	Column string
	Star   bool
	Embed  *Embed
}

// Embed is a related table in a select list, e.g. iso_requests(id,status).
type Embed struct {
	Relation string
	Items    []Item
}

// Select reads rows.
type Select struct {
	Schema, Table string
	Items         []Item
	Where         Group
	Order         []Order
	// Limit is the number of rows the caller wants; renderers ask for one
	// more to tell whether there are more.
	Limit, Offset int
	// Count asks for the exact number of matching rows.
	Count bool
}

// Row is a JSON object with its keys in the order they were written.
type Row struct {
	Keys   []string
	Values []json.RawMessage
}

// Get returns the value of key, if present.
func (r Row) Get(key string) (json.RawMessage, bool) {
	for i, k := range r.Keys {
		if k == key {
			return r.Values[i], true
		}
	}
	return nil, false
}

// JSON encodes the row as a compact object, keys in order.
func (r Row) JSON() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range r.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, r.Values[i]); err != nil {
			// Values come from a decoded document and are valid JSON.
			b.Write(r.Values[i])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Insert adds rows, or upserts them on a conflict target.
type Insert struct {
	Schema, Table string
	Rows          []Row
	// OnConflict names the unique columns an upsert resolves on; empty: a
	// plain insert.
	OnConflict []string
	// IgnoreDuplicates keeps the existing row on conflict instead of
	// updating it.
	IgnoreDuplicates bool
	Returning        []Item
}

// Update changes the rows Where matches.
type Update struct {
	Schema, Table string
	Set           Row
	Where         Group
	Returning     []Item
	// MaxAffected refuses, and rolls back, an update that would change more
	// rows.
	MaxAffected int
}

// Delete removes the rows Where matches.
type Delete struct {
	Schema, Table string
	Where         Group
	Returning     []Item
	MaxAffected   int
}

// Call runs a function with named arguments.
type Call struct {
	Schema, Function string
	Args             Row
	// Limit caps the rows of a set-returning function (one more is asked
	// for, to tell whether there were more).
	Limit int
}
