package kit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
)

const testPolicy = `
version: 1
agents:
  reader:
    tools: [echo, slow]
  writer:
    tools: [echo, write]
  nobody:
    tools: []
`

// cancelSeen records that a handler observed its context ending.
type probe struct {
	mu        sync.Mutex
	cancelled bool
	started   chan struct{}
}

func testTools(p *probe) []kit.Tool {
	return []kit.Tool{
		{
			Name: "echo", Title: "Echo", Description: "Echo text back.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{
				"text":{"type":"string","description":"what to echo","minLength":1},
				"count":{"type":"integer","minimum":1,"maximum":5,"default":1},
				"mode":{"type":"string","enum":["plain","upper"]},
				"api_token":{"type":"string"}},
				"required":["text"],"additionalProperties":false}`),
			Effect: kit.ReadOnly,
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				var a struct {
					Text  string `json:"text"`
					Count int    `json:"count"`
					Mode  string `json:"mode"`
				}
				if err := json.Unmarshal(c.Args, &a); err != nil {
					return nil, err
				}
				if a.Count == 0 {
					a.Count = 1
				}
				out := strings.Repeat(a.Text, a.Count)
				if a.Mode == "upper" {
					out = strings.ToUpper(out)
				}
				return map[string]any{"text": out, "agent": c.Agent, "correlation_id": logging.CorrelationID(ctx)}, nil
			},
		},
		{
			Name: "write", Description: "Pretend to overwrite something.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			Effect:      kit.Destructive, Idempotent: true,
			Handler: func(ctx context.Context, c *kit.Call) (any, error) { return "written", nil },
		},
		{
			Name: "append", Description: "Pretend to append.", OpenWorld: true,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Effect:      kit.Additive,
			Handler:     func(ctx context.Context, c *kit.Call) (any, error) { return nil, nil },
		},
		{
			Name: "slow", Description: "Wait until cancelled or timed out.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Effect:      kit.ReadOnly, Timeout: 100 * time.Millisecond,
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				if p != nil && p.started != nil {
					close(p.started)
				}
				c.Progress(ctx, 1, 2, "waiting")
				<-ctx.Done()
				if p != nil {
					p.mu.Lock()
					p.cancelled = true
					p.mu.Unlock()
				}
				return nil, ctx.Err()
			},
		},
		{
			Name: "boom", Description: "Panic.",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Effect:      kit.ReadOnly,
			Handler:     func(ctx context.Context, c *kit.Call) (any, error) { panic("kaboom") },
		},
		{
			Name: "leak", Description: "Fail with an internal error whose text holds a secret.",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Effect:      kit.ReadOnly,
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				return nil, errors.New("dial postgres://admin:hunter2-secret@db.internal:5432 failed")
			},
		},
		{
			Name: "notfound", Description: "Fail with a typed error.",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Effect:      kit.ReadOnly,
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				return nil, mcperr.New(mcperr.NotFound, "no such thing")
			},
		},
	}
}

func newServer(t *testing.T, opts kit.Options) *kit.Server {
	t.Helper()
	s, err := kit.New(kit.Info{Name: "test", Version: "1.0", Instructions: "Test server."}, testTools(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPolicy(t *testing.T) *acl.Policy {
	t.Helper()
	p, err := acl.Parse([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnnotationsFollowEffect(t *testing.T) {
	c := mcptest.NewInProcess(t, newServer(t, kit.Options{}), "")
	type hints struct{ ro, destructive, idem, open bool }
	want := map[string]hints{
		"echo":   {true, false, true, false},
		"write":  {false, true, true, false},
		"append": {false, false, false, true},
	}
	seen := 0
	for _, tool := range c.ListTools() {
		w, ok := want[tool.Name]
		if !ok {
			continue
		}
		seen++
		a := tool.Annotations
		got := hints{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint}
		if got != w {
			t.Errorf("%s: hints %+v, want %+v", tool.Name, got, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("saw %d of %d tools", seen, len(want))
	}
}

func TestValidationErrors(t *testing.T) {
	c := mcptest.NewInProcess(t, newServer(t, kit.Options{}), "")
	cases := []struct {
		name     string
		args     any
		field    string
		value    any
		expected string
	}{
		{"missing required", map[string]any{}, "text", nil, "a value (required)"},
		{"extra argument", map[string]any{"text": "a", "bogus": 1}, "bogus", nil, "no such property"},
		{"wrong type", map[string]any{"text": 42}, "text", float64(42), "string"},
		{"below minimum", map[string]any{"text": "a", "count": 0}, "count", float64(0), ">= 1"},
		{"not in enum", map[string]any{"text": "a", "mode": "loud"}, "mode", "loud", `one of "plain", "upper"`},
		{"empty string", map[string]any{"text": ""}, "text", "", "at least 1 characters"},
		{"null arguments", nil, "text", nil, "a value (required)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := mcptest.FailCode(t, c.Call("echo", tc.args), mcperr.Validation)
			if b.Data.Field != tc.field || b.Data.Expected != tc.expected {
				t.Fatalf("field %q expected %q, want %q %q (message %q)", b.Data.Field, b.Data.Expected, tc.field, tc.expected, b.Message)
			}
			if tc.value != nil && b.Data.Value != tc.value {
				t.Fatalf("value %#v, want %#v", b.Data.Value, tc.value)
			}
			if b.Data.Retryable {
				t.Fatal("a validation error must not be retryable")
			}
		})
	}
}

func TestSuccessCarriesStructuredContent(t *testing.T) {
	c := mcptest.NewInProcess(t, newServer(t, kit.Options{}), "")
	res := c.Call("echo", map[string]any{"text": "ab", "count": 2, "mode": "upper"})
	var out struct {
		Text string `json:"text"`
		CID  string `json:"correlation_id"`
	}
	mcptest.OK(t, res, &out)
	if out.Text != "ABAB" || out.CID == "" {
		t.Fatalf("got %+v", out)
	}
	if res.StructuredContent == nil {
		t.Fatal("structuredContent missing")
	}
}

func TestACL(t *testing.T) {
	s := newServer(t, kit.Options{Policy: mustPolicy(t)})
	t.Run("list is filtered per agent", func(t *testing.T) {
		for agent, want := range map[string]string{"reader": "echo,slow", "writer": "echo,write", "nobody": "", "stranger": ""} {
			got := strings.Join(mcptest.NewInProcess(t, s, agent).ToolNames(), ",")
			if got != want {
				t.Errorf("agent %s sees %q, want %q", agent, got, want)
			}
		}
	})
	t.Run("denied call", func(t *testing.T) {
		c := mcptest.NewInProcess(t, s, "reader")
		b := mcptest.FailCode(t, c.Call("write", map[string]any{}), mcperr.PermissionDeny)
		if !strings.Contains(b.Message, "reader") || !strings.Contains(b.Message, "write") {
			t.Fatalf("message %q should name agent and tool", b.Message)
		}
	})
	t.Run("unknown agent fails closed", func(t *testing.T) {
		c := mcptest.NewInProcess(t, s, "stranger")
		mcptest.FailCode(t, c.Call("echo", map[string]any{"text": "x"}), mcperr.PermissionDeny)
	})
	t.Run("denied before validation", func(t *testing.T) {
		// A denied agent learns nothing about the schema.
		c := mcptest.NewInProcess(t, s, "nobody")
		mcptest.FailCode(t, c.Call("echo", map[string]any{}), mcperr.PermissionDeny)
	})
	t.Run("allowed call", func(t *testing.T) {
		c := mcptest.NewInProcess(t, s, "writer")
		mcptest.OK(t, c.Call("write", map[string]any{}), nil)
	})
	t.Run("prompt lists only allowed tools", func(t *testing.T) {
		c := mcptest.NewInProcess(t, s, "reader")
		res, err := c.Raw().GetPrompt(engine.WithAgent(context.Background(), "reader"), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: engine.DescriptionsPrompt}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Messages[0].Content.(mcp.TextContent).Text
		if !strings.Contains(text, "## echo") || strings.Contains(text, "## write") {
			t.Fatalf("prompt:\n%s", text)
		}
		if !strings.Contains(text, "- text (string, required): what to echo") {
			t.Fatalf("prompt lacks argument line:\n%s", text)
		}
	})
}

func TestToolSelection(t *testing.T) {
	cases := []struct {
		name string
		opts kit.Options
		want string
	}{
		{"read-only", kit.Options{ReadOnly: true}, "boom,echo,leak,notfound,slow"},
		{"include", kit.Options{Include: []string{"echo", "write"}}, "echo,write"},
		{"exclude", kit.Options{Exclude: []string{"boom", "leak", "notfound", "slow"}}, "append,echo,write"},
		{"read-only and include", kit.Options{ReadOnly: true, Include: []string{"echo", "write"}}, "echo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(newServer(t, tc.opts).ToolNames(), ",")
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := kit.New(kit.Info{Name: "x"}, testTools(nil), kit.Options{Include: []string{"ech"}}); err == nil || !strings.Contains(err.Error(), `"ech"`) {
		t.Fatalf("a mistyped tool name must be an error, got %v", err)
	}
	if _, err := kit.New(kit.Info{Name: "x"}, testTools(nil), kit.Options{ReadOnly: true, Include: []string{"write"}}); err == nil {
		t.Fatal("serving nothing must be an error")
	}
}

func TestBadDefinitions(t *testing.T) {
	ok := testTools(nil)[0]
	cases := map[string]func(*kit.Tool){
		"no effect":      func(t *kit.Tool) { t.Effect = 0 },
		"bad name":       func(t *kit.Tool) { t.Name = "file/read" },
		"no description": func(t *kit.Tool) { t.Description = "" },
		"no handler":     func(t *kit.Tool) { t.Handler = nil },
		"schema not obj": func(t *kit.Tool) { t.InputSchema = json.RawMessage(`{"type":"string"}`) },
		"bad schema": func(t *kit.Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			tool := ok
			mutate(&tool)
			if _, err := kit.New(kit.Info{Name: "x"}, []kit.Tool{tool}, kit.Options{}); err == nil {
				t.Fatal("expected a registration error")
			}
		})
	}
	if _, err := kit.New(kit.Info{Name: "x"}, []kit.Tool{ok, ok}, kit.Options{}); err == nil {
		t.Fatal("duplicate tool must be an error")
	}
}

func TestFailuresKeepServerAlive(t *testing.T) {
	var logs mcptest.Buffer
	log := logging.New(&logs, "info", logging.NewRedactor("hunter2-secret"), "test")
	s := newServer(t, kit.Options{Logger: &log, Redactor: logging.NewRedactor("hunter2-secret")})
	c := mcptest.NewInProcess(t, s, "")

	mcptest.FailCode(t, c.Call("boom", nil), mcperr.Internal)
	b := mcptest.FailCode(t, c.Call("leak", nil), mcperr.Internal)
	if strings.Contains(b.Message, "hunter2") || strings.Contains(b.Message, "db.internal") {
		t.Fatalf("internal error leaked its cause: %q", b.Message)
	}
	b = mcptest.FailCode(t, c.Call("notfound", nil), mcperr.NotFound)
	if b.Message != "no such thing" {
		t.Fatalf("typed error message lost: %q", b.Message)
	}
	mcptest.OK(t, c.Call("echo", map[string]any{"text": "still here"}), nil)
	mcptest.WaitFor(t, "4 audit lines", func() bool { return strings.Count(logs.String(), `"event":"tool_call"`) == 4 })
	if strings.Contains(logs.String(), "hunter2-secret") {
		t.Fatal("secret value reached the logs")
	}
	if !strings.Contains(logs.String(), "kaboom") {
		t.Fatal("the panic should be logged for operators")
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	t.Run("tool timeout", func(t *testing.T) {
		p := &probe{}
		s, err := kit.New(kit.Info{Name: "t"}, testTools(p), kit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := mcptest.NewInProcess(t, s, "")
		b := mcptest.FailCode(t, c.Call("slow", nil), mcperr.Timeout)
		if !strings.Contains(b.Message, "100ms") || !b.Data.Retryable {
			t.Fatalf("timeout body %+v", b)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.cancelled {
			t.Fatal("handler context was not cancelled at the timeout")
		}
	})
	t.Run("client cancellation reaches the handler", func(t *testing.T) {
		p := &probe{started: make(chan struct{})}
		s := slowServer(t, p)
		c := mcptest.NewInProcess(t, s, "")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := c.CallErr(ctx, "slow", nil); done <- err }()
		<-p.started
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("cancelled call did not return")
		}
	})
}

func TestRateLimit(t *testing.T) {
	lim, err := ratelimit.Parse("60/min,burst=2")
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, newServer(t, kit.Options{Limiter: lim}), "")
	for i := 0; i < 2; i++ {
		mcptest.OK(t, c.Call("echo", map[string]any{"text": "x"}), nil)
	}
	b := mcptest.FailCode(t, c.Call("echo", map[string]any{"text": "x"}), mcperr.RateLimit)
	if b.Data.RetryAfterSeconds == nil || *b.Data.RetryAfterSeconds < 1 || !b.Data.Retryable {
		t.Fatalf("rate limit body %+v", b)
	}
	// Another tool has its own bucket.
	mcptest.OK(t, c.Call("write", map[string]any{}), nil)
}

func TestAuditLog(t *testing.T) {
	var logs mcptest.Buffer
	red := logging.NewRedactor()
	log := logging.New(&logs, "info", red, "test")
	s := newServer(t, kit.Options{Logger: &log, Redactor: red, Policy: mustPolicy(t)})
	c := mcptest.NewInProcess(t, s, "reader")
	long := strings.Repeat("é", 400)
	mcptest.OK(t, c.Call("echo", map[string]any{"text": long, "api_token": "tok-abcdef-123456"}), nil)
	mcptest.OK(t, c.Call("echo", map[string]any{"text": "https://x.example/?token=url-secret-123"}), nil)
	mcptest.FailCode(t, c.Call("write", map[string]any{}), mcperr.PermissionDeny)
	mcptest.WaitFor(t, "3 audit lines", func() bool { return strings.Count(logs.String(), `"event":"tool_call"`) == 3 })

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		if m["event"] == "tool_call" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("want 3 audit lines, got %d:\n%s", len(lines), logs.String())
	}
	if strings.Contains(logs.String(), "url-secret-123") {
		t.Fatal("a secret in a URL query reached the audit log")
	}
	// Audit lines are written just after each response, so their order
	// follows the calls only loosely; find them by content.
	var ok, denied map[string]any
	for _, l := range lines {
		switch {
		case l["outcome"] == "error":
			denied = l
		case ok == nil && l["args"].(map[string]any)["api_token"] != nil:
			ok = l
		}
	}
	if ok == nil || denied == nil {
		t.Fatalf("audit lines %v", lines)
	}
	if ok["agent"] != "reader" || ok["tool"] != "echo" || ok["outcome"] != "ok" || ok["correlation_id"] == "" || ok["duration"] == nil {
		t.Fatalf("audit line %v", ok)
	}
	args := ok["args"].(map[string]any)
	if args["api_token"] != logging.Mask {
		t.Fatalf("secret-named argument not redacted: %v", args["api_token"])
	}
	if txt := args["text"].(string); len(txt) > 300 || !strings.Contains(txt, "bytes)") {
		t.Fatalf("long argument not truncated: %d bytes", len(txt))
	}
	if denied["outcome"] != "error" || denied["error_code"] != "PERMISSION_DENIED" {
		t.Fatalf("denied audit line %v", denied)
	}
}

func TestMetricsCountCalls(t *testing.T) {
	s := newServer(t, kit.Options{})
	c := mcptest.NewInProcess(t, s, "")
	mcptest.OK(t, c.Call("echo", map[string]any{"text": "x"}), nil)
	mcptest.FailCode(t, c.Call("echo", map[string]any{}), mcperr.Validation)
	// Metrics are recorded just after the response is written.
	mcptest.WaitFor(t, "two recorded calls", func() bool { return calls(s, "echo") == 2 })
	for _, ts := range s.Engine().Metrics().Snapshot() {
		if ts.Tool != "echo" {
			continue
		}
		if ts.Calls != 2 || ts.Errors != 1 || ts.ByCode["VALIDATION_ERROR"] != 1 || ts.P50Ms <= 0 {
			t.Fatalf("echo metrics %+v", ts)
		}
		return
	}
	t.Fatal("no metrics for echo")
}

func TestConcurrentCalls(t *testing.T) {
	s := newServer(t, kit.Options{})
	c := mcptest.NewInProcess(t, s, "")
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.CallErr(context.Background(), "echo", map[string]any{"text": "x"})
			if err != nil || res.IsError {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d concurrent calls failed", failed.Load())
	}
}

// TestAuditOmitAndDuplicateKeys: omitted arguments appear in the audit line
// as their size only, and arguments naming a key twice are refused before
// they reach the handler or the log.
func TestAuditOmitAndDuplicateKeys(t *testing.T) {
	var logs mcptest.Buffer
	log := logging.New(&logs, "info", nil, "test")
	tools := testTools(nil)
	tools[0].AuditOmit = []string{"text"}
	s, err := kit.New(kit.Info{Name: "t"}, tools, kit.Options{Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "")
	mcptest.OK(t, c.Call("echo", map[string]any{"text": "PRIVATE=hunter22"}), nil)
	mcptest.WaitFor(t, "the audit line", func() bool { return strings.Contains(logs.String(), `"event":"tool_call"`) })
	if strings.Contains(logs.String(), "hunter22") || !strings.Contains(logs.String(), `"text":"[omitted: 16 bytes]"`) {
		t.Fatalf("audit line:\n%s", logs.String())
	}

	logs.Reset()
	msg := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"/etc/passwd","text":"ok"}}}`
	raw := s.Handle(context.Background(), "", []byte(msg))
	if !strings.Contains(string(raw), `duplicate key \"text\"`) || !strings.Contains(string(raw), "VALIDATION_ERROR") {
		t.Fatalf("duplicate keys: %s", raw)
	}
	if strings.Contains(logs.String(), "/etc/passwd") {
		t.Fatalf("ambiguous arguments reached the audit log:\n%s", logs.String())
	}
}
