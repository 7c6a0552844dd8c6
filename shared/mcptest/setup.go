package mcptest

import (
	"cmp"
	"context"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// Setup reads args and env as the server's own flags (spec.Flags) and runs
// spec.Setup in this process, as Main does before it serves; what Setup
// leaves to clean up is cleaned up with the test. MCP_DATA_DIR is a fresh
// temporary directory unless env names one. The Env is returned for what
// Setup added to it (health checks, templates).
func Setup(t testing.TB, spec kit.Spec, args []string, env map[string]string) ([]kit.Tool, *kit.Env, error) {
	t.Helper()
	data := t.TempDir()
	getenv := func(k string) string {
		if v, ok := env[k]; ok || k != "MCP_DATA_DIR" {
			return v
		}
		return data
	}
	f := cli.NewFlags(spec.Name + "-mcp")
	if spec.Flags != nil {
		spec.Flags(f)
	}
	if err := f.Parse(args, getenv); err != nil {
		return nil, nil, err
	}
	// As Main: a spec without a version has the binary's.
	spec.Version = cmp.Or(spec.Version, buildinfo.Version())
	spec.Commit = cmp.Or(spec.Commit, buildinfo.Commit())
	e := &kit.Env{Info: spec.Info, Metrics: metrics.New(spec.Name), Notifier: kit.NewNotifier(), Health: kit.NewHealth(),
		Getenv: getenv, Redactor: logging.NewRedactor()}
	tools, cleanup, err := spec.Setup(context.Background(), e)
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	return tools, e, err
}
