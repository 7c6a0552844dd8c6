package mcptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
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

// logged is a testing.TB that keeps what is logged to it.
type logged struct {
	testing.TB
	mu    sync.Mutex
	lines []string
}

func (l *logged) Log(a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(a...))
}

func (l *logged) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestSetupLogs: a Setup that logs, as servers do, logs to the test's log
// with the secret flags' values redacted, its cleanup too; what is logged
// once the test is over is dropped instead of failing it; and the Env has
// the linked version as under Main.
func TestSetupLogs(t *testing.T) {
	var token string
	var env *kit.Env
	spec := kit.Spec{Info: kit.Info{Name: "greeter"},
		Flags: func(f *cli.Flags) { f.Secret(&token, "GREETER_TOKEN", "the upstream token") },
		Setup: func(ctx context.Context, e *kit.Env) ([]kit.Tool, func(), error) {
			e.Logger.Info().Msg("connecting with " + token)
			return nil, func() { e.Logger.Debug().Msg("closed") }, nil
		}}
	l := &logged{}
	t.Run("setup", func(t *testing.T) {
		l.TB = t
		var err error
		if _, env, err = Setup(l, spec, nil, map[string]string{"GREETER_TOKEN": "tok-0123456789abcdef"}); err != nil {
			t.Fatal(err)
		}
		if env.Info.Version != buildinfo.Version() || env.Info.Commit != buildinfo.Commit() {
			t.Errorf("version %q commit %q, want the linked %q %q", env.Info.Version, env.Info.Commit, buildinfo.Version(), buildinfo.Commit())
		}
	})
	got := l.text()
	if !strings.Contains(got, "connecting with") || !strings.Contains(got, `"service":"greeter"`) || !strings.Contains(got, `"message":"closed"`) {
		t.Errorf("test log:\n%s", got)
	}
	if strings.Contains(got, "tok-0123456789abcdef") {
		t.Errorf("the secret flag's value reached the log:\n%s", got)
	}
	env.Logger.Error().Msg("after the test")
	if l.text() != got {
		t.Errorf("logged after the test ended:\n%s", l.text())
	}
}
