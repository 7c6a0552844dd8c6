// Package tools defines the devtools server's tools, one file per family:
// each tool's definition (schema, annotations, description) beside its
// handler. Handlers get their dependencies explicitly through Deps.
package tools

import (
	"fmt"
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/webguard"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// Deps is everything the devtools tools need.
type Deps struct {
	Info    kit.Info
	Metrics *metrics.Registry
	Roots   []string
	Limits  fsroot.Limits
	// Shell configures shell_execute; its Roots are set from Roots.
	Shell shell.Config
	// Web configures web_request and web_fetch; its Version from Info.
	Web webguard.Config
	// Database configures the database tools: PostgreSQL when DatabaseURL
	// is set, else the embedded file at EmbeddedPath.
	Database database.Config
}

// All opens the roots and returns every tool; cleanup releases what the
// tools hold. A bad configuration is an error here, at start-up.
func All(d Deps) ([]kit.Tool, func(), error) {
	fsys, err := fsroot.Open(d.Roots, d.Limits)
	if err != nil {
		return nil, nil, fmt.Errorf("devtools roots: %w", err)
	}
	sc := d.Shell
	sc.Roots = fsys.Roots()
	sc.HoldWrites = fsys.HoldWrites
	sh, err := shell.New(sc)
	if err != nil {
		_ = fsys.Close()
		return nil, nil, fmt.Errorf("devtools shell: %w", err)
	}
	wcfg := d.Web
	wcfg.Version = d.Info.Version
	wc, err := webguard.New(wcfg)
	if err != nil {
		_ = fsys.Close()
		return nil, nil, fmt.Errorf("devtools web: %w", err)
	}
	db, err := database.Open(d.Database)
	if err != nil {
		_ = fsys.Close()
		return nil, nil, fmt.Errorf("devtools database: %w", err)
	}
	tools := SystemTools(SystemDeps{Info: d.Info, Metrics: d.Metrics, Roots: fsys.Roots})
	tools = append(tools, FileTools(fsys)...)
	tools = append(tools, ShellTools(sh)...)
	tools = append(tools, WebTools(wc)...)
	tools = append(tools, DatabaseTools(db)...)
	cleanup := func() {
		wc.CloseIdleConnections()
		db.Close()
		_ = fsys.Close()
	}
	return tools, cleanup, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
