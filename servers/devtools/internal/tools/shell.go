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
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
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
	Command []string `json:"command" jsonschema:"the command as parsed"`
	Stdout  string   `json:"stdout" jsonschema:"standard output; only its start when stdout_tail is set"`
	// StdoutTail and StdoutOmitted are set when stdout did not fit: its
	// start is in Stdout, its end here, the bytes between left out.
	StdoutTail    string `json:"stdout_tail,omitempty" jsonschema:"the end of stdout, when its middle was left out"`
	StdoutOmitted int64  `json:"stdout_omitted,omitempty" jsonschema:"bytes of stdout left out between stdout and stdout_tail"`
	StdoutBytes   int64  `json:"stdout_bytes" jsonschema:"bytes the program wrote to stdout (up to the output cap)"`
	Stderr        string `json:"stderr" jsonschema:"standard error; only its start when stderr_tail is set"`
	StderrTail    string `json:"stderr_tail,omitempty" jsonschema:"the end of stderr, when its middle was left out"`
	StderrOmitted int64  `json:"stderr_omitted,omitempty" jsonschema:"bytes of stderr left out between stderr and stderr_tail"`
	StderrBytes   int64  `json:"stderr_bytes" jsonschema:"bytes the program wrote to stderr (up to the output cap)"`
	Encoding      string `json:"encoding" jsonschema:"utf-8 or base64 (each of stdout, stdout_tail, stderr, stderr_tail encoded on its own)"`
	ExitCode      int    `json:"exit_code" jsonschema:"the exit status; -1 when a signal ended the program"`
	Signal        string `json:"signal,omitempty"`
	DurationMS    int64  `json:"duration_ms"`
	TimeoutMS     int64  `json:"timeout_ms" jsonschema:"the time limit that applied"`
	Truncated     bool   `json:"truncated" jsonschema:"output was left out: by the output cap (output_capped) or to fit the result budget"`
	OutputCapped  bool   `json:"output_capped" jsonschema:"stdout and stderr together reached the output cap: the program was stopped there"`
	TimedOut      bool   `json:"timed_out"`
	// InvalidUTF8 says bytes that were not UTF-8 were replaced by U+FFFD
	// (utf-8 encoding only); ask for base64 to get them exactly.
	InvalidUTF8 bool   `json:"invalid_utf8,omitempty"`
	Rest        string `json:"rest,omitempty" jsonschema:"what was left out and how to get it, when truncated"`
}

type envVar struct {
	Name  string `json:"name" jsonschema:"variable name" mcp:"minLength=1,maxLength=256"`
	Value string `json:"value" jsonschema:"its value"`
}

type shellArgs struct {
	Command string   `json:"command,omitempty" jsonschema:"one simple command line: words, 'single quotes', \"double quotes\" and backslash escapes, e.g. \"git log --oneline -5\" or \"grep -rn 'TODO' src\". Refused: pipes, ;, &&, ||, &, redirections, $VARS, $(…), backticks, globs (* ? [), ~, {a,b}, assignments and newlines. Nothing is expanded, so quote glob patterns and find's parentheses ('*.go', '('). Give this or argv" mcp:"minLength=1"`
	Argv    []string `json:"argv,omitempty" jsonschema:"the program and its arguments, used as given, nothing expanded. Give this or command.{extraPrograms}" mcp:"minItems=1"`
	Cwd     string   `json:"cwd,omitempty" jsonschema:"working directory: relative to the first root, or absolute inside a root (default: the first root)"`
	// Not capped in the schema: a larger value is lowered to the maximum.
	TimeoutMS int64    `json:"timeout_ms,omitempty" jsonschema:"time limit in milliseconds (default {defaultTimeoutMs}; larger values are lowered to {maxTimeoutMs}); at the limit the program and all its children are killed" mcp:"min=1"`
	Env       []envVar `json:"env,omitempty" jsonschema:"extra environment variables, each name once; only names the operator allows: {envNames}. The program otherwise gets PATH, an empty temporary HOME and LANG=C.UTF-8" mcp:"maxItems=100"`
	Encoding  string   `json:"encoding,omitempty" jsonschema:"how stdout and stderr are returned: utf-8 replaces each run of invalid bytes with U+FFFD (invalid_utf8 says so), base64 returns them exactly" mcp:"enum=utf-8|base64,default=utf-8"`
}

// Validate holds the rules between shell_execute's arguments.
func (a *shellArgs) Validate() error {
	switch {
	case a.Command != "" && len(a.Argv) > 0:
		return mcperr.Invalid("command", a.Command, "command or argv, not both", "give either command or argv, not both")
	case a.Command == "" && len(a.Argv) == 0:
		return mcperr.Invalid("command", nil, "command or argv", "give a command or argv")
	}
	seen := make(map[string]int, len(a.Env))
	for i, v := range a.Env {
		field := "env." + itoa(int64(i)) + ".name"
		if !shell.ValidEnvName(v.Name) {
			return mcperr.Invalid(field, v.Name, "letters, digits and _, not starting with a digit", "%q is not a valid environment variable name", v.Name)
		}
		if j, dup := seen[v.Name]; dup {
			return mcperr.Invalid(field, v.Name, "each name once", "environment variable %s is given twice (env.%d and env.%d)", v.Name, j, i)
		}
		seen[v.Name] = i
	}
	return nil
}

// shellRest is how to see output that was left out.
const shellRest = "to see the rest, narrow the command: filter with grep, pick lines with head -n, tail -n or sed -n 'A,Bp', limit git log with -n; output that comes from a file is read in pages with file_read"

func shellExecute(sh *shell.Shell, roots *Roots) kit.Tool {
	cfg := sh.Config()
	envNames := "none"
	if n := sh.EnvNames(); len(n) > 0 {
		envNames = strings.Join(n, ", ")
	}
	desc := "Run one allowlisted program, without a shell, in a working directory inside the configured roots. " +
		"Give command (one simple command line) or argv (taken literally), not both; nothing is expanded. " +
		"Programs (read-only): " + strings.Join(sh.Programs(), ", ") + ". Each allows only its safe flags (no find -exec/-delete, sort -o, tail -f; " +
		"git only status, log, diff, show, branch/tag listing, rev-parse, ls-files, blame, grep, describe, shortlog, version), and every file argument must lie inside the roots, symbolic links included. " +
		"Clean environment, stdin /dev/null; killed with its children at the timeout (default " + cfg.DefaultTimeout.String() + ", at most " + cfg.MaxTimeout.String() +
		") or when stdout and stderr reach " + bytesize.Format(cfg.MaxOutput) + " (output_capped). " +
		"A non-zero exit is a result, not an error. Output over the result budget keeps its start and end (stdout and stdout_tail); truncated and rest say what was left out."
	extraNames := ""
	if extra := sh.Unrestricted(); len(extra) > 0 {
		if more := " The operator also allows, with ANY arguments and no path checks: " + strings.Join(extra, ", ") + "."; len(desc)+len(more) <= schema.MaxDescription {
			desc += more
		} else {
			extraNames = more
			// A long list would push the description past what hosts
			// accept: the argument's description carries it instead.
			desc += " The operator also allows " + itoa(int64(len(extra))) + " more programs with ANY arguments and no path checks (listed under argv)."
		}
	}
	return kit.NewTool(kit.Tool{
		Name:        "shell_execute",
		Title:       "Run a command",
		Description: desc,
		Vars: schema.Vars{"defaultTimeoutMs": cfg.DefaultTimeout.Milliseconds(), "maxTimeoutMs": cfg.MaxTimeout.Milliseconds(),
			"envNames": envNames, "extraPrograms": extraNames},
		Paging: "narrow the command (grep, head -n, tail -n, sed -n) or read its source file with file_read",
		// With only the built-in programs the tool changes nothing, but an
		// operator may allow runners and interpreters, so it is declared for
		// the worst case; --read-only leaves it out.
		Effect:        kit.Destructive,
		OpenWorld:     true,
		Timeout:       cfg.MaxTimeout + 15*time.Second,
		MaxConcurrent: shellMaxConcurrent,
	}, func(ctx context.Context, c *kit.Call, a shellArgs) (shellResult, error) {
		var dirs []string
		if roots != nil {
			scope, err := roots.For(ctx, c)
			if err != nil {
				return shellResult{}, err
			}
			defer scope.Release()
			dirs = scope.Dirs
		}
		timeout := cfg.MaxTimeout // also guards the conversion below against overflow
		if a.TimeoutMS <= cfg.MaxTimeout.Milliseconds() {
			timeout = time.Duration(a.TimeoutMS) * time.Millisecond
		}
		var env map[string]string
		if len(a.Env) > 0 {
			env = make(map[string]string, len(a.Env))
			for _, v := range a.Env {
				env[v.Name] = v.Value
			}
		}
		stop := reportProgress(ctx, c, timeout, cfg.DefaultTimeout)
		res, err := sh.Run(ctx, shell.Request{Command: a.Command, Argv: a.Argv, Cwd: a.Cwd, Timeout: timeout, Env: env, Roots: dirs})
		stop()
		if err != nil {
			return shellResult{}, err // a *shell.Error says its own code; context errors are the kit's
		}
		out := shellResult{Command: res.Argv, ExitCode: res.ExitCode, Signal: res.Signal,
			DurationMS: res.Duration.Milliseconds(), TimeoutMS: res.Timeout.Milliseconds(),
			StdoutBytes: int64(len(res.Stdout)), StderrBytes: int64(len(res.Stderr)),
			Truncated: res.Truncated, OutputCapped: res.Truncated, TimedOut: res.TimedOut, Encoding: "utf-8"}
		room := c.Room() - kit.CostOf(res.Argv)
		if a.Encoding == "base64" {
			out.Encoding = "base64"
			fitBase64(&out, res.Stdout, res.Stderr, room)
		} else {
			stdout, bad1 := text(res.Stdout)
			stderr, bad2 := text(res.Stderr)
			out.InvalidUTF8 = bad1 || bad2
			fitText2(&out, stdout, stderr, room)
		}
		if out.Truncated {
			out.Rest = shellRestText(&out, cfg.MaxOutput)
		}
		return out, nil
	})
}

// shares splits room between stdout and stderr, costing co and ce: each
// gets what it needs when both fit; else stderr, where errors are, keeps up
// to a quarter and stdout the rest (and stderr what stdout leaves unused).
func shares(co, ce, room int) (int, int) {
	if co+ce <= room {
		return co, ce
	}
	se := min(ce, room/4)
	so := room - se
	if co < so {
		so, se = co, room-co
	}
	return so, se
}

// fitText2 fits utf-8 stdout and stderr into room, each keeping its start
// and its end.
func fitText2(out *shellResult, stdout, stderr string, room int) {
	co, ce := kit.Cost(stdout), kit.Cost(stderr)
	so, se := shares(co, ce, max(room, 0))
	var cut1, cut2 bool
	out.Stdout, out.StdoutTail, out.StdoutOmitted, cut1 = headTail(stdout, co, so)
	out.Stderr, out.StderrTail, out.StderrOmitted, cut2 = headTail(stderr, ce, se)
	out.Truncated = out.Truncated || cut1 || cut2
}

// headTail keeps the start and the end of s, whose kit.Cost is cost,
// costing at most room together, and says how many bytes it left out
// between them.
func headTail(s string, cost, room int) (head, tail string, omitted int64, cut bool) {
	if cost <= room {
		return s, "", 0, false
	}
	head, _ = kit.Clip(s, room/2)
	tail = clipTail(s[len(head):], room-kit.Cost(head))
	return head, tail, int64(len(s) - len(head) - len(tail)), true
}

// fitBase64 is fitText2 for base64: 3 bytes cost 8 once encoded and
// escaped twice, and each part is encoded on its own.
func fitBase64(out *shellResult, stdout, stderr []byte, room int) {
	cost := func(n int) int { return (n + 2) / 3 * 8 }
	so, se := shares(cost(len(stdout)), cost(len(stderr)), max(room, 0))
	part := func(b []byte, room int) (string, string, int64, bool) {
		if cost(len(b)) <= room {
			return base64.StdEncoding.EncodeToString(b), "", 0, false
		}
		n := room / 8 * 3
		h, t := n/2, n-n/2
		return base64.StdEncoding.EncodeToString(b[:h]), base64.StdEncoding.EncodeToString(b[len(b)-t:]), int64(len(b) - h - t), true
	}
	var cut1, cut2 bool
	out.Stdout, out.StdoutTail, out.StdoutOmitted, cut1 = part(stdout, so)
	out.Stderr, out.StderrTail, out.StderrOmitted, cut2 = part(stderr, se)
	out.Truncated = out.Truncated || cut1 || cut2
}

// shellRestText says what a truncated result left out and how to get it.
func shellRestText(out *shellResult, maxOutput int64) string {
	var parts []string
	if out.OutputCapped {
		parts = append(parts, "the program was stopped when its output reached the "+bytesize.Format(maxOutput)+" output cap, so what it would have written after is missing")
	}
	if out.StdoutOmitted > 0 {
		parts = append(parts, "stdout ("+itoa(out.StdoutBytes)+" bytes) did not fit the result budget: stdout holds its start, stdout_tail its end, and the "+
			itoa(out.StdoutOmitted)+" bytes between are left out")
	}
	if out.StderrOmitted > 0 {
		parts = append(parts, "stderr ("+itoa(out.StderrBytes)+" bytes) did not fit: stderr holds its start, stderr_tail its end, and the "+
			itoa(out.StderrOmitted)+" bytes between are left out")
	}
	return strings.Join(parts, "; ") + "; " + shellRest
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
