package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/postgrestfake"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/schemasql"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const pkg = "github.com/mcp-fleet/mcp-fleet/servers/supabase/cmd/supabase-mcp"

var allTools = []string{"supabase_delete", "supabase_describe_table", "supabase_insert", "supabase_list_tables",
	"supabase_query", "supabase_rpc", "supabase_update"}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestDocs(t *testing.T) {
	mcptest.CheckReference(t, spec(), "../../../../docs/supabase.md", mcptest.Updating())
}

func TestStdioEmbedded(t *testing.T) {
	t.Parallel()
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"MCP_DATA_DIR=" + t.TempDir()})
	if got := sorted(c.ToolNames()); !slices.Equal(got, allTools) {
		t.Errorf("tools %v", got)
	}
	res := c.Call("supabase_query", map[string]any{"table": "iso_requests", "filters": []any{map[string]any{"column": "id", "op": "eq", "value": "req-123"}}, "select": "id,passengers"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "untrusted-data") {
		t.Fatalf("query: %s", mcptest.Text(res))
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["row_count"] != 1.0 {
		t.Errorf("structured %v", res.StructuredContent)
	}
}

func TestStdioReadOnlyAndACL(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, pkg)
	ro := mcptest.StartStdio(t, bin, []string{"MCP_DATA_DIR=" + t.TempDir()}, "--read-only")
	if got := sorted(ro.ToolNames()); !slices.Equal(got, []string{"supabase_describe_table", "supabase_list_tables", "supabase_query"}) {
		t.Errorf("read-only tools %v", got)
	}
	if res, err := ro.CallErr(context.Background(), "supabase_delete", map[string]any{"table": "quotes", "filters": []any{map[string]any{"column": "id", "op": "eq", "value": "quote-456"}}}); err == nil && !res.IsError {
		t.Errorf("read-only served supabase_delete")
	}
	c := mcptest.StartStdio(t, bin, []string{"MCP_DATA_DIR=" + t.TempDir(), "MCP_ACL_FILE=" + mcptest.RepoFile(t, "configs", "acl.yaml"), "MCP_AGENT=communication"})
	if got := sorted(c.ToolNames()); !slices.Equal(got, []string{"supabase_describe_table", "supabase_list_tables", "supabase_query", "supabase_update"}) {
		t.Errorf("communication tools %v", got)
	}
	mcptest.FailCode(t, c.Call("supabase_delete", map[string]any{"table": "quotes", "filters": []any{map[string]any{"column": "id", "op": "eq", "value": "quote-456"}}}), mcperr.PermissionDeny)
	mcptest.FailCode(t, c.Call("supabase_insert", map[string]any{"table": "quotes", "data": []any{[]any{map[string]any{"column": "rfp_id", "value": "x"}}}}), mcperr.PermissionDeny)
}

// TestMigrateAndServePostgres: migrate twice (idempotent), then serve an
// ordinary role over stdio; a superuser URL is refused.
func TestMigrateAndServePostgres(t *testing.T) {
	bin := mcptest.Build(t, pkg)
	admin := pgtest.URL(t)
	migrations, err := fs.Glob(schemasql.Postgres(), "*.sql")
	if err != nil || len(migrations) < 2 {
		t.Fatalf("migrations %v: %v", migrations, err)
	}
	latest := fmt.Sprintf("schema at version %d", len(migrations))
	for i := 0; i < 2; i++ {
		var out, errb bytes.Buffer
		code := kit.Main(spec(), []string{"migrate", "--sample"}, env(map[string]string{"DATABASE_URL": admin}), strings.NewReader(""), &out, &errb)
		if code != 0 || strings.TrimSpace(out.String()) != latest {
			t.Fatalf("migrate #%d: code %d out %q err %q", i+1, code, out.String(), errb.String())
		}
	}
	conn, err := pgx.Connect(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM quotes").Scan(&n); err != nil || n != 3 {
		t.Fatalf("sample quotes: %d %v", n, err)
	}
	_, app := testenv.PostgresURLs(t)
	c := mcptest.StartStdio(t, bin, []string{"DATABASE_URL=" + app})
	res := c.Call("supabase_query", map[string]any{"table": "quotes", "filters": []any{map[string]any{"column": "rfp_id", "op": "eq", "value": "rfp-123"}}, "limit": 2})
	if res.IsError {
		t.Fatalf("query: %s", mcptest.Text(res))
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["row_count"] != 2.0 || sc["truncated"] != true {
		t.Errorf("postgres query %v", sc)
	}
	su := mcptest.StartStdio(t, bin, []string{"DATABASE_URL=" + admin})
	b := mcptest.FailCode(t, su.Call("supabase_query", map[string]any{"table": "quotes"}), mcperr.PermissionDeny)
	if !strings.Contains(b.Message, "superuser") || strings.Contains(b.Message, admin) {
		t.Errorf("superuser refusal: %s", b.Message)
	}
}

// TestStdioREST: the binary against the PostgREST fake with the service
// role key from its environment variable (SUPABASE_SERVICE_ROLE_KEY).
func TestStdioREST(t *testing.T) {
	inner := testenv.Embedded(t)
	fake := postgrestfake.New(inner.Backend, testenv.Key, "", nil)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"NEXT_PUBLIC_SUPABASE_URL=" + srv.URL, "SUPABASE_SERVICE_ROLE_KEY=" + testenv.Key,
		"MCP_LOG_LEVEL=debug"})
	res := c.Call("supabase_update", map[string]any{"table": "quotes", "filters": []any{map[string]any{"column": "id", "op": "eq", "value": "quote-456"}}, "data": []any{map[string]any{"column": "status", "value": "shortlisted"}}})
	if res.IsError {
		t.Fatalf("update: %s", mcptest.Text(res))
	}
	last := fake.Last()
	if last.Method != "PATCH" || last.Header.Get("apikey") != testenv.Key || last.Header.Get("Authorization") != "Bearer "+testenv.Key ||
		last.Header.Get("Prefer") != "return=representation, handling=strict, max-affected=100" || last.RawQuery != "id=eq.quote-456&select=*" {
		t.Errorf("request %s %s %v", last.Method, last.RawQuery, last.Header)
	}
	if strings.Contains(c.Stderr(), testenv.Key) {
		t.Errorf("the key reached the logs")
	}
	r := c.Call("supabase_list_tables", nil)
	if r.IsError || !strings.Contains(mcptest.Text(r), "quotes (table, ~3 rows") {
		t.Errorf("list over REST: %s", mcptest.Text(r))
	}
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestConfiguration: every half-made or ambiguous configuration is a
// start-up error naming what to set, and exits 2 like any bad flag or
// value: a configuration error is never reported as a failure while
// running (exit 1).
func TestConfiguration(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"both backends", nil, map[string]string{"SUPABASE_URL": "https://x.supabase.co", "SUPABASE_KEY": "k", "DATABASE_URL": "postgres://a@b/c"}, 2, "choose one"},
		{"url without key", nil, map[string]string{"SUPABASE_URL": "https://x.supabase.co"}, 2, "SUPABASE_KEY"},
		{"key without url", nil, map[string]string{"SUPABASE_KEY": "k"}, 2, "SUPABASE_URL"},
		{"two keys", nil, map[string]string{"SUPABASE_URL": "https://x.supabase.co", "SUPABASE_KEY": "a", "SUPABASE_SERVICE_ROLE_KEY": "b"}, 2, "set one"},
		{"postgres without url", []string{"--backend", "postgres"}, nil, 2, "DATABASE_URL"},
		{"bad url", nil, map[string]string{"SUPABASE_URL": "ftp://x", "SUPABASE_KEY": "k"}, 2, "http(s)"},
		{"system schema", []string{"--schemas", "pg_catalog"}, nil, 2, "database system"},
		{"embedded other schema", []string{"--schemas", "app"}, nil, 2, "one schema"},
		{"bad pattern", []string{"--deny-tables", "a.b.c"}, nil, 2, "pattern"},
		{"malformed postgres url", nil, map[string]string{"DATABASE_URL": "postgres://a@b:notaport/c"}, 2, "not valid"},
		{"typo in read-only", nil, map[string]string{"MCP_READ_ONLY": "ture"}, 2, "true or false"},
		{"typo in backend", []string{"--backend", "postgress"}, nil, 2, "postgres"},
		{"limits", []string{"--default-limit", "5000"}, nil, 2, "max-limit"},
		{"zero guard", []string{"--max-affected-rows", "0"}, nil, 2, "positive"},
		{"migrate without url", []string{"migrate"}, nil, 2, "DATABASE_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := map[string]string{"MCP_DATA_DIR": dir}
			for k, v := range tc.env {
				e[k] = v
			}
			var out, errb bytes.Buffer
			code := kit.Main(spec(), tc.args, env(e), strings.NewReader(""), &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("code %d (want %d), stderr %q (want %q)", code, tc.code, errb.String(), tc.want)
			}
			for _, secret := range []string{"postgres://a@b/c"} {
				if strings.Contains(errb.String(), secret) {
					t.Errorf("stderr shows a secret: %s", errb.String())
				}
			}
		})
	}
}

// TestSetupInProcess covers Setup's wiring of each backend in process.
func TestSetupInProcess(t *testing.T) {
	_, app := testenv.PostgresURLs(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		ro   bool
	}{
		{"embedded", nil, []string{"--db-path", filepath.Join(t.TempDir(), "x.db"), "--sample-data=false"}, false},
		{"postgres read-only", map[string]string{"DATABASE_URL": app}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			f := cli.NewFlags("supabase-mcp")
			s.Flags(f)
			if err := f.Parse(tc.args, env(tc.env)); err != nil {
				t.Fatal(err)
			}
			dataDir := t.TempDir()
			getenv := func(k string) string {
				if k == "MCP_DATA_DIR" {
					return dataDir
				}
				return tc.env[k]
			}
			e := kit.NewEnv(s, getenv, io.Discard, "error", nil)
			e.ReadOnly = tc.ro
			tools, cleanup, err := s.Setup(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			srv, err := kit.New(s.Info, tools, kit.Options{ReadOnly: e.ReadOnly})
			if err != nil {
				t.Fatal(err)
			}
			c := mcptest.NewInProcess(t, srv, "")
			res := c.Call("supabase_list_tables", nil)
			if res.IsError || !strings.Contains(mcptest.Text(res), "iso_workflows") {
				t.Errorf("list: %s", mcptest.Text(res))
			}
		})
	}
}
