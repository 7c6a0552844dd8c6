package clients

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

// The servers and the agents of the charter workflow, as the configurations
// must cover them.
var (
	charterAgents = []string{"orchestrator", "client_data", "flight_search", "proposal_analysis", "communication", "error_monitor"}
)

// fleet is what the shipped configurations are checked against, gathered
// from the real binaries, the shipped policy and the Makefile.
type fleet struct {
	root  string
	facts *Facts
	bins  map[string]string   // server → binary built for this test
	tools map[string][]string // server → its tools, served without a policy
	// resources: server → the names of its resources and templates.
	resources map[string][]string
	// defs: server → its tools as tools/list gives them.
	defs map[string][]mcp.Tool
}

// resourceNames reads the names of a server's resources and resource
// templates from the Resources table of its generated reference (docs),
// which lists both, while resources/list shows only concrete resources.
func resourceNames(bin string) ([]string, error) {
	out, err := exec.Command(bin, "docs").Output()
	if err != nil {
		return nil, fmt.Errorf("%s docs: %w", bin, err)
	}
	var names []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			in = line == "### Resources"
		case in && strings.HasPrefix(line, "| `"):
			cells := strings.Split(line, "|")
			if len(cells) < 3 {
				return nil, fmt.Errorf("%s docs: resource row %q", bin, line)
			}
			names = append(names, strings.TrimSpace(cells[2]))
		}
	}
	sort.Strings(names)
	return slices.Compact(names), nil
}

func loadFleet(t *testing.T) *fleet {
	t.Helper()
	fl, err := gather(t)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func gather(t *testing.T) (*fleet, error) {
	root := testbin.Root(t)
	fl := &fleet{root: root, bins: map[string]string{}, tools: map[string][]string{}, resources: map[string][]string{}, defs: map[string][]mcp.Tool{},
		facts: &Facts{Root: root, Servers: map[string]*help.Server{}, Images: map[string]string{}}}
	binDir := t.TempDir()
	for _, s := range testbin.Servers {
		bin := testbin.Server(t, binDir, s)
		h, err := help.Load(context.Background(), bin)
		if err != nil {
			return nil, err
		}
		fl.bins[s], fl.facts.Servers[s] = bin, h
		c := mcptest.StartStdio(t, bin, []string{"DEVTOOLS_ROOTS=" + t.TempDir()})
		fl.defs[s] = c.ListTools()
		fl.tools[s] = c.ToolNames()
		if fl.resources[s], err = resourceNames(bin); err != nil {
			return nil, err
		}
		sort.Strings(fl.tools[s])
		if len(fl.tools[s]) == 0 {
			return nil, fmt.Errorf("%s serves no tools without a policy", s)
		}
	}
	p, err := acl.Load(filepath.Join(root, "configs", "acl.yaml"))
	if err != nil {
		return nil, err
	}
	fl.facts.Policy = p
	// The image names come from the Makefile, which builds them.
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", root, "image-names")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("make image-names: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			return nil, fmt.Errorf("make image-names: line %q", sc.Text())
		}
		for _, name := range fields[1:] {
			fl.facts.Images[name] = fields[0]
			repo, _, _ := strings.Cut(name, ":")
			fl.facts.Images[repo] = fields[0]
		}
	}
	if len(fl.facts.Images) == 0 {
		return nil, fmt.Errorf("make image-names printed no image")
	}
	return fl, nil
}

// configFiles: every file under configs/clients/, and the client-named
// files the servers keep in their own configs/<server>/ folders.
func configFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "configs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		inClients := strings.HasPrefix(rel, filepath.Join("configs", "clients")+string(filepath.Separator))
		if inClients && filepath.Ext(path) != ".md" {
			files = append(files, path)
		} else if _, err := ClientForPath(path); err == nil && !inClients {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestShippedConfigs checks every client configuration the repository ships
// against the real binaries and starts each one that needs no credentials,
// container runtime or Node.js exactly as its client would: over stdio the
// process with its arguments and environment, over HTTP the request with its
// bearer header, then initialize and tools/list. An entry acting as an agent
// must get exactly the tools the policy grants that agent on that server.
func TestShippedConfigs(t *testing.T) {
	fl := loadFleet(t)
	files := configFiles(t, fl.root)
	if len(files) < 20 {
		t.Fatalf("found only %d configuration files: %v", len(files), files)
	}
	var started, notStarted []string
	note := func(list *[]string, s string) { *list = append(*list, s) }
	covered := map[string]bool{} // client/via/server
	agentServers := map[string][]string{}
	for _, path := range files {
		rel, _ := filepath.Rel(fl.root, path)
		t.Run(rel, func(t *testing.T) {
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			targets, problems := Analyze(f, fl.facts)
			for _, p := range problems {
				t.Error(p)
			}
			for _, tg := range targets {
				via := tg.Via
				if via == ViaBridge {
					via = ViaHTTP // Claude Desktop reaches HTTP servers through the bridge
				}
				covered[fmt.Sprintf("%s/%s/%s", f.Client, via, tg.Server)] = true
				if strings.Contains(rel, "agents") {
					agentServers[tg.Agent+"/"+string(via)] = append(agentServers[tg.Agent+"/"+string(via)], tg.Server)
				}
				what := fmt.Sprintf("%s %s (%s)", rel, tg.Entry.Name, tg.Via)
				switch {
				case tg.Via == ViaContainer:
					note(&notStarted, what+": image "+tg.Image+" checked by name; make images-check inspects it")
				case tg.Via == ViaBridge:
					note(&notStarted, what+": needs Node.js; its endpoint and token are checked")
				case len(tg.Credentials) > 0:
					note(&notStarted, what+": needs credentials ("+strings.Join(tg.Credentials, ", ")+")")
				default:
					t.Run(tg.Entry.Name, func(t *testing.T) { startTarget(t, fl, tg) })
					note(&started, what)
				}
			}
		})
	}

	// Every client has every server over stdio (binary and container) and HTTP.
	for _, c := range []Client{ClaudeDesktop, ClaudeCode, Cursor, VSCode} {
		for _, via := range []Via{ViaBinary, ViaContainer, ViaHTTP} {
			for _, s := range testbin.Servers {
				if !covered[fmt.Sprintf("%s/%s/%s", c, via, s)] {
					t.Errorf("no %s configuration reaches %s by %s", c, s, via)
				}
			}
		}
	}
	// Each agent of the charter workflow has its files, with exactly the
	// servers where the policy grants it tools.
	for _, ag := range charterAgents {
		var want []string
		for _, s := range testbin.Servers {
			for _, tool := range fl.tools[s] {
				if fl.facts.Policy.Allowed(ag, tool) {
					want = append(want, s)
					break
				}
			}
		}
		sort.Strings(want)
		for _, via := range []Via{ViaBinary, ViaHTTP} {
			got := agentServers[ag+"/"+string(via)]
			sort.Strings(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("agent %s over %s: configured for %v, the policy grants it tools on %v", ag, via, got, want)
			}
		}
	}
	sort.Strings(started)
	sort.Strings(notStarted)
	t.Logf("started and listed tools through %d entries; checked without starting %d:\n  %s",
		len(started), len(notStarted), strings.Join(notStarted, "\n  "))
	if len(started) == 0 {
		t.Error("no entry was started")
	}
}

func token(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// startTarget runs one entry as its client would and checks the tools it
// gets.
func startTarget(t *testing.T, fl *fleet, tg Target) {
	project := t.TempDir()
	v := Vars{Root: fl.root, Project: project, Home: t.TempDir(), Env: map[string]string{}, Inputs: map[string]string{}}
	tok := token(t)
	if tg.TokenName != "" {
		v.Env[tg.TokenName], v.Inputs[tg.TokenName] = tok, tok
	}
	l, err := Resolve(tg, v, fl.bins)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	switch tg.Via {
	case ViaBinary:
		c := mcptest.StartStdio(t, l.Command, l.Env, l.Args...)
		if c.Init.ServerInfo.Name != tg.Server {
			t.Errorf("serverInfo.name %q, want %q", c.Init.ServerInfo.Name, tg.Server)
		}
		names = c.ToolNames()
	case ViaHTTP:
		env := []string{"MCP_AUTH_TOKEN=" + tok}
		if tg.TokenFor == TokenAgent {
			env = []string{"MCP_ACL_FILE=" + filepath.Join(fl.root, "configs", "acl.yaml"), "MCP_AGENT_TOKENS=" + tg.Agent + "=" + tok}
		}
		addr := startHTTP(t, fl.bins[tg.Server], env)
		u, err := url.Parse(l.URL)
		if err != nil {
			t.Fatal(err)
		}
		u.Host = addr // the configured port is the server's default; this one is free
		names = listOverHTTP(t, u.String(), l.Headers)
	}
	sort.Strings(names)
	want := fl.tools[tg.Server]
	if tg.Agent != "" {
		want = nil
		for _, tool := range fl.tools[tg.Server] {
			if fl.facts.Policy.Allowed(tg.Agent, tool) {
				want = append(want, tool)
			}
		}
	}
	if len(want) == 0 {
		t.Fatalf("agent %s has no tool on %s: the entry serves nothing", tg.Agent, tg.Server)
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("tools/list:\n got %v\nwant %v", names, want)
	}
}

// startHTTP starts bin over streamable HTTP on a free loopback port and
// returns its address.
func startHTTP(t *testing.T, bin string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--transport", "http", "--host", "127.0.0.1", "--port", "0")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DEVTOOLS_ROOTS=" + t.TempDir()}, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			var line struct {
				Addr string `json:"addr"`
			}
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
				addrc <- line.Addr
				sent = true
			}
		}
		close(addrc)
	}()
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	select {
	case addr, ok := <-addrc:
		if !ok {
			t.Fatalf("%s exited before serving HTTP", bin)
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start serving HTTP", bin)
	}
	return ""
}

func listOverHTTP(t *testing.T, endpoint string, headers map[string]string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewStreamableHttpClient(endpoint, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "fleetcheck", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize at %s: %v", endpoint, err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := make([]string, 0, len(res.Tools))
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}
