package backend

import (
	"encoding/json"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestCodeFor(t *testing.T) {
	for state, want := range map[string]mcperr.Code{"23505": mcperr.Conflict, "23503": mcperr.Validation, "22P02": mcperr.Validation,
		"42P01": mcperr.NotFound, "PGRST205": mcperr.NotFound, "42501": mcperr.PermissionDeny, "57014": mcperr.Timeout,
		"40001": mcperr.Upstream, "PGRST301": mcperr.Authentication, "PGRST124": mcperr.Validation, "21000": mcperr.Validation,
		"08006": mcperr.Upstream, "XX000": mcperr.Upstream} {
		if got := CodeFor(state); got != want {
			t.Errorf("%s: %s, want %s", state, got, want)
		}
	}
	e := NewDBError("40001", "busy", "d", "h").MCPError()
	if !e.Retryable() || e.Message != "busy; detail: d; hint: h [40001]" {
		t.Errorf("%+v", e)
	}
	if TooMany(5, 2).MCPError().Field != "filters" {
		t.Error("guard field")
	}
}

func TestPolicy(t *testing.T) {
	p := &Policy{AllowTables: []string{"public.*", "audit_log"}, DenyTables: []string{"*_secret", "auth.*"}}
	if err := p.Check(); err != nil || p.Schemas[0] != "public" {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{"public.quotes": true, "public.api_secret": false, "auth.users": false, "other.audit_log": true, "other.x": false} {
		s, n, _ := cut(name)
		if p.TableAllowed(s, n) != ok {
			t.Errorf("%s allowed = %v", name, !ok)
		}
	}
	for _, bad := range []Policy{{Schemas: []string{"pg_catalog"}}, {Schemas: []string{"information_schema"}}, {Schemas: []string{"a-b"}},
		{DenyTables: []string{"a.b.c"}}, {AllowFunctions: []string{"["}}, {DenyFunctions: []string{""}}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := p.Schema("auth"); err == nil {
		t.Error("unexposed schema accepted")
	}
	if err := p.Function("public", "PG_read_file"); err == nil {
		t.Error("a system function passed")
	}
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}

func TestTrimRows(t *testing.T) {
	rows, n, more, err := TrimRows(json.RawMessage("[{\"a\":1}, \n {\"a\":2}]"), 1)
	if err != nil || n != 1 || !more || string(RowsJSON(rows)) != `[{"a":1}]` {
		t.Errorf("%s %d %v %v", RowsJSON(rows), n, more, err)
	}
	rows, n, more, _ = TrimRows(json.RawMessage("[{\"a\":1}, \n {\"a\":2}]"), 0)
	if n != 2 || more || string(RowsJSON(rows)) != `[{"a":1},{"a":2}]` {
		t.Errorf("%s", RowsJSON(rows))
	}
	if _, _, _, err := TrimRows(json.RawMessage(`{}`), 1); err == nil {
		t.Error("an object passed as rows")
	}
	if rows, _, _, _ := TrimRows(json.RawMessage(`null`), 1); string(RowsJSON(rows)) != "[]" || rows == nil {
		t.Errorf("null rows %s", rows)
	}
}
