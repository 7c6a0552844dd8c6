package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

const pkg = "github.com/mcp-fleet/mcp-fleet/servers/avinode/cmd/avinode-mcp"

var allTools = []string{"cancel_trip", "create_trip", "create_watch", "delete_watch", "find_trips", "get_messages", "get_quotes", "get_rfq",
	"get_trip", "list_watches", "list_webhook_events", "requeue_webhook_event", "search_airports", "search_empty_legs", "send_message"}

const (
	apiToken  = "app-token-5f1c2d9e"
	authToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtY3AifQ.c2lnbmF0dXJl"
)

func binary(t testing.TB) string {
	t.Helper()
	return mcptest.Build(t, pkg)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// mockEnv runs the simulated marketplace in dataDir with every answer due
// at once, so a test needs no clock.
func mockEnv(dataDir string) []string {
	return []string{"MCP_DATA_DIR=" + dataDir, "AVINODE_MOCK_FIRST_RESPONSE=0s", "AVINODE_MOCK_RESPONSE_WINDOW=0s"}
}

func in(days int) string {
	return time.Now().UTC().Add(time.Duration(days) * 24 * time.Hour).Format(time.RFC3339)
}

type quotes struct {
	Quotes []struct {
		QuoteID string  `json:"quote_id"`
		RFQID   string  `json:"rfq_id"`
		Total   float64 `json:"total_price"`
	} `json:"quotes"`
	Status struct {
		OperatorsAsked int `json:"operators_asked"`
		Quoted         int `json:"quoted"`
		Pending        int `json:"pending"`
	} `json:"quote_status"`
}

// TestStdioLifecycle drives the built binary over stdio with no
// configuration: create → quotes → message → reply → cancel; then a second
// process on the same data directory reads the same trip.
func TestStdioLifecycle(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	c := mcptest.StartStdio(t, binary(t), mockEnv(data))
	if c.Init.ServerInfo.Name != "avinode" || !strings.Contains(c.Init.Instructions, "create_trip") {
		t.Errorf("initialize: %+v", c.Init.ServerInfo)
	}
	if got := sorted(c.ToolNames()); !slices.Equal(got, allTools) {
		t.Errorf("tools = %q, want %q", got, allTools)
	}
	var trip struct {
		TripID, DeepLink, NextAction, Marketplace string
	}
	res := c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KMIA", "passengers": 4, "departure_date": in(3)})
	mcptest.Structured(t, res, &struct {
		TripID      *string `json:"trip_id"`
		DeepLink    *string `json:"deep_link"`
		NextAction  *string `json:"next_action"`
		Marketplace *string `json:"marketplace"`
	}{&trip.TripID, &trip.DeepLink, &trip.NextAction, &trip.Marketplace})
	if !strings.HasPrefix(trip.TripID, "atrip-") || trip.NextAction != "OPEN_AVINODE" || trip.Marketplace != "mock" || trip.DeepLink == "" {
		t.Fatalf("create_trip = %+v", trip)
	}
	var q quotes
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	if len(q.Quotes) == 0 || q.Status.Quoted == 0 {
		t.Fatalf("no quote arrived: %+v", q)
	}
	rfq := q.Quotes[0].RFQID
	mcptest.OK(t, c.Call("send_message", map[string]any{"rfq_id": rfq, "message": "Is catering included?"}), nil)
	var thread struct {
		Messages []struct{ From, Text string } `json:"messages"`
	}
	mcptest.Structured(t, c.Call("get_messages", map[string]any{"rfq_id": rfq}), &thread)
	if len(thread.Messages) != 2 || thread.Messages[1].From != "seller" || !strings.Contains(thread.Messages[1].Text, "Catering") {
		t.Errorf("thread = %+v", thread)
	}
	var cancelled struct {
		Status string `json:"status"`
	}
	mcptest.Structured(t, c.Call("cancel_trip", map[string]any{"trip_id": trip.TripID, "reason": "CHANGED"}), &cancelled)
	if cancelled.Status != "cancelled" {
		t.Errorf("cancel_trip = %+v", cancelled)
	}

	// Another process, the same store.
	other := mcptest.StartStdio(t, binary(t), mockEnv(data))
	var view struct {
		Status string `json:"status"`
		RFQs   []any  `json:"rfqs"`
	}
	mcptest.Structured(t, other.Call("get_trip", map[string]any{"trip_id": trip.TripID}), &view)
	if view.Status != "cancelled" || len(view.RFQs) != q.Status.OperatorsAsked {
		t.Errorf("the other process sees %+v", view)
	}
}

// TestStdioAvinode runs the binary on the Avinode client against the fake.
func TestStdioAvinode(t *testing.T) {
	t.Parallel()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	env := []string{"MCP_DATA_DIR=" + t.TempDir(), "AVINODE_API_KEY=" + apiToken, "AVINODE_AUTH_TOKEN=" + authToken,
		"AVINODE_API_URL=" + fake.BaseURL(), "MCP_LOG_LEVEL=debug"}
	c := mcptest.StartStdio(t, binary(t), env)
	var trip struct {
		TripID      string `json:"trip_id"`
		Marketplace string `json:"marketplace"`
	}
	mcptest.Structured(t, c.Call("create_trip", map[string]any{"departure_airport": "EGGW", "arrival_airport": "LFMN", "passengers": 2, "departure_date": in(4)}), &trip)
	if trip.Marketplace != "avinode" || fake.Trips() != 1 {
		t.Fatalf("create_trip = %+v (fake has %d trips)", trip, fake.Trips())
	}
	rfq, lift := fake.AddRFQ(trip.TripID, fakeavinode.Seller{ID: "s", Name: "Thames Executive Air", Country: "GB"},
		fakeavinode.Aircraft{Type: "Phenom 300", Category: "Light jet", Tail: "G-TXEC"})
	fake.Quote(rfq, lift, 10400, "GBP", 24*time.Hour, "Confirmed.")
	var q quotes
	mcptest.Structured(t, c.Call("get_quotes", map[string]any{"trip_id": trip.TripID}), &q)
	if len(q.Quotes) != 1 || q.Quotes[0].Total != 10400 {
		t.Errorf("get_quotes = %+v", q)
	}
	b := mcptest.FailCode(t, c.Call("get_trip", map[string]any{"trip_id": "atrip-77"}), mcperr.NotFound)
	if b.Data.Field != "trip_id" {
		t.Errorf("unknown trip: %+v", b)
	}
	// Secrets never reach the log, even at debug level. Log lines reach
	// stderr a little after the answers they go with.
	logs := c.Stderr()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs, "upstream request") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		logs = c.Stderr()
	}
	for _, secret := range []string{apiToken, authToken} {
		if strings.Contains(logs, secret) {
			t.Errorf("a secret reached stderr:\n%s", logs)
		}
	}
	if !strings.Contains(logs, "upstream request") || !strings.Contains(logs, `"marketplace":"avinode"`) {
		t.Errorf("stderr lacks the upstream debug lines or the start-up line:\n%s", logs)
	}
}

func TestACL(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	acl := mcptest.RepoFile(t, "configs", "acl.yaml")
	// The policy alone grants flight_search no cancelling and no operator
	// messages, and the error monitor no avinode tool: those are the
	// opt-in grant files of configs/acl.d.
	flight := []string{"create_trip", "create_watch", "find_trips", "get_quotes", "get_rfq", "get_trip",
		"list_watches", "search_airports", "search_empty_legs"}
	grant := func(name string) string { return filepath.Join(filepath.Dir(acl), "acl.d", name+".yaml") }
	tests := []struct {
		agent     string
		grants    []string
		tools     []string
		resources bool // may read the trip resources
	}{
		{"flight_search", nil, flight, true},
		{"flight_search", []string{grant("flight-search-cancel-trips"), grant("flight-search-operator-messages")},
			sorted(append([]string{"cancel_trip", "get_messages", "send_message"}, flight...)), true},
		{"proposal_analysis", nil, []string{"get_quotes", "get_rfq"}, true},
		{"orchestrator", nil, nil, false},
		{"communication", nil, nil, false},
		{"client_data", nil, nil, false},
		{"error_monitor", nil, nil, false},
		{"error_monitor", []string{grant("error-monitor-webhook-queue")}, []string{"list_webhook_events"}, false},
		{"operator", nil, []string{"list_webhook_events", "requeue_webhook_event"}, false},
		{"developer", nil, nil, false},
	}
	// One trip to read, created without a policy.
	data := t.TempDir()
	owner := mcptest.StartStdio(t, bin, mockEnv(data))
	var trip struct {
		TripID string `json:"trip_id"`
	}
	mcptest.OK(t, owner.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KBOS", "passengers": 2, "departure_date": in(2)}), &trip)
	for _, tc := range tests {
		name := tc.agent
		if len(tc.grants) > 0 {
			name += "+grants"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := strings.Join(append([]string{acl}, tc.grants...), string(os.PathListSeparator))
			c := mcptest.StartStdio(t, bin, append(mockEnv(data), "MCP_ACL_FILE="+files, "MCP_AGENT="+tc.agent))
			if got := sorted(c.ToolNames()); !slices.Equal(got, tc.tools) {
				t.Errorf("tools = %q, want %q", got, tc.tools)
			}
			for _, tool := range allTools {
				if slices.Contains(tc.tools, tool) {
					continue
				}
				b := mcptest.FailCode(t, c.Call(tool, map[string]any{"trip_id": trip.TripID}), mcperr.PermissionDeny)
				if !strings.Contains(b.Message, tc.agent) {
					t.Errorf("%s: %q should name the agent", tool, b.Message)
				}
			}
			if slices.Contains(tc.tools, "list_webhook_events") {
				mcptest.OK(t, c.Call("list_webhook_events", map[string]any{"status": "dead_letter"}), nil)
			}
			if slices.Contains(tc.tools, "requeue_webhook_event") {
				mcptest.FailCode(t, c.Call("requeue_webhook_event", map[string]any{"event_id": "wh-00000000000000000000"}), mcperr.NotFound)
			}
			for _, uri := range []string{"avinode://trips/" + trip.TripID, "avinode://trips/" + trip.TripID + "/quotes"} {
				req := mcp.ReadResourceRequest{}
				req.Params.URI = uri
				_, err := c.Raw().ReadResource(context.Background(), req)
				if (err == nil) != tc.resources {
					t.Errorf("read %s: %v", uri, err)
				}
			}
			templates, err := c.Raw().ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
			if err != nil || (len(templates.ResourceTemplates) == 2) != tc.resources {
				t.Errorf("resource templates %+v, %v", templates, err)
			}
		})
	}
	// Nothing the denied agents tried changed the trip.
	var view struct {
		Status string `json:"status"`
	}
	mcptest.Structured(t, owner.Call("get_trip", map[string]any{"trip_id": trip.TripID}), &view)
	if view.Status != "open" {
		t.Errorf("after the denied calls: %+v", view)
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	c := mcptest.StartStdio(t, binary(t), mockEnv(t.TempDir()), "--read-only")
	want := []string{"find_trips", "get_messages", "get_quotes", "get_rfq", "get_trip", "list_watches", "list_webhook_events", "search_airports",
		"search_empty_legs"}
	if got := sorted(c.ToolNames()); !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
}

// run executes the binary to completion with empty stdin.
func run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return mcptest.Run(t, binary(t), env, args...)
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	mcptest.CheckCLI(t, binary(t), []string{apiToken, authToken}, []mcptest.CLICase{
		{Name: "--help", Args: []string{"--help"}, Stdout: []string{"avinode-mcp", "AVINODE_API_TOKEN", "AVINODE_API_KEY", "AVINODE_AUTH_TOKEN",
			"AVINODE_CLIENT_ID", "AVINODE_CLIENT_SECRET", "AVINODE_API_URL", "AVINODE_MOCK_FIRST_RESPONSE", "--read-only", "MCP_ACL_FILE"}},
		{Name: "--version", Args: []string{"--version"}, Stdout: []string{"avinode-mcp dev (commit unknown)"}},
		{Name: "docs", Args: []string{"docs"}, Stdout: []string{"## avinode-mcp reference", "create_trip", "avinode://trips/{id}/quotes"}},
		{Name: "mock key and empty stdin", Env: []string{"AVINODE_API_TOKEN=mock_demo"}},
		{Name: "api token without auth", Env: []string{"AVINODE_API_TOKEN=" + apiToken}, Code: 2, Stderr: []string{"AVINODE_AUTH_TOKEN", "AVINODE_CLIENT_ID"}},
		{Name: "half OAuth", Env: []string{"AVINODE_API_TOKEN=" + apiToken, "AVINODE_CLIENT_ID=id"}, Code: 2, Stderr: []string{"AVINODE_CLIENT_SECRET"}},
		{Name: "two different tokens", Env: []string{"AVINODE_API_TOKEN=a-token", "AVINODE_API_KEY=b-token"}, Code: 2, Stderr: []string{"AVINODE_API_KEY"}},
		{Name: "plain http api url", Env: []string{"AVINODE_API_TOKEN=" + apiToken, "AVINODE_AUTH_TOKEN=" + authToken, "AVINODE_API_URL=http://avinode.example.com/api"},
			Code: 2, Stderr: []string{"https"}},
		{Name: "operators out of range", Args: []string{"--mock-operators", "0"}, Code: 2, Stderr: []string{"mock-operators"}},
		{Name: "negative timeout", Env: []string{"AVINODE_TIMEOUT=0s"}, Code: 2, Stderr: []string{"AVINODE_TIMEOUT"}},
		{Name: "bad duration", Env: []string{"AVINODE_MOCK_FIRST_RESPONSE=3"}, Code: 2, Stderr: []string{"did you mean 3s"}},
		{Name: "unwritable store", Args: []string{"--db-path", "/proc/avinode.db"}, Code: 2, Stderr: []string{"avinode store", "a path setting is wrong"}},
		{Name: "malformed DATABASE_URL", Env: []string{"DATABASE_URL=postgres://fleet:hunter2-db-secret@127.0.0.1:notaport/avinode"}, Code: 2,
			Stderr: []string{"DATABASE_URL is not a valid PostgreSQL URL"}},
	})
}

// TestDocs keeps docs/avinode.md's reference in step with the definitions.
func TestDocs(t *testing.T) {
	mcptest.CheckReference(t, spec(), "../../../../docs/avinode.md", mcptest.Updating())
}

// TestSetupInProcess covers spec().Setup for both marketplaces.
func TestSetupInProcess(t *testing.T) {
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken, ClientID: "id", ClientSecret: "secret-value"})
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"mock", map[string]string{}, "mock"},
		{"avinode", map[string]string{"AVINODE_API_TOKEN": apiToken, "AVINODE_AUTH_TOKEN": authToken, "AVINODE_API_URL": fake.BaseURL()}, "avinode"},
		{"oauth", map[string]string{"AVINODE_API_TOKEN": apiToken, "AVINODE_CLIENT_ID": "id", "AVINODE_CLIENT_SECRET": "secret-value",
			"AVINODE_API_URL": fake.BaseURL()}, "avinode"},
		{"postgres, processing inline", map[string]string{"AVINODE_API_TOKEN": apiToken, "AVINODE_AUTH_TOKEN": authToken,
			"AVINODE_API_URL": fake.BaseURL(), "DATABASE_URL": pgtest.URL(t), "AVINODE_WEBHOOK_PROCESSING": "inline"}, "avinode"},
		{"mock, processing by the service", map[string]string{"AVINODE_WEBHOOK_PROCESSING": "service"}, "mock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, env, err := mcptest.Setup(t, spec(), nil, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := kit.New(env.Info, tools, kit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := mcptest.NewInProcess(t, srv, "")
			var res struct {
				Marketplace string `json:"marketplace"`
			}
			mcptest.OK(t, c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KBOS", "passengers": 2, "departure_date": in(2)}), &res)
			if res.Marketplace != tc.want {
				t.Errorf("marketplace %q, want %q", res.Marketplace, tc.want)
			}
			if env.Redactor.String("x "+apiToken) == "x "+apiToken && tc.want == "avinode" {
				t.Error("the API token was not registered with the redactor")
			}
		})
	}
}
