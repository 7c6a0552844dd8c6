package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/schema"
)

// ShellTools returns shell_execute, running commands under sh's policy in
// the roots r gives each call (nil: sh's own roots).
func ShellTools(sh *shell.Shell, r *Roots) []kit.Tool {
	return []kit.Tool{shellExecute(sh, r)}
}

// shellMaxConcurrent bounds the commands running at once: a burst of calls
// queues briefly and is then refused with RATE_LIMIT_ERROR instead of
// starting a process per call.
const shellMaxConcurrent = 4

type shellResult struct {
	Command    []string `json:"command"`
	Stdout     string   `json:"stdout"`
	Stderr     string   `json:"stderr"`
	Encoding   string   `json:"encoding"`
	ExitCode   int      `json:"exit_code"`
	Signal     string   `json:"signal,omitempty"`
	DurationMS int64    `json:"duration_ms"`
	TimeoutMS  int64    `json:"timeout_ms"`
	Truncated  bool     `json:"truncated"`
	TimedOut   bool     `json:"timed_out"`
	// InvalidUTF8 says bytes that were not UTF-8 were replaced by U+FFFD
	// (utf-8 encoding only); ask for base64 to get them exactly.
	InvalidUTF8 bool `json:"invalid_utf8,omitempty"`
}

type shellArgs struct {
	Command string   `json:"command,omitempty" jsonschema:"one simple command line, e.g. \"git log --oneline -5\" or \"grep -rn 'TODO' src\"" mcp:"minLength=1"`
	Argv    []string `json:"argv,omitempty" jsonschema:"the program and its arguments, used as given (give this or command, not both)" mcp:"minItems=1"`
	Cwd     string   `json:"cwd,omitempty" jsonschema:"working directory: relative to the first root, or absolute inside a root (default: the first root)"`
	// Not capped in the schema: a larger value is lowered to the maximum.
	TimeoutMS int64             `json:"timeout_ms,omitempty" jsonschema:"time limit in milliseconds (default {defaultTimeoutMs}; larger values are lowered to {maxTimeoutMs})" mcp:"min=1"`
	Env       map[string]string `json:"env,omitempty" jsonschema:"extra environment variables; only names the operator allows"`
	Encoding  string            `json:"encoding,omitempty" jsonschema:"how stdout and stderr are returned" mcp:"enum=utf-8|base64,default=utf-8"`
}

func shellExecute(sh *shell.Shell, roots *Roots) kit.Tool {
	cfg := sh.Config()
	programs := strings.Join(sh.Programs(), ", ")
	desc := "Run one program from an allowlist, without a shell, in a working directory inside the configured roots. " +
		"Give either command (one simple command line: words, 'single quotes', \"double quotes\" and backslash escapes) " +
		"or argv (the program and its arguments, taken literally). Pipes, ;, &&, ||, &, redirections, $VARS, $(…), backticks, " +
		"globs (* ? [), ~, {a,b}, assignments and newlines are refused: nothing is expanded, so quote glob patterns and find's parentheses ('*.go', '('). " +
		"Read-only programs: " + programs + "; each allows only its safe flags (no find -exec/-delete, no sort -o, no tail -f, " +
		"git only status, log, diff, show, branch/tag listing, rev-parse, ls-files, blame, grep, describe, shortlog, version), " +
		"and every file argument must lie inside the roots, symbolic links included. " +
		"The program gets a clean environment (PATH, an empty temporary HOME, LANG=C.UTF-8, plus env variables the operator allows by name), stdin /dev/null, " +
		"and is killed with all its children at the timeout (default " + cfg.DefaultTimeout.String() + ", at most " + cfg.MaxTimeout.String() + ") " +
		"or when stdout and stderr together reach " + bytesize.Format(cfg.MaxOutput) + " (truncated). " +
		"Result: stdout, stderr, exit_code (a non-zero exit is a result, not an error; -1 with signal when killed), duration_ms, timed_out, truncated, and the parsed command. " +
		"Output is UTF-8 with each run of invalid bytes replaced by U+FFFD (invalid_utf8 says so), or base64 on request."
	if extra := sh.Unrestricted(); len(extra) > 0 {
		desc += " The operator also allows, with ANY arguments and no path checks: " + strings.Join(extra, ", ") + "."
	}
	return kit.Tool{
		Name:        "shell_execute",
		Title:       "Run a command",
		Description: desc,
		InputSchema: schema.MustFor[shellArgs](schema.Vars{"defaultTimeoutMs": cfg.DefaultTimeout.Milliseconds(),
			"maxTimeoutMs": cfg.MaxTimeout.Milliseconds()}),
		// With only the built-in programs the tool changes nothing, but an
		// operator may allow runners and interpreters, so it is declared for
		// the worst case; --read-only leaves it out.
		Effect:        kit.Destructive,
		OpenWorld:     true,
		Timeout:       cfg.MaxTimeout + 15*time.Second,
		MaxConcurrent: shellMaxConcurrent,
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			var a shellArgs
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			var dirs []string
			if roots != nil {
				scope, err := roots.For(ctx, c)
				if err != nil {
					return nil, err
				}
				defer scope.Release()
				dirs = scope.Dirs
			}
			timeout := cfg.MaxTimeout // also guards the conversion below against overflow
			if a.TimeoutMS <= cfg.MaxTimeout.Milliseconds() {
				timeout = time.Duration(a.TimeoutMS) * time.Millisecond
			}
			stop := reportProgress(ctx, c, timeout, cfg.DefaultTimeout)
			res, err := sh.Run(ctx, shell.Request{Command: a.Command, Argv: a.Argv, Cwd: a.Cwd, Timeout: timeout, Env: a.Env, Roots: dirs})
			stop()
			if err != nil {
				return nil, err // a *shell.Error says its own code; context errors are the kit's
			}
			out := shellResult{Command: res.Argv, ExitCode: res.ExitCode, Signal: res.Signal,
				DurationMS: res.Duration.Milliseconds(), TimeoutMS: res.Timeout.Milliseconds(),
				Truncated: res.Truncated, TimedOut: res.TimedOut, Encoding: "utf-8"}
			if a.Encoding == "base64" {
				out.Encoding = "base64"
				out.Stdout = base64.StdEncoding.EncodeToString(res.Stdout)
				out.Stderr = base64.StdEncoding.EncodeToString(res.Stderr)
			} else {
				var bad1, bad2 bool
				out.Stdout, bad1 = text(res.Stdout)
				out.Stderr, bad2 = text(res.Stderr)
				out.InvalidUTF8 = bad1 || bad2
			}
			return out, nil
		},
	}
}

// text returns b as UTF-8, replacing invalid bytes with U+FFFD.
func text(b []byte) (string, bool) {
	if utf8.Valid(b) {
		return string(b), false
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), true
}

// progressEvery is how often a running command reports that it is alive.
const progressEvery = time.Second

// reportProgress sends notifications/progress (seconds elapsed of the time
// limit) while a command runs, when the client asked for progress, so a
// client can show that a long build or search is alive. stop ends it.
func reportProgress(ctx context.Context, c *kit.Call, timeout, fallback time.Duration) (stop func()) {
	if timeout <= 0 {
		timeout = fallback
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				elapsed := now.Sub(start).Round(time.Second)
				c.Progress(ctx, elapsed.Seconds(), timeout.Seconds(), fmt.Sprintf("running for %s of at most %s", elapsed, timeout))
			}
		}
	}()
	return func() { close(done); <-finished }
}
