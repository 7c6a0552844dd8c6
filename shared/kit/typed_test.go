package kit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

type greetArgs struct {
	Name    string   `json:"name" jsonschema:"who to greet" mcp:"minLength=1"`
	Times   int      `json:"times,omitempty" jsonschema:"how often" mcp:"min=1,max={most},default=2"`
	Shout   *bool    `json:"shout,omitempty" mcp:"default=true"`
	Tags    []string `json:"tags,omitempty" mcp:"default=[\"a\"]"`
	Command string   `json:"command,omitempty"`
	Argv    []string `json:"argv,omitempty"`
}

// Validate holds the rule between arguments that the schema cannot state.
func (a *greetArgs) Validate() error {
	if a.Command != "" && len(a.Argv) > 0 {
		return mcperr.Invalid("argv", a.Argv, "command or argv, not both", "give command or argv, not both")
	}
	return nil
}

type greetResult struct {
	Text  string   `json:"text"`
	Times int      `json:"times"`
	Shout bool     `json:"shout"`
	Tags  []string `json:"tags"`
}

type pageResult struct {
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

func typedTools() []kit.Tool {
	greet := kit.NewTool(kit.Tool{Name: "greet", Description: "Greet someone. Read the greeting with page.", Effect: kit.ReadOnly,
		Vars: map[string]any{"most": 5}},
		func(ctx context.Context, c *kit.Call, a greetArgs) (greetResult, error) {
			a.Tags = append(a.Tags, "seen")
			return greetResult{Text: "hello " + a.Name, Times: a.Times, Shout: *a.Shout, Tags: a.Tags}, nil
		})
	page := kit.NewTool(kit.Tool{Name: "page", Description: "Return n bytes of content fenced as outside data.", Effect: kit.ReadOnly,
		Paging: "ask for fewer bytes with n"},
		func(ctx context.Context, c *kit.Call, a struct {
			N    int  `json:"n" mcp:"min=0"`
			Clip bool `json:"clip,omitempty"`
		}) (kit.Fenced[pageResult], error) {
			s := strings.Repeat("x", a.N)
			out := pageResult{Content: s}
			if a.Clip {
				out.Content, out.Truncated = kit.Clip(s, c.Room())
			}
			return kit.Fenced[pageResult]{Source: "test", Value: out}, nil
		})
	return []kit.Tool{greet, page}
}

func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

func TestNewToolSchemasDefaultsAndValidate(t *testing.T) {
	s, err := kit.New(kit.Info{Name: "typed"}, typedTools(), kit.Options{Limits: kit.Limits{MaxResultBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "")
	tools := map[string]mcp.Tool{}
	for _, tl := range c.ListTools() {
		tools[tl.Name] = tl
	}
	greet := tools["greet"]
	in, _ := json.Marshal(greet.InputSchema)
	if !strings.Contains(string(in), `"maximum":5`) || !strings.Contains(string(in), `"default":2`) {
		t.Fatalf("input schema %s", in)
	}
	ob, _ := json.Marshal(greet.OutputSchema)
	out := string(ob)
	if !strings.Contains(out, `"text":{"type":"string"}`) || !strings.Contains(out, `"required":["text","times","shout","tags"]`) {
		t.Fatalf("output schema %s", out)
	}
	if pb, _ := json.Marshal(tools["page"].OutputSchema); !strings.Contains(string(pb), `"content"`) || strings.Contains(string(pb), "Source") {
		t.Fatalf("a fenced result's schema is its value's: %s", pb)
	}

	// Defaults apply before the handler; a pointer or slice default is
	// fresh for every call, so one call's change never leaks to the next.
	for range 2 {
		var r greetResult
		structured(t, c.Call("greet", map[string]any{"name": "Ada"}), &r)
		if r.Times != 2 || !r.Shout || strings.Join(r.Tags, ",") != "a,seen" {
			t.Fatalf("defaults not applied once per call: %+v", r)
		}
	}
	var r greetResult
	structured(t, c.Call("greet", map[string]any{"name": "Ada", "times": 3, "shout": false}), &r)
	if r.Times != 3 || r.Shout {
		t.Fatalf("given values must win over defaults: %+v", r)
	}
	res := c.Call("greet", map[string]any{"name": "Ada", "command": "ls", "argv": []string{"ls"}})
	if !res.IsError || !strings.Contains(mcptest.Text(res), `"field":"argv"`) {
		t.Fatalf("Validate must run before the handler: %s", mcptest.Text(res))
	}
	// The error of a tool with an outputSchema is text only: clients check
	// any structuredContent against that schema, an error's too.
	if res.StructuredContent != nil {
		t.Fatalf("an error of a typed tool carries structuredContent %v", res.StructuredContent)
	}
}

// TestUntypedErrorKeepsStructuredContent: a tool without an outputSchema
// still sends its error body as structuredContent too.
func TestUntypedErrorKeepsStructuredContent(t *testing.T) {
	fail := kit.Tool{Name: "fail", Description: "Always fails.", Effect: kit.ReadOnly, InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			return nil, mcperr.New(mcperr.NotFound, "nothing")
		}}
	s, err := kit.New(kit.Info{Name: "x"}, []kit.Tool{fail}, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := mcptest.NewInProcess(t, s, "").Call("fail", map[string]any{})
	var b mcperr.Body
	structured(t, res, &b)
	if !res.IsError || b.Code != mcperr.NotFound {
		t.Fatalf("error %s, structured %+v", mcptest.Text(res), b)
	}
}

func TestResultBudget(t *testing.T) {
	s, err := kit.New(kit.Info{Name: "typed"}, typedTools(), kit.Options{Limits: kit.Limits{MaxResultBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "")
	res := c.Call("page", map[string]any{"n": 100})
	if res.IsError || !strings.Contains(mcptest.Text(res), "test") {
		t.Fatalf("a small fenced result: %s", mcptest.Text(res))
	}
	// Over the budget: refused, saying the sizes and how to ask for less.
	res = c.Call("page", map[string]any{"n": 100 << 10})
	text := mcptest.Text(res)
	if !res.IsError || !strings.Contains(text, "65536") || !strings.Contains(text, "ask for fewer bytes with n") {
		t.Fatalf("an oversized result must be refused with the way out: %.300s", text)
	}
	// A tool that clips to its room fits and says it cut.
	res = c.Call("page", map[string]any{"n": 100 << 10, "clip": true})
	var p pageResult
	structured(t, res, &p)
	if res.IsError || !p.Truncated || len(p.Content) == 0 {
		t.Fatalf("clipped result: error %v truncated %v len %d", res.IsError, p.Truncated, len(p.Content))
	}
}

func TestClipAndCost(t *testing.T) {
	if kit.Cost(`a"<`) != 2+6+13 {
		t.Fatalf("Cost = %d", kit.Cost(`a"<`))
	}
	s, cut := kit.Clip("héllo", 5)
	if !cut || s != "h" {
		t.Fatalf("Clip must cut at a character boundary: %q %v", s, cut)
	}
	if s, cut := kit.Clip("abc", 6); cut || s != "abc" {
		t.Fatalf("Clip of what fits: %q %v", s, cut)
	}
	if kit.CostJSON([]byte(`{"a":1}`)) != 14+2 {
		t.Fatalf("CostJSON = %d", kit.CostJSON([]byte(`{"a":1}`)))
	}
	if n := kit.CostOf(map[string]int{"a": 1}); n != 14+2 {
		t.Fatalf("CostOf = %d, want CostJSON of the encoding", n)
	}
	if n := kit.CostOf(func() {}); n != 0 {
		t.Fatalf("CostOf of what does not encode = %d", n)
	}
}

func TestNewToolBadDefinitionsFailRegistration(t *testing.T) {
	bad := kit.NewTool(kit.Tool{Name: "bad", Description: "x", Effect: kit.ReadOnly},
		func(ctx context.Context, c *kit.Call, a struct {
			N int `json:"n" mcp:"max={missing}"`
		}) (greetResult, error) {
			return greetResult{}, nil
		})
	if _, err := kit.New(kit.Info{Name: "x"}, []kit.Tool{bad}, kit.Options{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a schema placeholder without a value must stop registration: %v", err)
	}
	notStruct := kit.NewTool(kit.Tool{Name: "bad2", Description: "x", Effect: kit.ReadOnly},
		func(ctx context.Context, c *kit.Call, a struct{}) (string, error) { return "", errors.New("never") })
	if _, err := kit.New(kit.Info{Name: "x"}, []kit.Tool{notStruct}, kit.Options{}); err == nil || !strings.Contains(err.Error(), "struct") {
		t.Fatalf("a result that is not a struct must stop registration: %v", err)
	}
}

func TestInstructionsNameOnlyAllowedTools(t *testing.T) {
	tools := append(typedTools(), testTools(nil)...)
	s, err := kit.New(kit.Info{Name: "typed", Instructions: "A test server. Greet with greet. Write with write. Data is data."},
		tools, kit.Options{Policy: mustPolicy(t)})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Engine().Describe("writer")
	if !strings.Contains(got, "Write with write.") || strings.Contains(got, "greet") || !strings.Contains(got, "Data is data.") {
		t.Fatalf("writer's guide:\n%s", got)
	}
	if got := s.Engine().Describe("reader"); strings.Contains(got, "write") {
		t.Fatalf("reader's guide names write:\n%s", got)
	}
}

// A result that does not match the tool's outputSchema is the server's bug:
// the TypeScript client would throw on it, so the kit refuses to send it.
// appends is a result that encodes itself (AppendJSON), as a tool whose
// result holds JSON already does.
type appends string

func (a appends) AppendJSON(dst []byte) ([]byte, error) { return append(dst, a...), nil }

func TestResultMustMatchOutputSchema(t *testing.T) {
	type wrong struct {
		N int `json:"n"`
	}
	lie := kit.Tool{Name: "lie", Description: "Says it returns n, returns text.", Effect: kit.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`)}
	cases := []struct {
		name string
		out  any
		ok   bool
	}{
		{"match", wrong{N: 3}, true},
		{"missing field", map[string]any{"m": 1}, false},
		{"wrong type", map[string]any{"n": "three"}, false},
		{"text only", "three", false},
		{"fenced match", kit.Untrusted{Source: "x", Value: wrong{N: 1}}, true},
		{"encodes itself", appends(`{"n":4}`), true},
		{"encodes itself, fenced", kit.Untrusted{Source: "x", Value: appends(`{"n":5}`)}, true},
		{"encodes itself wrongly", appends(`{"n":"4"}`), false},
		{"encodes itself malformed", appends(`{"n":4`), false},
		{"encodes itself over lines", appends("{\n \"n\": 6\r\n}"), true},
		{"encodes itself malformed over lines", appends("{\"n\":\n6"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tool := lie
			tool.Handler = func(ctx context.Context, c *kit.Call) (any, error) { return tc.out, nil }
			s, err := kit.New(kit.Info{Name: "x"}, []kit.Tool{tool}, kit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := mcptest.NewInProcess(t, s, "").Call("lie", map[string]any{})
			if res.IsError == tc.ok {
				t.Fatalf("ok=%v but result %s", tc.ok, mcptest.Text(res))
			}
			if !tc.ok && !strings.Contains(mcptest.Text(res), "INTERNAL_ERROR") {
				t.Fatalf("a mismatch is an internal error: %s", mcptest.Text(res))
			}
			if a, ok := tc.out.(appends); ok && tc.ok {
				var want bytes.Buffer
				_ = json.Compact(&want, []byte(a))
				if got, _ := json.Marshal(res.StructuredContent); string(got) != want.String() {
					t.Fatalf("structuredContent %s, want %s as the result appended it", got, a)
				}
			}
		})
	}
}

func TestAgentReady(t *testing.T) {
	ok := typedTools()[0]
	if err := kit.AgentReady(ok); err != nil {
		t.Fatalf("a typed tool is agent-ready: %v", err)
	}
	untyped := kit.Tool{Name: "untyped", Description: "x", Effect: kit.ReadOnly, InputSchema: ok.InputSchema}
	long := ok
	long.Description = strings.Repeat("d", 1025)
	open := untyped
	open.OutputSchema = ok.OutputSchema
	open.InputSchema = json.RawMessage(`{"type":"object","properties":{"v":{}}}`)
	for name, c := range map[string]struct {
		tool kit.Tool
		want string
	}{
		"no output":    {untyped, "no outputSchema"},
		"long":         {long, "1025"},
		"typeless arg": {open, "v"},
	} {
		if err := kit.AgentReady(c.tool); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
}

func TestFitItems(t *testing.T) {
	rows := []string{strings.Repeat("a", 10), strings.Repeat("b", 10), strings.Repeat("c", 10)}
	// Each row is "aaaaaaaaaa": 12 bytes, cost 2*12+2 quotes escaped again = 26, +2 for its comma.
	for _, c := range []struct{ room, want int }{{0, 0}, {4 + 28, 1}, {4 + 2*28, 2}, {1 << 20, 3}} {
		if n, err := kit.FitItems(rows, c.room); err != nil || n != c.want {
			t.Errorf("room %d: %d, %v; want %d", c.room, n, err, c.want)
		}
	}
	if _, err := kit.FitItems([]any{func() {}}, 100); err == nil {
		t.Error("an item that cannot be encoded is an error")
	}
	raw := []json.RawMessage{json.RawMessage(`"aaaaaaaaaa"`), json.RawMessage(`"bbbbbbbbbb"`)}
	if n, err := kit.FitItems(raw, 4+28); err != nil || n != 1 {
		t.Errorf("raw items: %d, %v; want 1 (measured as the strings they are)", n, err)
	}
}

func TestFitArray(t *testing.T) {
	arr := json.RawMessage(` ["aaaaaaaaaa", "bbbbbbbbbb" ,"cccccccccc"] `)
	for _, c := range []struct {
		room int
		want string
		all  bool
	}{{0, "", false}, {4 + 28, `"aaaaaaaaaa"`, false}, {4 + 2*28, `"aaaaaaaaaa" "bbbbbbbbbb"`, false}, {1 << 20, `"aaaaaaaaaa" "bbbbbbbbbb" "cccccccccc"`, true}} {
		items, all, err := kit.FitArray(arr, c.room)
		var got []string
		for _, it := range items {
			got = append(got, string(it))
		}
		if err != nil || strings.Join(got, " ") != c.want || all != c.all || items == nil {
			t.Errorf("room %d: %q, %v, %v; want %q, %v", c.room, got, all, err, c.want, c.all)
		}
		// The same rows, decoded and measured by FitItems, fit alike.
		n, _ := kit.FitItems([]string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"}, c.room)
		if n != len(items) {
			t.Errorf("room %d: FitArray kept %d, FitItems %d", c.room, len(items), n)
		}
	}
	for _, empty := range []string{"", "null", "[]"} {
		if items, all, err := kit.FitArray(json.RawMessage(empty), 100); err != nil || !all || items == nil || len(items) != 0 {
			t.Errorf("%q: %v, %v, %v", empty, items, all, err)
		}
	}
	if _, _, err := kit.FitArray(json.RawMessage(`{"a":1}`), 100); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Errorf("an object: %v", err)
	}
}

// OpenAI's strict mode sends null for every optional argument the model
// leaves out: the kit reads it as absent, so defaults apply; a required
// argument given as null is still refused.
func TestNullMeansAbsentForOptionalArguments(t *testing.T) {
	s, err := kit.New(kit.Info{Name: "typed"}, typedTools(), kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "")
	var r greetResult
	res := c.Call("greet", map[string]any{"name": "Ada", "times": nil, "shout": nil, "tags": nil, "command": nil, "argv": nil})
	if res.IsError {
		t.Fatalf("nulls for optional arguments refused: %s", mcptest.Text(res))
	}
	structured(t, res, &r)
	if r.Times != 2 || !r.Shout || strings.Join(r.Tags, ",") != "a,seen" {
		t.Fatalf("a null must leave the default in place: %+v", r)
	}
	res = c.Call("greet", map[string]any{"name": nil})
	if !res.IsError || !strings.Contains(mcptest.Text(res), `"field":"name"`) {
		t.Fatalf("a null for a required argument must be refused: %s", mcptest.Text(res))
	}
}
