package backend

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Policy is the operator's choice of what agents may reach: the exposed
// schemas (the first is the default), and allow and deny lists of tables
// and functions. A list entry is a name ("client_cache"), a qualified name
// ("public.client_cache") or a pattern with * ("auth.*", "tmp_*"). A deny
// entry always wins; a non-empty allow list admits only what it names.
type Policy struct {
	Schemas                       []string
	AllowTables, DenyTables       []string
	AllowFunctions, DenyFunctions []string
}

// systemSchemas are never exposed: they hold the database's own catalog and
// functions.
var systemSchemas = []string{"pg_catalog", "information_schema", "pg_toast"}

// Check validates the policy at start-up.
func (p *Policy) Check() error {
	if len(p.Schemas) == 0 {
		p.Schemas = []string{"public"}
	}
	for _, s := range p.Schemas {
		if !query.ValidIdent(s) {
			return fmt.Errorf("schema %q is not a valid name (%s)", s, query.IdentPattern)
		}
		if slices.Contains(systemSchemas, strings.ToLower(s)) || query.IsSystemName(s) {
			return fmt.Errorf("schema %q belongs to the database system and cannot be exposed", s)
		}
	}
	for _, list := range [][]string{p.AllowTables, p.DenyTables, p.AllowFunctions, p.DenyFunctions} {
		for _, pat := range list {
			if _, err := path.Match(pat, "x"); err != nil || pat == "" || strings.Count(pat, ".") > 1 {
				return fmt.Errorf("%q is not a valid name or pattern (name, schema.name, or with * wildcards)", pat)
			}
		}
	}
	return nil
}

// Schema returns the schema a call names, or the default; a schema that is
// not exposed is refused.
func (p *Policy) Schema(s string) (string, error) {
	if s == "" {
		return p.Schemas[0], nil
	}
	if err := query.CheckIdent("schema", "schema", s); err != nil {
		return "", err
	}
	if !slices.Contains(p.Schemas, s) {
		return "", mcperr.Invalid("schema", s, "one of "+strings.Join(p.Schemas, ", "),
			"schema %q is not exposed (exposed: %s)", s, strings.Join(p.Schemas, ", "))
	}
	return s, nil
}

func matches(list []string, schema, name string) bool {
	for _, pat := range list {
		target := schema + "." + name
		if !strings.Contains(pat, ".") {
			target = name
		}
		if ok, _ := path.Match(pat, target); ok {
			return true
		}
	}
	return false
}

// TableAllowed reports whether agents may reach a table.
func (p *Policy) TableAllowed(schema, name string) bool {
	if matches(p.DenyTables, schema, name) {
		return false
	}
	return len(p.AllowTables) == 0 || matches(p.AllowTables, schema, name)
}

// Table refuses a table the policy keeps agents off.
func (p *Policy) Table(field, schema, name string) error {
	if !p.TableAllowed(schema, name) {
		e := mcperr.New(mcperr.PermissionDeny, "table %s.%s is not available to agents on this server (operator policy)", schema, name)
		e.Field = field
		return e
	}
	return nil
}

// Function refuses a function the policy keeps agents off, and always
// refuses the database system's own functions (pg_*), whatever the lists say.
func (p *Policy) Function(schema, name string) error {
	if query.IsSystemName(name) {
		return mcperr.New(mcperr.PermissionDeny, "function %q is a database system function; only the application's own functions in %s can be called",
			name, strings.Join(p.Schemas, ", "))
	}
	if matches(p.DenyFunctions, schema, name) || (len(p.AllowFunctions) > 0 && !matches(p.AllowFunctions, schema, name)) {
		return mcperr.New(mcperr.PermissionDeny, "function %s.%s is not available to agents on this server (operator policy)", schema, name)
	}
	return nil
}
