// Package tools defines the devtools server's tools, one file per family:
// each tool's definition (schema, annotations, description) beside its
// handler. Handlers get their dependencies explicitly through Deps.
package tools

import (
	"fmt"
	"strconv"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// Deps is everything the devtools tools need.
type Deps struct {
	Info    kit.Info
	Metrics *metrics.Registry
	Roots   []string
	Limits  fsroot.Limits
}

// All opens the roots and returns every tool; cleanup closes the roots.
func All(d Deps) ([]kit.Tool, func(), error) {
	fsys, err := fsroot.Open(d.Roots, d.Limits)
	if err != nil {
		return nil, nil, fmt.Errorf("devtools roots: %w", err)
	}
	tools := SystemTools(SystemDeps{Info: d.Info, Metrics: d.Metrics, Roots: fsys.Roots})
	tools = append(tools, FileTools(fsys)...)
	return tools, func() { _ = fsys.Close() }, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// human renders a byte count for descriptions ("10 MiB").
func human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
