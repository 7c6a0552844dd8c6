package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

const basePolicy = `
version: 1
agents:
  orchestrator:
    description: coordination
    tools: [supabase_query, supabase_insert]
  communication:
    tools: [send_email]
`

func mustParse(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return p
}

func TestParseErrors(t *testing.T) {
	d1 := digest("token-one-0123456789")
	tests := []struct {
		name    string
		src     string
		wantErr string
	}{
		{"empty document", ``, "parse"},
		{"not yaml", "version: [1\n", "parse"},
		{"typo tols", "version: 1\nagents:\n  a:\n    tols: [x]\n", "field tols not found"},
		{"unknown top-level key", "version: 1\nagent:\n  a:\n    tools: [x]\n", "field agent not found"},
		{"unknown token key", "version: 1\nagents:\n  a:\n    tools: [x]\n    token: abc\n", "field token not found"},
		{"missing version", "agents:\n  a:\n    tools: [x]\n", "version must be 1, got 0"},
		{"version 2", "version: 2\nagents:\n  a:\n    tools: [x]\n", "version must be 1, got 2"},
		{"version string", "version: one\nagents:\n  a:\n    tools: [x]\n", "parse"},
		{"no agents key", "version: 1\n", "no agents defined"},
		{"empty agents", "version: 1\nagents: {}\n", "no agents defined"},
		{"upper-case agent", "version: 1\nagents:\n  Orchestrator:\n    tools: [x]\n", `agent "Orchestrator"`},
		{"agent starts with digit", "version: 1\nagents:\n  1bot:\n    tools: [x]\n", `agent "1bot"`},
		{"agent with space", "version: 1\nagents:\n  \"my bot\":\n    tools: [x]\n", `agent "my bot"`},
		{"agent too long", "version: 1\nagents:\n  a" + strings.Repeat("b", 64) + ":\n    tools: [x]\n", "a name is a lowercase letter"},
		{"tool with dot", "version: 1\nagents:\n  a:\n    tools: [supabase.query]\n", `tool "supabase.query" is not a valid tool name`},
		{"tool with space", "version: 1\nagents:\n  a:\n    tools: [\"send email\"]\n", `tool "send email"`},
		{"empty tool", "version: 1\nagents:\n  a:\n    tools: [\"\"]\n", `tool ""`},
		{"tool too long", "version: 1\nagents:\n  a:\n    tools: [" + strings.Repeat("t", 129) + "]\n", "not a valid tool name"},
		{"tools not a list", "version: 1\nagents:\n  a:\n    tools: x\n", "parse"},
		{"digest not hex", "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: [zz" + d1[2:] + "]\n", "not a hex sha256 digest"},
		{"digest too short", "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: [" + d1[:62] + "]\n", "not a hex sha256 digest"},
		{"digest too long", "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: [" + d1 + "00]\n", "not a hex sha256 digest"},
		{"raw token instead of digest", "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: [token-one-0123456789]\n", "not a hex sha256 digest"},
		{"duplicate digest across agents", "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: [" + d1 + "]\n  b:\n    tools: [x]\n    token_sha256: [" + strings.ToUpper(d1) + "]\n", "already used by agent"},
		{"duplicate digest in one agent", "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: [" + d1 + ", " + d1 + "]\n", `already used by agent "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.src))
			if err == nil {
				t.Fatalf("Parse succeeded (agents %v), want error containing %q", p.Agents(), tc.wantErr)
			}
			if p != nil {
				t.Errorf("Parse returned a policy along with error %v", err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		wantAgents []string
		wantTools  map[string][]string
	}{
		{
			name:       "base",
			src:        basePolicy,
			wantAgents: []string{"communication", "orchestrator"},
			wantTools: map[string][]string{
				"orchestrator":  {"supabase_insert", "supabase_query"},
				"communication": {"send_email"},
			},
		},
		{
			name:       "agent with no tools",
			src:        "version: 1\nagents:\n  idle:\n    description: nothing\n",
			wantAgents: []string{"idle"},
			wantTools:  map[string][]string{"idle": {}},
		},
		{
			name:       "null agent spec",
			src:        "version: 1\nagents:\n  idle:\n",
			wantAgents: []string{"idle"},
			wantTools:  map[string][]string{"idle": {}},
		},
		{
			name:       "names at the edges of the patterns",
			src:        "version: 1\nagents:\n  a:\n    tools: [X, a-b_C9, " + strings.Repeat("t", 128) + "]\n  z" + strings.Repeat("9", 63) + ":\n    tools: [x, x]\n",
			wantAgents: []string{"a", "z" + strings.Repeat("9", 63)},
			wantTools: map[string][]string{
				"a":                           {"X", "a-b_C9", strings.Repeat("t", 128)},
				"z" + strings.Repeat("9", 63): {"x"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustParse(t, tc.src)
			if got := p.Agents(); !reflect.DeepEqual(got, tc.wantAgents) {
				t.Errorf("Agents() = %v, want %v", got, tc.wantAgents)
			}
			for a, want := range tc.wantTools {
				if !p.HasAgent(a) {
					t.Errorf("HasAgent(%q) = false", a)
				}
				if got := p.Tools(a); !reflect.DeepEqual(got, want) {
					t.Errorf("Tools(%q) = %v, want %v", a, got, want)
				}
			}
			if p.HasTokens() {
				t.Error("HasTokens() = true for a policy without tokens")
			}
		})
	}
}

func TestAllowedFailsClosed(t *testing.T) {
	p := mustParse(t, basePolicy)
	tests := []struct {
		agent, tool string
		want        bool
	}{
		{"orchestrator", "supabase_query", true},
		{"orchestrator", "supabase_insert", true},
		{"orchestrator", "supabase_delete", false}, // not granted
		{"orchestrator", "send_email", false},      // granted to someone else
		{"orchestrator", "", false},                // empty tool
		{"orchestrator", "SUPABASE_QUERY", false},  // case matters
		{"communication", "send_email", true},
		{"communication", "supabase_query", false},
		{"unknown", "supabase_query", false},       // unknown agent
		{"", "supabase_query", false},              // no agent
		{"Orchestrator", "supabase_query", false},  // case matters
		{"orchestrator ", "supabase_query", false}, // no trimming
	}
	for _, tc := range tests {
		if got := p.Allowed(tc.agent, tc.tool); got != tc.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tc.agent, tc.tool, got, tc.want)
		}
	}
	if got := p.Tools("unknown"); got != nil {
		t.Errorf("Tools(unknown) = %v, want nil", got)
	}
	if p.HasAgent("unknown") {
		t.Error("HasAgent(unknown) = true")
	}
}

func TestAgentForTokenFromFileDigest(t *testing.T) {
	tokA := "orchestrator-token-0123456789abcdef"
	tokB1 := "comm-token-one-0123456789"
	tokB2 := "comm-token-two-0123456789"
	src := "version: 1\nagents:\n" +
		"  orchestrator:\n    tools: [supabase_query]\n    token_sha256: [\"" + digest(tokA) + "\"]\n" +
		// upper-case hex and surrounding spaces are accepted
		"  communication:\n    tools: [send_email]\n    token_sha256: [\"  " + strings.ToUpper(digest(tokB1)) + " \", " + digest(tokB2) + "]\n"
	p := mustParse(t, src)
	if !p.HasTokens() {
		t.Fatal("HasTokens() = false")
	}
	tests := []struct {
		token     string
		wantAgent string
		wantOK    bool
	}{
		{tokA, "orchestrator", true},
		{tokB1, "communication", true},
		{tokB2, "communication", true},
		{digest(tokA), "", false}, // the digest itself is not a token
		{"", "", false},
		{tokA + " ", "", false},
		{strings.ToUpper(tokA), "", false},
	}
	for _, tc := range tests {
		got, ok := p.AgentForToken(tc.token)
		if got != tc.wantAgent || ok != tc.wantOK {
			t.Errorf("AgentForToken(%q) = %q, %v; want %q, %v", tc.token, got, ok, tc.wantAgent, tc.wantOK)
		}
	}
}

func TestAddToken(t *testing.T) {
	p := mustParse(t, basePolicy)
	if p.HasTokens() {
		t.Fatal("HasTokens() before AddToken")
	}
	const tok = "a-long-random-token-for-orchestrator"
	err := p.AddToken("ghost", tok)
	if err == nil {
		t.Fatal("AddToken for an unknown agent succeeded")
	}
	if !strings.Contains(err.Error(), `"ghost"`) || !strings.Contains(err.Error(), "communication, orchestrator") {
		t.Errorf("error %q should name the agent and the known agents", err)
	}
	if _, ok := p.AgentForToken(tok); ok || p.HasTokens() {
		t.Fatal("a refused token was bound anyway")
	}

	if err := p.AddToken("orchestrator", tok); err != nil {
		t.Fatalf("AddToken: %v", err)
	}
	if !p.HasTokens() {
		t.Error("HasTokens() = false after AddToken")
	}
	if a, ok := p.AgentForToken(tok); !ok || a != "orchestrator" {
		t.Errorf("AgentForToken = %q, %v; want orchestrator", a, ok)
	}
	// Binding the same token to the same agent again is harmless.
	if err := p.AddToken("orchestrator", tok); err != nil {
		t.Errorf("re-adding the same binding: %v", err)
	}
	// Binding it to another agent is not.
	if err := p.AddToken("communication", tok); err == nil {
		t.Error("AddToken bound one token to two agents")
	} else if !strings.Contains(err.Error(), "already bound") {
		t.Errorf("unexpected error %v", err)
	}
	if a, _ := p.AgentForToken(tok); a != "orchestrator" {
		t.Errorf("after refused rebinding AgentForToken = %q, want orchestrator", a)
	}
}

func TestAddTokenConflictsWithFileDigest(t *testing.T) {
	tok := "token-from-the-file-0123456789"
	p := mustParse(t, "version: 1\nagents:\n  a:\n    tools: [x]\n    token_sha256: ["+digest(tok)+"]\n  b:\n    tools: [y]\n")
	if err := p.AddToken("b", tok); err == nil {
		t.Fatal("AddToken rebound a file token to another agent")
	}
	if err := p.AddToken("a", tok); err != nil {
		t.Fatalf("AddToken same agent as file: %v", err)
	}
}

func TestParseAgentTokens(t *testing.T) {
	const t1 = "0123456789abcdef" // exactly 16
	const t2 = "fedcba9876543210-x"
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{name: "empty", in: "", want: map[string]string{}},
		{name: "only separators", in: " , ,", want: map[string]string{}},
		{name: "one", in: "orchestrator=" + t1, want: map[string]string{t1: "orchestrator"}},
		{name: "two with spaces", in: " orchestrator = " + t1 + " , communication=" + t2 + ",", want: map[string]string{t1: "orchestrator", t2: "communication"}},
		{name: "same agent two tokens", in: "a=" + t1 + ",a=" + t2, want: map[string]string{t1: "a", t2: "a"}},
		{name: "token containing =", in: "a=" + t1 + "==", want: map[string]string{t1 + "==": "a"}},
		{name: "missing =", in: "orchestrator" + t1, wantErr: "entry 1: want agent=token"},
		{name: "missing = second entry", in: "a=" + t1 + ",b" + t2, wantErr: "entry 2: want agent=token"},
		{name: "empty agent", in: "=" + t1, wantErr: "want agent=token"},
		{name: "empty token", in: "a=", wantErr: "want agent=token"},
		{name: "blank token", in: "a=   ", wantErr: "want agent=token"},
		{name: "short token", in: "a=" + t1[:15], wantErr: `token for agent "a" is shorter than 16 characters`},
		{name: "duplicate token", in: "a=" + t1 + ",b=" + t1, wantErr: "one token is given twice"},
		{name: "duplicate token same agent", in: "a=" + t1 + ",a=" + t1, wantErr: "given twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAgentTokens(tc.in)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseAgentTokens(%q) = %v, want error %q", tc.in, got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tc.wantErr)
				}
				// A token must never be echoed in the error.
				if strings.Contains(err.Error(), t1[:15]) || strings.Contains(err.Error(), t2) {
					t.Errorf("error %q reveals a token", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAgentTokens(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseAgentTokens(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseAgentTokensIntoPolicy(t *testing.T) {
	p := mustParse(t, basePolicy)
	toks, err := ParseAgentTokens("orchestrator=orch-token-0123456789,communication=comm-token-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	for tok, agent := range toks {
		if err := p.AddToken(agent, tok); err != nil {
			t.Fatal(err)
		}
	}
	for tok, agent := range toks {
		if got, ok := p.AgentForToken(tok); !ok || got != agent {
			t.Errorf("AgentForToken(%q) = %q, %v; want %q", tok, got, ok, agent)
		}
	}
}

func TestTokenEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"secret-token", "secret-token", true},
		{"secret-token", "secret-tokeN", false},
		{"secret-token", "secret-token ", false},
		{"secret-token", "secret", false},
		{"", "x", false},
		{"a", "", false},
	}
	for _, tc := range tests {
		if got := TokenEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("TokenEqual(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "acl.yaml")
	if err := os.WriteFile(good, []byte(basePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !p.Allowed("orchestrator", "supabase_query") {
		t.Error("loaded policy lost a grant")
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nagents:\n  a:\n    tols: [x]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil {
		t.Error("Load accepted a file with a typo")
	} else if !strings.Contains(err.Error(), bad) {
		t.Errorf("error %q should name the file", err)
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v should wrap fs.ErrNotExist", err)
	}
}

// The agent-to-tool mapping the charter assistant was designed with, in
// the names of its design: each agent's tools, least privilege, no delete.
var designedGrants = map[string][]string{
	"orchestrator":      {"supabase_query", "supabase_insert", "supabase_update"},
	"client_data":       {"list_clients", "search_client", "get_client_details", "read_sheet", "supabase_query", "supabase_insert", "supabase_update"},
	"flight_search":     {"search_flights", "search_empty_legs", "create_rfp", "get_rfp_status", "create_watch", "search_airports", "supabase_insert", "supabase_update", "supabase_query"},
	"proposal_analysis": {"get_rfp_status", "supabase_query", "supabase_insert", "supabase_update", "supabase_rpc"},
	"communication":     {"send_email", "create_draft", "get_email", "supabase_query", "supabase_update"},
	"error_monitor":     {"supabase_insert", "supabase_update", "supabase_query", "send_email"},
}

// todaysTools maps a designed tool to the tools that do its job today
// (names with _ for /; Avinode's trip with a deep link replaced flight
// search and the RFP; a tool's read-back and template forms come with it).
// A designed tool not listed kept its name.
var todaysTools = map[string][]string{
	"search_flights":     {"create_trip", "get_trip", "find_trips"},
	"create_rfp":         {"create_trip", "get_trip", "find_trips"},
	"get_rfp_status":     {"get_rfq", "get_quotes"},
	"create_watch":       {"create_watch", "list_watches"},
	"search_client":      {"search_clients"},
	"get_client_details": {"get_client"},
	"send_email":         {"send_email", "send_template_email", "list_templates"},
	"supabase_query":     {"supabase_query", "supabase_list_tables", "supabase_describe_table"},
}

func expectedGrants() map[string][]string {
	out := map[string][]string{}
	for agent, designed := range designedGrants {
		set := map[string]bool{}
		for _, d := range designed {
			names, ok := todaysTools[d]
			if !ok {
				names = []string{d}
			}
			for _, n := range names {
				set[n] = true
			}
		}
		for n := range set {
			out[agent] = append(out[agent], n)
		}
		sort.Strings(out[agent])
	}
	return out
}

func shippedPolicy(t *testing.T, grants ...string) *Policy {
	t.Helper()
	p, err := Load(filepath.Join("..", "..", "configs", "acl.yaml"), grants...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestShippedPolicy: configs/acl.yaml grants the six agents exactly the
// designed mapping in today's tool names — no more (every widening is an
// opt-in grant file) and no less. Agents beyond the six (the operator, the
// developer) hold only tools the design does not cover, so they widen no
// business agent's reach; nobody may delete.
func TestShippedPolicy(t *testing.T) {
	p := shippedPolicy(t)
	want := expectedGrants()
	covered := map[string]bool{}
	for _, tools := range want {
		for _, tool := range tools {
			covered[tool] = true
		}
	}
	for agent, tools := range want {
		if got := p.Tools(agent); !reflect.DeepEqual(got, tools) {
			t.Errorf("%s: the policy grants %v, the design %v", agent, got, tools)
		}
	}
	for _, agent := range p.Agents() {
		if _, designed := want[agent]; designed {
			continue
		}
		for _, tool := range p.Tools(agent) {
			if covered[tool] {
				t.Errorf("%s, an agent beyond the design, holds the business tool %s", agent, tool)
			}
		}
	}
	for _, a := range p.Agents() {
		for _, del := range []string{"supabase_delete", "delete_watch", "file_delete"} {
			if p.Allowed(a, del) && a != "developer" {
				t.Errorf("agent %s may call %s", a, del)
			}
		}
	}
	for _, tool := range FleetToolNames() {
		delete(covered, tool)
	}
	if len(covered) > 0 {
		t.Errorf("the mapping names tools no server has: %v", covered)
	}
	if u := p.UnknownTools(nil); len(u) > 0 {
		t.Errorf("unknown tools: %+v", u)
	}
}

// TestShippedGrantFiles: each file of configs/acl.d loads after the policy,
// names its step, and adds only tools the design does not grant that
// agent, none of them a delete; together they load too.
func TestShippedGrantFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "configs", "acl.d", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("grant files %v: %v", files, err)
	}
	want := expectedGrants()
	for _, f := range files {
		g := shippedPolicy(t, f).Grants()
		if len(g) != 1 || g[0].Step == "" {
			t.Fatalf("%s: grants %+v", f, g)
		}
		for agent, tools := range g[0].Tools {
			for _, tool := range tools {
				if slices.Contains(want[agent], tool) {
					t.Errorf("%s grants %s %s, which the policy already grants", f, agent, tool)
				}
				if strings.HasPrefix(tool, "delete") || strings.HasSuffix(tool, "_delete") || !FleetTool(tool) {
					t.Errorf("%s grants %s %s", f, agent, tool)
				}
			}
		}
	}
	all := shippedPolicy(t, files...)
	if !all.Allowed("communication", "search_emails") || !all.Allowed("flight_search", "cancel_trip") ||
		!all.Allowed("error_monitor", "list_webhook_events") || !all.Allowed("client_data", "update_client") {
		t.Error("the grant files together do not widen the policy as documented")
	}
}

func TestAllowedResource(t *testing.T) {
	p, err := Parse([]byte(`version: 1
agents:
  dev:
    tools: [file_read, shell_execute]
  reader:
    tools: [file_read]
    resources: [notes]
  none:
    tools: [file_read]
    resources: []
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		agent, res string
		family     []string
		want       bool
	}{
		{"dev", "file", []string{"file_read", "file_write"}, true},
		{"dev", "trips", []string{"get_trip"}, false},
		{"dev", "orphan", nil, false},
		{"reader", "file", []string{"file_read"}, false},
		{"reader", "notes", nil, true},
		{"none", "file", []string{"file_read"}, false},
		{"stranger", "file", []string{"file_read"}, false},
	}
	for _, c := range cases {
		if got := p.AllowedResource(c.agent, c.res, c.family); got != c.want {
			t.Errorf("AllowedResource(%s, %s) = %v, want %v", c.agent, c.res, got, c.want)
		}
	}
	if _, err := Parse([]byte("version: 1\nagents:\n  a:\n    tools: [x]\n    resources: [\"bad name!\"]\n")); err == nil {
		t.Error("bad resource name accepted")
	}
}

// TestLoadGrants: grant files after the policy add tools to its agents, each
// for a step it names; every other shape is a load error naming the file.
func TestLoadGrants(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("acl.yaml", basePolicy)
	mail := write("mail.yaml", "version: 1\nstep: reading replies\ngrants:\n  communication: [search_emails, get_thread_history]\n")
	p, err := Load(base, mail)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Tools("communication"), []string{"get_thread_history", "search_emails", "send_email"}; !reflect.DeepEqual(got, want) {
		t.Errorf("communication = %v, want %v", got, want)
	}
	if p.Allowed("orchestrator", "search_emails") {
		t.Error("a grant reached another agent")
	}
	if g := p.Grants(); len(g) != 1 || g[0].Step != "reading replies" || g[0].Path != mail {
		t.Errorf("Grants() = %+v", g)
	}
	if alone, err := Load(base); err != nil || alone.Allowed("communication", "search_emails") || len(alone.Grants()) != 0 {
		t.Errorf("the policy alone: %v, grants %v", err, alone.Grants())
	}

	for name, c := range map[string]struct {
		files []string
		want  string
	}{
		"grant file first":   {[]string{mail}, "grant file"},
		"policy as a grant":  {[]string{base, write("p2.yaml", basePolicy)}, "only the first file"},
		"no step":            {[]string{base, write("nostep.yaml", "version: 1\ngrants:\n  communication: [search_emails]\n")}, "step"},
		"unknown agent":      {[]string{base, write("ghost.yaml", "version: 1\nstep: x\ngrants:\n  ghost: [search_emails]\n")}, `agent "ghost" is not in the policy`},
		"no tools":           {[]string{base, write("empty.yaml", "version: 1\nstep: x\ngrants:\n  communication: []\n")}, "no tools"},
		"bad tool name":      {[]string{base, write("badname.yaml", "version: 1\nstep: x\ngrants:\n  communication: [a/b]\n")}, "not a valid tool name"},
		"typo in a key":      {[]string{base, write("typo.yaml", "version: 1\nstep: x\ngrant:\n  communication: [x]\n")}, "grant"},
		"given twice":        {[]string{base, mail, mail}, "twice"},
		"missing grant file": {[]string{base, filepath.Join(dir, "none.yaml")}, "read ACL grant file"},
	} {
		_, err := Load(c.files[0], c.files[1:]...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

// TestUnknownTools: a tool no server of the fleet has (nor the caller's own
// tools) is reported, with the grant file that names it.
func TestUnknownTools(t *testing.T) {
	p := mustParse(t, "version: 1\nagents:\n  a:\n    tools: [send_email, supabase_qeury, my_tool]\n")
	got := p.UnknownTools(func(n string) bool { return n == "my_tool" })
	if len(got) != 1 || got[0] != (UnknownTool{Agent: "a", Tool: "supabase_qeury"}) {
		t.Errorf("UnknownTools = %+v", got)
	}
	if !FleetTool("create_trip") || FleetTool("search_flights") || len(FleetToolNames()) < 40 {
		t.Error("the fleet's tool list is wrong")
	}
}
