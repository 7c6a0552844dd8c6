// Command devtools-mcp is the devtools MCP server: file and system tools
// confined to configured root directories.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// Set by the Makefile through -ldflags.
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	os.Exit(kit.Main(spec(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

func spec() kit.Spec {
	var roots []string
	return kit.Spec{
		Info: kit.Info{Name: "devtools", Version: version, Commit: commit,
			Instructions: "Developer tools confined to the configured root directories. Paths are relative to the first root unless absolute inside a root; call system_info to see the roots."},
		Summary:     "MCP server with file and system tools confined to root directories",
		DefaultPort: 3005,
		Flags: func(f *kit.Flags) {
			f.List(&roots, "root", "DEVTOOLS_ROOTS", string(os.PathListSeparator),
				"directory the file tools may use (repeat, or a list in the env variable; default: the working directory)")
		},
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			if len(roots) == 0 {
				wd, err := os.Getwd()
				if err != nil {
					return nil, nil, errors.New("no --root given and the working directory is unknown")
				}
				roots = []string{wd}
			}
			return tools.All(tools.Deps{Info: env.Info, Metrics: env.Metrics, Roots: roots})
		},
	}
}
