package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/sheetsfake"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

const pkg = "github.com/mcp-fleet/mcp-fleet/servers/sheets/cmd/sheets-mcp"

var allTools = []string{"add_flight_history", "create_client", "get_client", "list_clients", "read_sheet", "search_clients", "update_client"}

const sid = "1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-xyz"

// googleSetup is a fake Sheets API with an empty spreadsheet, and a
// service account key for it on disk.
func googleSetup(t *testing.T) (*sheetsfake.Server, string, []byte) {
	t.Helper()
	f := sheetsfake.New(t)
	f.AddSpreadsheet(sid, "Sheet1")
	key := f.ServiceAccountKey(t, "client-db@mcp-fleet-test.iam.gserviceaccount.com")
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return f, path, key
}

func googleEnv(f *sheetsfake.Server, keyPath string) []string {
	return []string{"GOOGLE_SHEETS_CLIENT_DATABASE_ID=https://docs.google.com/spreadsheets/d/" + sid + "/edit#gid=0",
		"GOOGLE_SERVICE_ACCOUNT_KEY_PATH=" + keyPath, "SHEETS_API_ENDPOINT=" + f.URL}
}

// run executes the binary to completion with empty stdin.
func run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return mcptest.Run(t, mcptest.Build(t, pkg), env, args...)
}

// TestStdioLocal: the binary with no configuration serves the local
// workbook, seeded with the sample clients, and writes to its files.
func TestStdioLocal(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"MCP_DATA_DIR=" + data})
	if c.Init.ServerInfo.Name != "sheets" || !strings.Contains(c.Init.Instructions, "expected_updated_at") {
		t.Errorf("initialize %+v", c.Init.ServerInfo)
	}
	got := c.ToolNames()
	slices.Sort(got)
	if !slices.Equal(got, allTools) {
		t.Errorf("tools %v", got)
	}
	var cl struct {
		ClientID  string `json:"client_id"`
		UpdatedAt string `json:"updated_at"`
	}
	mcptest.Structured(t, c.Call("get_client", map[string]any{"identifier": "priya.raman@example.com"}), &cl)
	if cl.ClientID != "CL-006" {
		t.Errorf("get_client %+v", cl)
	}
	res := c.Call("update_client", map[string]any{"client_id": "CL-006", "updates": map[string]any{"special_needs": "=cmd|' /C calc'!A0"},
		"expected_updated_at": cl.UpdatedAt})
	if res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	b, err := os.ReadFile(filepath.Join(data, "sheets", "workbook", "Clients.csv"))
	if err != nil || !strings.Contains(string(b), `'=cmd|' /C calc'!A0`) {
		t.Errorf("the workbook file: %v\n%s", err, b)
	}
	mcptest.FailCode(t, c.Call("update_client", map[string]any{"client_id": "CL-006", "updates": map[string]any{"phone": "1"},
		"expected_updated_at": cl.UpdatedAt}), mcperr.Conflict)
	mcptest.WaitFor(t, "the audit line", func() bool { return strings.Contains(c.Stderr(), `"tool":"update_client"`) })
}

// TestStdioGoogle: the binary on the fake Sheets API with a service account
// key: tokens from the key, the spreadsheet URL accepted, RAW writes, and
// the private key in no log line even at debug level.
func TestStdioGoogle(t *testing.T) {
	t.Parallel()
	f, keyPath, key := googleSetup(t)
	env := append(googleEnv(f, keyPath), "MCP_DATA_DIR="+t.TempDir(), "MCP_LOG_LEVEL=debug")
	if out, stderr, code := run(t, env, "init"); code != 0 || !strings.Contains(out, "added tab Clients") || !strings.Contains(out, "wrote the header row of Flight_History") {
		t.Fatalf("init: %d\n%s\n%s", code, out, stderr)
	}
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), env)
	var created struct {
		Client struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
	}
	mcptest.Structured(t, c.Call("create_client", map[string]any{"name": "=HYPERLINK(\"http://evil\",\"x\")", "email": "first@example.com"}), &created)
	if created.Client.ClientID != "CL-001" {
		t.Errorf("create_client %+v", created)
	}
	if cell := f.Cell(sid, "Clients", 2, 2); cell.Kind != "text" {
		t.Errorf("the name cell %+v", cell)
	}
	res := c.Call("add_flight_history", map[string]any{"client_id": "CL-001", "flight_details": map[string]any{"date": "2025-12-24", "route": "KTEB-TNCM"}})
	if res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	f.Deny(sid, true)
	b := mcptest.FailCode(t, c.Call("get_client", map[string]any{"identifier": "CL-001"}), mcperr.PermissionDeny)
	if !strings.Contains(b.Message, "client-db@mcp-fleet-test.iam.gserviceaccount.com") {
		t.Errorf("denied: %s", b.Message)
	}
	mcptest.WaitFor(t, "the audit line", func() bool { return strings.Contains(c.Stderr(), `"outcome":"error"`) })
	var k struct {
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
	}
	_ = json.Unmarshal(key, &k)
	body := strings.Split(k.PrivateKey, "\n")[1]
	if stderr := c.Stderr(); strings.Contains(stderr, body) || !strings.Contains(stderr, `"level":"debug"`) {
		t.Errorf("stderr holds the private key, or no debug lines:\n%s", stderr)
	}
	if f.Issued() == 0 {
		t.Error("no token was issued")
	}
}

func TestStdioACL(t *testing.T) {
	t.Parallel()
	aclFile := mcptest.RepoFile(t, "configs", "acl.yaml")
	// The policy alone: the reading tools; with the opt-in grant file, all seven.
	c := mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"MCP_DATA_DIR=" + t.TempDir(), "MCP_ACL_FILE=" + aclFile, "MCP_AGENT=client_data"})
	if got := c.ToolNames(); len(got) != 4 {
		t.Errorf("client_data sees %v", got)
	}
	grant := mcptest.RepoFile(t, "configs", "acl.d", "client-data-sheet-writes.yaml")
	c = mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"MCP_DATA_DIR=" + t.TempDir(), "MCP_ACL_FILE=" + aclFile + string(os.PathListSeparator) + grant, "MCP_AGENT=client_data"})
	if got := c.ToolNames(); len(got) != 7 {
		t.Errorf("client_data with the sheet-writes grant sees %v", got)
	}
	c = mcptest.StartStdio(t, mcptest.Build(t, pkg), []string{"MCP_DATA_DIR=" + t.TempDir(), "MCP_ACL_FILE=" + aclFile, "MCP_AGENT=communication"})
	if got := c.ToolNames(); len(got) != 0 {
		t.Errorf("communication sees %v", got)
	}
	mcptest.FailCode(t, c.Call("get_client", map[string]any{"identifier": "CL-001"}), mcperr.PermissionDeny)
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	f, keyPath, _ := googleSetup(t)
	mcptest.CheckCLI(t, mcptest.Build(t, pkg), nil, []mcptest.CLICase{
		{Name: "--help", Args: []string{"--help"}, Stdout: []string{"sheets-mcp", "GOOGLE_SHEETS_CLIENT_DATABASE_ID", "CLIENT_DATABASE_SHEET_ID", "GOOGLE_SERVICE_ACCOUNT_KEY_PATH", "SHEETS_WORKBOOK_DIR", "init"}},
		{Name: "--version", Args: []string{"--version"}, Stdout: []string{"sheets-mcp dev (commit unknown)"}},
		{Name: "init --help", Args: []string{"init", "--help"}, Stdout: []string{"GOOGLE_SERVICE_ACCOUNT_KEY_PATH"}},
		{Name: "spreadsheet without credentials", Env: []string{"GOOGLE_SHEETS_CLIENT_DATABASE_ID=" + sid}, Code: 2, Stderr: []string{"GOOGLE_SERVICE_ACCOUNT_KEY_PATH", "sheets-mcp auth"}, QuietStdout: true},
		{Name: "auth --help", Args: []string{"auth", "--help"}, Stdout: []string{"GOOGLE_SHEETS_CLIENT_ID", "--read-only", "--open-browser"}},
		{Name: "auth without a client", Args: []string{"auth"}, Code: 2, Stderr: []string{"GOOGLE_SHEETS_CLIENT_ID or GOOGLE_CLIENT_ID"}, QuietStdout: true},
		{Name: "key without spreadsheet", Env: []string{"GOOGLE_SERVICE_ACCOUNT_KEY_PATH=" + keyPath}, Code: 2, Stderr: []string{"GOOGLE_SHEETS_CLIENT_DATABASE_ID"}, QuietStdout: true},
		{Name: "bad spreadsheet id", Env: []string{"CLIENT_DATABASE_SHEET_ID=not an id", "GOOGLE_SERVICE_ACCOUNT_KEY_PATH=" + keyPath}, Code: 2, Stderr: []string{"not an id"}, QuietStdout: true},
		{Name: "missing key file", Env: []string{"GOOGLE_SHEETS_CLIENT_DATABASE_ID=" + sid, "GOOGLE_SERVICE_ACCOUNT_KEY_PATH=/nonexistent/key.json"}, Code: 2, Stderr: []string{"/nonexistent/key.json", "no such file"}, QuietStdout: true},
		{Name: "bad max rows", Args: []string{"--max-rows", "0"}, Code: 2, Stderr: []string{"max-rows"}, QuietStdout: true},
		{Name: "workbook dir is a file", Args: []string{"--workbook-dir", keyPath}, Code: 2, Stderr: []string{keyPath, "not a directory", "a path setting is wrong"}, QuietStdout: true},
		{Name: "bad tab", Args: []string{"--clients-tab", "a/b"}, Code: 2, Stderr: []string{"clients-tab"}, QuietStdout: true},
		{Name: "agent not in the ACL", Env: []string{"MCP_ACL_FILE=" + mcptest.RepoFile(t, "configs", "acl.yaml"), "MCP_AGENT=nosuch"}, Code: 2, Stderr: []string{"nosuch", "client_data"}, QuietStdout: true},
		{Name: "init on the fake", Env: googleEnv(f, keyPath), Args: []string{"init"}, Stdout: []string{"added tab Clients", "ready"}},
		{Name: "empty stdin is a clean exit"},
	})
}

// The tests below run spec() in this process.

// TestDocs keeps docs/sheets.md's generated reference in step with the
// definitions (go test -run TestDocs -args -update rewrites it).
func TestDocs(t *testing.T) {
	mcptest.CheckReference(t, spec(), mcptest.RepoFile(t, "docs", "sheets.md"), mcptest.Updating())
}

// TestTemplateIsSampleHeader: the template to copy into a Google sheet is
// the header row of the sample workbook compiled into the binary.
func TestTemplateIsSampleHeader(t *testing.T) {
	for _, name := range []string{"Clients.csv", "Flight_History.csv"} {
		sample, err := os.ReadFile(filepath.Join("..", "..", "internal", "sample", name))
		if err != nil {
			t.Fatal(err)
		}
		template, err := os.ReadFile(mcptest.RepoFile(t, "configs", "sheets", "template", name))
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(sample), "\n"); first+"\n" != string(template) {
			t.Errorf("the template %s is not the sample's header row", name)
		}
	}
}

// setup parses env the way Main does and runs Setup.
func setup(t *testing.T, args []string, env map[string]string) ([]kit.Tool, *kit.Env, error) {
	t.Helper()
	return mcptest.Setup(t, spec(), args, env)
}

func TestSetupInProcess(t *testing.T) {
	tools, _, err := setup(t, nil, nil)
	if err != nil || len(tools) != 7 {
		t.Fatalf("local: %d tools, %v", len(tools), err)
	}
	for _, tool := range tools {
		if a := tool.Annotations(); *a.OpenWorldHint {
			t.Errorf("%s is open world on the local workbook", tool.Name)
		}
	}
	f, keyPath, _ := googleSetup(t)
	env := map[string]string{}
	for _, kv := range googleEnv(f, keyPath) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	tools, e, err := setup(t, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if a := tool.Annotations(); !*a.OpenWorldHint {
			t.Errorf("%s is not open world on Google Sheets", tool.Name)
		}
	}
	if rep := e.Health.Report(context.Background()); !rep.OK || !slices.Contains(rep.Parts, "google-sheets") {
		t.Errorf("health %+v", rep)
	}
	if _, _, err := setup(t, []string{"--service-account-key", "/nonexistent"}, map[string]string{"GOOGLE_SHEETS_CLIENT_DATABASE_ID": sid}); err == nil {
		t.Error("a missing key file was accepted")
	}
}

// serve connects an in-process client to tools.
func serve(t *testing.T, tools []kit.Tool) *mcptest.Client {
	t.Helper()
	srv, err := kit.New(kit.Info{Name: "sheets"}, tools, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, srv, "")
}

// TestMainInProcess runs kit.Main on spec() for the commands that end.
func TestMainInProcess(t *testing.T) {
	f, keyPath, _ := googleSetup(t)
	genv := map[string]string{}
	for _, kv := range googleEnv(f, keyPath) {
		k, v, _ := strings.Cut(kv, "=")
		genv[k] = v
	}
	emptyDir := filepath.Join(t.TempDir(), "empty")
	tests := []struct {
		name           string
		args           []string
		env            map[string]string
		code           int
		stdout, stderr string
	}{
		{"help", []string{"--help"}, nil, 0, "SHEETS_READ_MAX_ROWS", ""},
		{"init on Google", []string{"init"}, genv, 0, "added tab Flight_History", ""},
		{"init on Google again", []string{"init"}, genv, 0, "Clients already has every column", ""},
		{"init on an empty local directory", []string{"init"}, map[string]string{"SHEETS_WORKBOOK_DIR": emptyDir}, 0, "wrote the header row of Clients", ""},
		{"docs", []string{"docs"}, nil, 0, "## sheets-mcp reference", ""},
		{"bad flag", []string{"--nope"}, nil, 2, "", "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := kit.Main(spec(), tc.args, func(k string) string { return tc.env[k] }, strings.NewReader(""), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("code %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tc.code, out.String(), tc.stdout, errb.String(), tc.stderr)
			}
		})
	}
	b, err := os.ReadFile(filepath.Join(emptyDir, "Clients.csv"))
	if err != nil || !strings.HasPrefix(string(b), "client_id,name,email") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("init on an empty directory wrote %q, %v", b, err)
	}
	// A tab with data but a bad header: reported, not changed.
	f.SetCell(sid, "Clients", 1, 3, "mail")
	var out, errb bytes.Buffer
	if code := kit.Main(spec(), []string{"init"}, func(k string) string { return genv[k] }, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), "email") {
		t.Errorf("init over a bad header: %d %s", code, errb.String())
	}
}
