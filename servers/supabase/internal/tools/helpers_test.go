package tools_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
	"github.com/mcp-fleet/mcp-fleet/shared/untrusted"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// deps are the tools' dependencies on e with default limits.
func deps(t testing.TB, e *testenv.Env) tools.Deps {
	t.Helper()
	p := &backend.Policy{}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	return tools.Deps{Backend: e.Backend, Policy: p, Limits: query.DefaultLimits()}
}

// serve gives an in-process MCP client on the tools, as agent under policy
// (nil: no policy).
func serve(t testing.TB, d tools.Deps, policy *acl.Policy, agent string) *mcptest.Client {
	t.Helper()
	s, err := kit.New(kit.Info{Name: "supabase"}, tools.All(d), kit.Options{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, s, agent)
}

func client(t testing.TB, e *testenv.Env) *mcptest.Client { return serve(t, deps(t, e), nil, "") }

// ok asserts success and returns the structured result, after checking
// that rows came fenced in the text and plain, the same, in
// structuredContent.
func ok(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	text := mcptest.Text(res)
	if res.IsError {
		t.Fatalf("tool failed: %s", text)
	}
	var structured map[string]any
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil || json.Unmarshal(raw, &structured) != nil {
		t.Fatalf("no structuredContent object: %v %s", err, raw)
	}
	body := text
	if _, hasRows := structured["rows"]; hasRows || structured["value"] != nil {
		inner, fenced := untrusted.Unfence(text)
		if !fenced || !strings.HasPrefix(text, untrusted.Notice) {
			t.Fatalf("rows are not fenced as untrusted data in the text part: %.300s", text)
		}
		body = inner
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(body), &fromText); err != nil {
		t.Fatalf("text part is not the JSON result: %v: %.300s", err, body)
	}
	if !reflect.DeepEqual(fromText, structured) {
		t.Fatalf("text and structuredContent differ:\ntext %v\nstructured %v", fromText, structured)
	}
	return structured
}

func call(t testing.TB, c *mcptest.Client, tool string, args any) map[string]any {
	t.Helper()
	return ok(t, c.Call(tool, args))
}

func failCode(t testing.TB, c *mcptest.Client, tool string, args any, code mcperr.Code) mcperr.Body {
	t.Helper()
	return mcptest.FailCode(t, c.Call(tool, args), code)
}

func rowsOf(t testing.TB, r map[string]any) []map[string]any {
	t.Helper()
	list, ok := r["rows"].([]any)
	if !ok {
		t.Fatalf("no rows in %v", r)
	}
	out := make([]map[string]any, len(list))
	for i, x := range list {
		out[i], _ = x.(map[string]any)
	}
	return out
}

func column(rows []map[string]any, name string) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r[name]
	}
	return out
}

func strs(xs ...string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// count returns the rows of table matching filters (through the tool).
func count(t testing.TB, c *mcptest.Client, table string, filters any) int {
	t.Helper()
	args := map[string]any{"table": table, "count": true, "limit": 1}
	if filters != nil {
		args["filters"] = filters
	}
	r := call(t, c, "supabase_query", args)
	n, _ := r["count"].(float64)
	return int(n)
}
