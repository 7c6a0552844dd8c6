// Package tools defines the Supabase server's tools: reads, inserts,
// updates, deletes and function calls on the agents' workflow state, and
// table discovery. Each tool's definition sits beside its handler; all of
// them run on one backend.Backend (PostgREST, PostgreSQL or the embedded
// database) under the operator's policy.
package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
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

// rows is the result of a tool that returns rows.
type rows struct {
	Table      string          `json:"table,omitempty"`
	Function   string          `json:"function,omitempty"`
	Rows       json.RawMessage `json:"rows"`
	RowCount   int             `json:"row_count"`
	Count      *int64          `json:"count,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
	NextOffset *int            `json:"next_offset,omitempty"`
}

// fenced returns rows as outside content: anyone may have written them.
func fenced(source string, v any) kit.Untrusted {
	return kit.Untrusted{Source: source, Value: v}
}

func source(schema, name string) string { return fmt.Sprintf("rows of %s.%s", schema, name) }

// selectItems parses a select argument (default *).
func selectItems(s string) ([]query.Item, error) { return query.ParseSelect("select", s) }
