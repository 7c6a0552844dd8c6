package tools_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
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
	res := c.Call(tool, args)
	record(t, tool, args, res)
	return ok(t, res)
}

func failCode(t testing.TB, c *mcptest.Client, tool string, args any, code mcperr.Code) mcperr.Body {
	t.Helper()
	res := c.Call(tool, args)
	record(t, tool, args, res)
	return mcptest.FailCode(t, res, code)
}

// outcomes records, per backend and per test (its name without the
// backend), the outcome of every call the suite makes through call and
// failCode, in order: forEach compares them across backends.
var outcomes = struct {
	sync.Mutex
	m map[string]map[string][]string // backend → test → outcomes
}{m: map[string]map[string][]string{}}

func record(t testing.TB, tool string, args any, res *mcp.CallToolResult) {
	backend, test := "", []string{}
	for _, part := range strings.Split(t.Name(), "/") {
		if backend == "" && slices.ContainsFunc(testenv.Openers, func(o testenv.Opener) bool { return o.Name == part }) {
			backend = part
			continue
		}
		test = append(test, part)
	}
	if backend == "" {
		return
	}
	key := strings.Join(test, "/")
	outcomes.Lock()
	defer outcomes.Unlock()
	if outcomes.m[backend] == nil {
		outcomes.m[backend] = map[string][]string{}
	}
	o := outcome(res)
	if m, _ := args.(map[string]any); tool == "supabase_query" && m["orderBy"] == nil && !res.IsError {
		// Without an order, which rows come first is the database's
		// choice (PostgreSQL's follows the heap): only counts compare.
		var r struct {
			RowCount, Count any
		}
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &r)
		o = fmt.Sprintf("ok unordered row_count=%v count=%v", r.RowCount, r.Count)
	}
	if backend == "postgrest" && tool == "supabase_describe_table" && !res.IsError {
		o = notCompared
	}
	outcomes.m[backend][key] = append(outcomes.m[backend][key], tool+": "+o)
}

// forEach is testenv.ForEach, then a check that every backend came to
// PostgreSQL's outcome (code and result) at every call of the test: a
// divergence fails even where the test's own assertions are loose.
func forEach(t *testing.T, fn func(t *testing.T, e *testenv.Env)) {
	t.Helper()
	testenv.ForEach(t, fn)
	outcomes.Lock()
	defer outcomes.Unlock()
	for _, o := range testenv.Openers {
		for key, outs := range outcomes.m[o.Name] {
			if key != t.Name() && !strings.HasPrefix(key, t.Name()+"/") {
				continue
			}
			want := outcomes.m["postgres"][key]
			for i := range max(len(outs), len(want)) {
				var got, exp string
				if i < len(outs) {
					got = outs[i]
				}
				if i < len(want) {
					exp = want[i]
				}
				if !sameOutcome(got, exp) {
					t.Errorf("%s call %d on %s: %s", key, i+1, o.Name, diff(got, exp))
					break
				}
			}
		}
	}
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

func strs(xs ...string) []any { return anys(xs...) }

// anys is items as a list of any, as decoded JSON arguments hold them.
func anys[T any](items ...T) []any {
	out := make([]any, len(items))
	for i, x := range items {
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

// cond is one filter condition; for op in, v is the list of values.
func cond(col, op string, v any) map[string]any {
	if op == "in" {
		return map[string]any{"column": col, "op": op, "values": v}
	}
	return map[string]any{"column": col, "op": op, "value": v}
}

func eq(col string, v any) map[string]any { return cond(col, "eq", v) }

// negate sets not on a condition.
func negate(c map[string]any) map[string]any {
	c["not"] = true
	return c
}

// where is a list of conditions, for filters or a group of or.
func where(conds ...map[string]any) []any { return anys(conds...) }

// anyOf is the or argument: groups of conditions.
func anyOf(groups ...[]any) []any { return anys(groups...) }

// cells is one row to write from column, value pairs; a map or slice
// value is sent as JSON text (a json or jsonb column).
func cells(kv ...any) []any {
	return named("column", kv)
}

// params is a function's arguments from name, value pairs, as cells.
func params(kv ...any) []any {
	return named("name", kv)
}

func named(key string, kv []any) []any {
	var out []any
	for i := 0; i+1 < len(kv); i += 2 {
		c := map[string]any{key: kv[i]}
		switch v := kv[i+1].(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(v)
			c["json"] = string(b)
		default:
			c["value"] = v
		}
		out = append(out, c)
	}
	return out
}

// rowList is the data of an insert: its rows.
func rowList(rows ...[]any) []any { return anys(rows...) }

func asc(col string) []any  { return []any{map[string]any{"column": col}} }
func desc(col string) []any { return []any{map[string]any{"column": col, "direction": "desc"}} }
