package tools_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/webguard"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.json from the current tool definitions")

const schemaDir = "testdata/schemas"

// schemaFamilies are the tool families whose definitions are snapshotted.
// Each constructor must give stable definitions: fixed limits, no host paths
// or times in descriptions. To snapshot a new family, add a line here, run
//
//	go test ./servers/devtools/internal/tools/ -run 'TestToolSchemas|TestToolAnnotations' -update
//
// and review the new testdata/schemas/<tool>.json files before committing.
var schemaFamilies = []struct {
	name  string
	tools func(t *testing.T) []kit.Tool
}{
	{"file", func(t *testing.T) []kit.Tool {
		fsys, err := fsroot.Open([]string{t.TempDir()}, fsroot.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fsys.Close() })
		return tools.FileTools(tools.NewRoots(fsys, true, nil), nil)
	}},
	{"system", func(t *testing.T) []kit.Tool {
		fsys, err := fsroot.Open([]string{t.TempDir()}, fsroot.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fsys.Close() })
		return tools.SystemTools(tools.SystemDeps{Info: kit.Info{Name: "devtools"}, Metrics: metrics.New("devtools"),
			Roots: tools.NewRoots(fsys, true, nil)})
	}},
	{"shell", func(t *testing.T) []kit.Tool {
		sh, err := shell.New(shell.Config{Roots: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		return tools.ShellTools(sh, nil)
	}},
	{"database", func(t *testing.T) []kit.Tool {
		db, err := database.Open(database.Config{EmbeddedPath: filepath.Join(t.TempDir(), "devtools.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return tools.DatabaseTools(db)
	}},
	{"web", func(t *testing.T) []kit.Tool {
		wc, err := webguard.New(webguard.Config{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return tools.WebTools(wc)
	}},
}

// listedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name.
func listedTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var all []kit.Tool
	for _, f := range schemaFamilies {
		all = append(all, f.tools(t)...)
	}
	return mcptest.ListedTools(t, "devtools", all)
}

// TestToolSchemas compares every tool's definition (name, title, description,
// inputSchema, annotations) with its snapshot in testdata/schemas. A change
// to what clients see must be deliberate: rerun with -update and review the
// diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSchemas(t, listedTools(t), schemaDir, *update)
}

// TestToolAnnotations: every tool states all four hints explicitly (mcp-go's
// defaults would call a tool destructive and open-world), has a title, and a
// read-only tool never claims to be destructive.
func TestToolAnnotations(t *testing.T) {
	for name, raw := range listedTools(t) {
		t.Run(name, func(t *testing.T) {
			var def struct {
				Name        string                     `json:"name"`
				Title       string                     `json:"title"`
				Description string                     `json:"description"`
				InputSchema map[string]any             `json:"inputSchema"`
				Annotations map[string]json.RawMessage `json:"annotations"`
			}
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			hints := map[string]bool{}
			for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				v, ok := def.Annotations[h]
				var b bool
				if !ok || json.Unmarshal(v, &b) != nil {
					t.Errorf("annotation %s is not set to a boolean: %s", h, v)
				}
				hints[h] = b
			}
			if hints["readOnlyHint"] && (hints["destructiveHint"] || !hints["idempotentHint"]) {
				t.Errorf("read-only tool with destructiveHint=%v idempotentHint=%v", hints["destructiveHint"], hints["idempotentHint"])
			}
			if def.Title == "" || string(def.Annotations["title"]) != jsonString(def.Title) {
				t.Errorf("title %q, annotations.title %s", def.Title, def.Annotations["title"])
			}
			if def.Description == "" || def.InputSchema["type"] != "object" || def.InputSchema["additionalProperties"] != false {
				t.Errorf("description %q, inputSchema type %v additionalProperties %v", def.Description, def.InputSchema["type"], def.InputSchema["additionalProperties"])
			}
			if strings.HasPrefix(name, "file_") || strings.HasPrefix(name, "system_") {
				if hints["openWorldHint"] {
					t.Errorf("%s works on local state only, yet openWorldHint=true", name)
				}
			}
			readOnly := slices.Contains([]string{"file_read", "file_list", "file_info", "file_search", "system_info", "system_health"}, name)
			if (strings.HasPrefix(name, "file_") || strings.HasPrefix(name, "system_")) && hints["readOnlyHint"] != readOnly {
				t.Errorf("readOnlyHint = %v, want %v", hints["readOnlyHint"], readOnly)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestToolsAgentReady: every tool passes the kit's check of what LLM hosts
// accept (name, description length, a portable input schema, an
// outputSchema), so no host refuses the server for one of its tools.
func TestToolsAgentReady(t *testing.T) {
	n := 0
	for _, f := range schemaFamilies {
		for _, tool := range f.tools(t) {
			n++
			if err := kit.AgentReady(tool); err != nil {
				t.Errorf("%s: %v", f.name, err)
			}
		}
	}
	if n != 14 {
		t.Errorf("checked %d tools, want the 14 devtools tools", n)
	}
}
