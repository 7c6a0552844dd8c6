package mcptest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

func TestSetup(t *testing.T) {
	var greeting, dataDir string
	cleaned := 0
	spec := kit.Spec{Info: kit.Info{Name: "greeter"},
		Flags: func(f *cli.Flags) { f.String(&greeting, "greeting", []string{"GREETING"}, "hello", "what to say") },
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			if greeting == "fail" {
				return nil, nil, errors.New("cannot greet")
			}
			dir, err := env.DataDir()
			if err != nil {
				return nil, nil, err
			}
			dataDir = dir
			env.AddHealthCheck("greeter", func(context.Context) error { return nil })
			return []kit.Tool{echoTool("echo", kit.ReadOnly)}, func() { cleaned++ }, nil
		}}
	t.Run("flags and defaults", func(t *testing.T) {
		tools, env, err := Setup(t, spec, []string{"--greeting", "hi"}, nil)
		if err != nil || len(tools) != 1 || greeting != "hi" || env.Info.Name != "greeter" {
			t.Fatalf("tools %d, greeting %q, err %v", len(tools), greeting, err)
		}
		if env.Info.Version != "dev" || env.Info.Commit != "unknown" {
			t.Errorf("a spec without a version: %q %q, want the unlinked binary's dev and unknown", env.Info.Version, env.Info.Commit)
		}
		if rep := env.Health.Report(context.Background()); !rep.OK || len(rep.Parts) != 1 {
			t.Errorf("health %+v", rep)
		}
		if _, err := os.Stat(dataDir); err != nil {
			t.Errorf("the default data directory: %v", err)
		}
	})
	if cleaned != 1 {
		t.Errorf("cleaned up %d times", cleaned)
	}
	mine := t.TempDir()
	if _, _, err := Setup(t, spec, nil, map[string]string{"GREETING": "hey", "MCP_DATA_DIR": mine}); err != nil || greeting != "hey" ||
		filepath.Dir(dataDir) != mine {
		t.Errorf("from the environment: greeting %q, data %s, err %v", greeting, dataDir, err)
	}
	if _, _, err := Setup(t, spec, []string{"--nope"}, nil); err == nil {
		t.Error("an unknown flag was accepted")
	}
	if _, _, err := Setup(t, spec, nil, map[string]string{"GREETING": "fail"}); err == nil || err.Error() != "cannot greet" {
		t.Errorf("a failing Setup: %v", err)
	}
}
