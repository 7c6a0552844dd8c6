package tools_test

import (
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

// schemaFamilies are the tool families whose definitions are snapshotted.
// Each constructor must give stable definitions: fixed limits, no host paths
// or times in descriptions. To snapshot a new family, add a line here, run
//
//	go test ./servers/devtools/internal/tools/ -run 'TestToolSchemas|TestToolAnnotations' -update
//
// and review the new testdata/schemas/<tool>.json files before committing.
var schemaFamilies = []mcptest.Family[*testing.T]{
	{Name: "file", Tools: func(t *testing.T) []kit.Tool {
		fsys, err := fsroot.Open([]string{t.TempDir()}, fsroot.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fsys.Close() })
		return tools.FileTools(tools.NewRoots(fsys, true, nil), nil)
	}},
	{Name: "system", Tools: func(t *testing.T) []kit.Tool {
		fsys, err := fsroot.Open([]string{t.TempDir()}, fsroot.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fsys.Close() })
		return tools.SystemTools(tools.SystemDeps{Info: kit.Info{Name: "devtools"}, Metrics: metrics.New("devtools"),
			Roots: tools.NewRoots(fsys, true, nil)})
	}},
	{Name: "shell", Tools: func(t *testing.T) []kit.Tool {
		sh, err := shell.New(shell.Config{Roots: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		return tools.ShellTools(sh, nil)
	}},
	{Name: "database", Tools: func(t *testing.T) []kit.Tool {
		db, err := database.Open(database.Config{EmbeddedPath: filepath.Join(t.TempDir(), "devtools.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return tools.DatabaseTools(db)
	}},
	{Name: "web", Tools: func(t *testing.T) []kit.Tool {
		wc, err := webguard.New(webguard.Config{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return tools.WebTools(wc)
	}},
}

// TestToolSchemas compares every tool's definition (name, title, description,
// inputSchema, annotations) with its snapshot in testdata/schemas. A change
// to what clients see must be deliberate: rerun with -update and review the
// diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSnapshots(t, "devtools", mcptest.Collect(schemaFamilies, t))
}

// TestToolAnnotations: besides the checks every server makes, file and
// system tools work on local state only and say which of them only read.
func TestToolAnnotations(t *testing.T) {
	listed := mcptest.ListedTools(t, "devtools", mcptest.Collect(schemaFamilies, t))
	mcptest.CheckAnnotations(t, listed, func(t testing.TB, name string, h mcptest.Hints) {
		if !strings.HasPrefix(name, "file_") && !strings.HasPrefix(name, "system_") {
			return
		}
		if h.OpenWorld {
			t.Errorf("%s works on local state only, yet openWorldHint=true", name)
		}
		readOnly := slices.Contains([]string{"file_read", "file_list", "file_info", "file_search", "system_info", "system_health"}, name)
		if h.ReadOnly != readOnly {
			t.Errorf("readOnlyHint = %v, want %v", h.ReadOnly, readOnly)
		}
	})
}

// TestToolsAgentReady: every tool passes the kit's check of what LLM hosts
// accept (name, description length, a portable input schema, an
// outputSchema), so no host refuses the server for one of its tools.
func TestToolsAgentReady(t *testing.T) {
	mcptest.CheckAgentReady(t, "devtools", mcptest.Collect(schemaFamilies, t), 14)
}
