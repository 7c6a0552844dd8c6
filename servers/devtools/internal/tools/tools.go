// Package tools defines the devtools server's tools, one file per family:
// each tool's definition (schema, annotations, description) beside its
// handler. Handlers get their dependencies explicitly through Deps.
package tools

import (
	"fmt"
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/database"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/filewatch"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/webguard"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/rs/zerolog"
)

// Deps is everything the devtools tools need.
type Deps struct {
	Info    kit.Info
	Metrics *metrics.Registry
	Roots   []string
	// RootsConfigured says the operator chose Roots (else they are the
	// working directory): client roots may then only narrow them.
	RootsConfigured bool
	Limits          fsroot.Limits
	// Shell configures shell_execute; its Roots are set from Roots.
	Shell shell.Config
	// Web configures web_request and web_fetch; its Version from Info.
	Web webguard.Config
	// Database configures the database tools: PostgreSQL when DatabaseURL
	// is set, else the embedded file at EmbeddedPath.
	Database database.Config
	// Notifier delivers the file resources' updates (nil: nobody hears
	// them).
	Notifier *kit.Notifier
	// WatchMaxFiles caps the files watched for subscribers (0: the
	// default); WatchHint names the setting that raises it.
	WatchMaxFiles int
	WatchHint     string
	Logger        *zerolog.Logger
}

// Set is what All builds: the tools, the resource templates served beside
// them, and the cleanup that releases what they hold.
type Set struct {
	Tools     []kit.Tool
	Templates []kit.ResourceTemplate
	Close     func()
}

// All opens the roots and returns every tool and the file resources. A bad
// configuration is an error here, at start-up.
func All(d Deps) (*Set, error) {
	fsys, err := fsroot.Open(d.Roots, d.Limits)
	if err != nil {
		return nil, fmt.Errorf("devtools roots: %w", err)
	}
	sc := d.Shell
	sc.Roots = fsys.Roots()
	sc.HoldWrites = fsys.HoldWrites
	sh, err := shell.New(sc)
	if err != nil {
		_ = fsys.Close()
		return nil, fmt.Errorf("devtools shell: %w", err)
	}
	wcfg := d.Web
	wcfg.Version = d.Info.Version
	wc, err := webguard.New(wcfg)
	if err != nil {
		_ = fsys.Close()
		return nil, fmt.Errorf("devtools web: %w", err)
	}
	notifier := d.Notifier
	if notifier == nil {
		notifier = kit.NewNotifier()
	}
	watcher, err := filewatch.New(filewatch.Config{Resolve: fsys.WatchPaths, Notify: notifier.Updated,
		MaxFiles: d.WatchMaxFiles, FlagHint: d.WatchHint, Logger: d.Logger})
	if err != nil {
		_ = fsys.Close()
		return nil, fmt.Errorf("devtools file watch: %w", err)
	}
	db, err := database.Open(d.Database)
	if err != nil {
		_ = fsys.Close()
		return nil, fmt.Errorf("devtools database: %w", err)
	}
	roots := NewRoots(fsys, d.RootsConfigured, d.Logger)
	tools := SystemTools(SystemDeps{Info: d.Info, Metrics: d.Metrics, Roots: roots})
	tools = append(tools, FileTools(roots, watcher)...)
	tools = append(tools, ShellTools(sh, roots)...)
	tools = append(tools, WebTools(wc)...)
	tools = append(tools, DatabaseTools(db)...)
	cleanup := func() {
		_ = watcher.Close()
		wc.CloseIdleConnections()
		db.Close()
		roots.Close()
		_ = fsys.Close()
	}
	return &Set{Tools: tools, Templates: []kit.ResourceTemplate{FileResources(fsys, watcher)}, Close: cleanup}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
