package kit_test

//lint:file-ignore SA1019 the 2025-11-25 protocol era (initialize, subscribe, setLevel, ping) is what these tests cover beside 2026-07-28

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// askServer serves askTools.
func askServer(t *testing.T, runs *atomic.Int32) *kit.Server {
	t.Helper()
	s, err := kit.New(kit.Info{Name: "test"}, askTools(runs), kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// askTools ask the user before acting, the way a sending tool asks for a
// confirmation; runs counts how often the handler ran.
func askTools(runs *atomic.Int32) []kit.Tool {
	return append(testTools(nil),
		kit.Tool{Name: "confirm", Description: "Ask twice, then act.", Effect: kit.Additive,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"what":{"type":"string"}}}`),
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				runs.Add(1)
				first, err := c.Elicit(ctx, "Send it?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`))
				if err != nil {
					return nil, err
				}
				if first.Action != "accept" {
					return map[string]any{"sent": false, "action": first.Action}, nil
				}
				second, err := c.Elicit(ctx, "Really?", nil)
				if err != nil {
					return nil, err
				}
				return map[string]any{"sent": second.Action == "accept", "first": first.Content}, nil
			}},
		kit.Tool{Name: "roots", Description: "List the client's roots.", Effect: kit.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				r, err := c.Roots(ctx)
				if err != nil {
					return nil, err
				}
				return map[string]any{"roots": r, "can": c.Can("roots/list")}, nil
			}},
	)
}

type yesUser struct{ asked atomic.Int32 }

func (y *yesUser) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	y.asked.Add(1)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"ok": true}}}, nil
}

type someRoots struct{}

func (someRoots) ListRoots(ctx context.Context, r mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work/project", Name: "project"}}}, nil
}

// TestElicitationBothEras: the same handler gets the user's answers over
// stdio before 2026-07-28 (requests to the client) and from 2026-07-28
// (input-required results, the handler run again with the answers).
func TestElicitationBothEras(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			var runs atomic.Int32
			s := askServer(t, &runs)
			user := &yesUser{}
			opts := []client.ClientOption{client.WithElicitationHandler(user), client.WithRootsHandler(someRoots{})}
			if legacy {
				opts = append(opts, client.WithLegacyProtocolOnly())
			}
			c := mcptest.NewInProcess(t, s, "", opts...)
			var out map[string]any
			mcptest.OK(t, c.Call("confirm", map[string]any{"what": "proposal"}), &out)
			if out["sent"] != true || user.asked.Load() != 2 {
				t.Fatalf("result %v after %d questions", out, user.asked.Load())
			}
			wantRuns := int32(1)
			if !legacy {
				wantRuns = 3 // asked, asked again, done
			}
			if runs.Load() != wantRuns {
				t.Fatalf("handler ran %d times, want %d", runs.Load(), wantRuns)
			}
			mcptest.OK(t, c.Call("roots", nil), &out)
			if !strings.Contains(fmt.Sprint(out["roots"]), "file:///work/project") || out["can"] != true {
				t.Fatalf("roots: %v", out)
			}
		})
	}
}

// TestElicitationWithoutCapability: a client that cannot ask its user gets
// a clear refusal (before 2026-07-28 a tool error; after, -32021).
func TestElicitationWithoutCapability(t *testing.T) {
	var runs atomic.Int32
	s := askServer(t, &runs)
	c := mcptest.NewInProcess(t, s, "", client.WithLegacyProtocolOnly())
	b := mcptest.FailCode(t, c.Call("confirm", nil), "PERMISSION_DENIED")
	if !strings.Contains(b.Message, "elicitation/create") {
		t.Fatalf("message %q", b.Message)
	}
	modern := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`)))
	if !strings.Contains(modern, `"code":-32021`) {
		t.Fatalf("modern without elicitation: %s", modern)
	}
	var out map[string]any
	mcptest.OK(t, c.Call("roots", nil), &out)
	if out["roots"] != nil || out["can"] != false {
		t.Fatalf("roots without the capability: %v", out)
	}
}

// TestRequestStateIsSigned: an input-required result carries a state the
// client must echo; altering it, or replaying it for other arguments, is
// refused with -32602.
func TestRequestStateIsSigned(t *testing.T) {
	var runs atomic.Int32
	s := askServer(t, &runs)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	first := s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{"what":"a"},`+meta+`}}`))
	var res struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(first, &res); err != nil || res.Result.ResultType != "input_required" || res.Result.RequestState == "" || len(res.Result.InputRequests) != 1 {
		t.Fatalf("first round: %s", first)
	}
	answer := `"inputResponses":{"q1":{"action":"accept","content":{"ok":true}}}`
	retry := func(args, state string) string {
		return string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":`+args+`,`+answer+`,"requestState":"`+state+`",`+meta+`}}`)))
	}
	if got := retry(`{"what":"a"}`, res.Result.RequestState+"x"); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "requestState") {
		t.Fatalf("tampered state: %s", got)
	}
	if got := retry(`{"what":"other"}`, res.Result.RequestState); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("state replayed for other arguments: %s", got)
	}
	if got := retry(`{"what":"a"}`, res.Result.RequestState); !strings.Contains(got, `"resultType":"input_required"`) || !strings.Contains(got, `"q2"`) {
		t.Fatalf("second round should ask the second question: %s", got)
	}
}

// TestElicitationOverHTTP: before 2026-07-28 the question travels on the
// POST's event stream and the answer comes back as a POST; from 2026-07-28
// as input-required results over plain POSTs.
func TestElicitationOverHTTP(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			var runs atomic.Int32
			s := askServer(t, &runs)
			base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
			tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + httpToken}))
			if err != nil {
				t.Fatal(err)
			}
			user := &yesUser{}
			opts := []client.ClientOption{client.WithElicitationHandler(user)}
			if legacy {
				opts = append(opts, client.WithLegacyProtocolOnly())
			}
			c := client.NewClient(tr, opts...)
			ctx := ctx10(t)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			req := mcp.InitializeRequest{}
			req.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
			if legacy {
				req.Params.ProtocolVersion = legacyVersion
			}
			if _, err := c.Initialize(ctx, req); err != nil {
				t.Fatal(err)
			}
			res := clientCall(t, c, "confirm", map[string]any{"what": "x"})
			if res.IsError || !strings.Contains(mcptest.Text(res), `"sent":true`) || user.asked.Load() != 2 {
				t.Fatalf("result %s after %d questions", mcptest.Text(res), user.asked.Load())
			}
		})
	}
}

type echoModel struct{}

func (echoModel) CreateMessage(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Model: "echo-1", StopReason: "endTurn",
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("summary of the request")}}, nil
}

// TestSamplingBothEras: a handler asks the client's model for a completion.
func TestSamplingBothEras(t *testing.T) {
	summarize := kit.Tool{Name: "summarize", Description: "Ask the client's model.", Effect: kit.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			raw, err := c.Sample(ctx, json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Summarize."}}],"maxTokens":50}`))
			if err != nil {
				return nil, err
			}
			return json.RawMessage(raw), nil
		}}
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			s, err := kit.New(kit.Info{Name: "test"}, append(testTools(nil), summarize), kit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts := []client.ClientOption{client.WithSamplingHandler(echoModel{})}
			if legacy {
				opts = append(opts, client.WithLegacyProtocolOnly())
			}
			c := mcptest.NewInProcess(t, s, "", opts...)
			if text := mcptest.Text(c.Call("summarize", nil)); !strings.Contains(text, "summary of the request") || !strings.Contains(text, "echo-1") {
				t.Fatalf("sampling result %s", text)
			}
		})
	}
}
