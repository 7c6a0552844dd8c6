package mcptest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

// Setup reads args and env as the server's own flags (spec.Flags) and runs
// spec.Setup in this process, as Main does before it serves; what Setup
// leaves to clean up is cleaned up with the test. MCP_DATA_DIR is a fresh
// temporary directory unless env names one. The Env is Main's (kit.NewEnv):
// its logger writes to the test's log at debug level, its redactor knows
// the secret flags' values, and a spec without a version has the linked
// one. It is returned for what Setup added to it (health checks,
// templates).
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
	// Registered before Setup's cleanup, so it runs after it: what the
	// cleanup logs is still shown.
	logs := &testLog{t: t}
	t.Cleanup(logs.close)
	e := kit.NewEnv(spec, getenv, logs, "debug", logging.NewRedactor(f.Secrets()...))
	tools, cleanup, err := spec.Setup(context.Background(), e)
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	return tools, e, err
}

// testLog writes log lines to a test's log until the test is cleaned up;
// later lines (from a goroutine that outlived the test) are dropped, since
// logging to a finished test panics.
type testLog struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (l *testLog) close() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}
