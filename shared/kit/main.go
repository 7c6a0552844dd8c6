package kit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/suggest"
)

// Main runs a server binary: a subcommand, or by default the server — flags
// and environment, logging, tools, then the transport with its workers and
// listeners until SIGINT/SIGTERM or stdin closes. It returns the exit code:
// 0, 1 on a failure while running, 2 for bad flags, values or arguments.
// stdout carries protocol messages only.
func Main(spec Spec, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainIO(spec, args, IO{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv, StdinIsTerminal: isTerminal(stdin)})
}

// MainIO is Main with the terminal check made by the caller.
func MainIO(spec Spec, args []string, io IO) int {
	program := spec.Name + "-mcp"
	spec = linked(spec)
	if getenvOr(io.Getenv, "GOGC") == "" {
		// These servers keep a few MB live; collecting at 75% growth instead
		// of 100% keeps the resident set of a long session ~2 MB smaller for
		// a few percent of CPU. GOGC in the environment still wins.
		debug.SetGCPercent(defaultGCPercent)
	}
	commands := allCommands(spec)
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, c := range commands {
			if c.Name == args[0] {
				return runCommand(spec, c, args[1:], io)
			}
		}
		names := make([]string, 0, len(commands))
		for _, c := range commands {
			names = append(names, c.Name)
		}
		sort.Strings(names)
		fmt.Fprintf(io.Stderr, "%s: unknown command %q%s (commands: %s; see --help)\n", program, args[0], suggest.Closest(args[0], names), strings.Join(names, ", "))
		return 2
	}
	f, cfg := serverFlags(spec)
	switch err := f.Parse(args, io.Getenv); {
	case errors.Is(err, cli.ErrHelp):
		f.Usage(io.Stdout, program, spec.Summary)
		writeCommands(io.Stdout, program, commands)
		return 0
	case errors.Is(err, cli.ErrVersion):
		fmt.Fprintf(io.Stdout, "%s %s (commit %s)\n", program, spec.Version, spec.Commit)
		return 0
	case err != nil:
		fmt.Fprintf(io.Stderr, "%s: %v\n", program, err)
		return 2
	}
	cfg.secrets = f.Secrets()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return exitCode(io.Stderr, program, run(ctx, spec, cfg, io))
}

// exitCode reports err on w and returns the exit code: 0 without one, 2 for
// a bad flag, value or argument, 1 for any other failure.
func exitCode(w io.Writer, program string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "%s: %v\n", program, err)
	var ue *cli.UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func getenvOr(getenv func(string) string, k string) string {
	if getenv == nil {
		return os.Getenv(k)
	}
	return getenv(k)
}

func writeCommands(w io.Writer, program string, commands []Command) {
	fmt.Fprintf(w, "\nCommands (%s <command> --help for their flags):\n", program)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-28s %s\n", c.Name, c.Summary)
	}
}

func run(ctx context.Context, spec Spec, cfg *config, io IO) error {
	policy, err := cfg.policy()
	if err != nil {
		return err
	}
	oauthCfg, err := cfg.OAuth.config(cfg.Transport, spec.Name)
	if err != nil {
		return err
	}
	red := logging.NewRedactor(append([]string{cfg.AuthToken}, cfg.secrets...)...)
	for tok := range cfg.agentTokens {
		red.Add(tok)
	}
	// Log lines (one audit line per call) are written by one goroutine that
	// gathers those arriving during a write: one write for many under load.
	logs := logging.NewBatchWriter(io.Stderr)
	defer logs.Close()
	env := NewEnv(spec, io.Getenv, logs, cfg.LogLevel, red)
	defer env.cleanup()
	env.ReadOnly = cfg.ReadOnly
	log := env.Logger
	warnUnusedIdentities(policy, oauthCfg != nil, log)
	var verifier *oauth.Verifier
	if oauthCfg != nil {
		if verifier, err = newVerifier(ctx, oauthCfg, policy, log); err != nil {
			return err
		}
	}
	if policy != nil {
		for _, g := range policy.Grants() {
			log.Info().Str("grant_file", g.Path).Str("step", g.Step).Interface("tools", g.Tools).
				Msg("an ACL grant file widens the policy")
		}
	}
	tools, cleanup, err := spec.Setup(ctx, env)
	if err != nil {
		return setupErr(err)
	}
	if cleanup != nil {
		defer cleanup()
	}
	if err := checkPolicyTools(policy, cfg.ACLFiles, tools, env); err != nil {
		return err
	}
	srv, err := New(spec.Info, tools, Options{
		Policy: policy, ReadOnly: cfg.ReadOnly, Include: cfg.Tools, Exclude: cfg.ExcludeTools,
		Resources: env.resources, Templates: env.templates, Notifier: env.Notifier,
		DefaultTimeout: cfg.ToolTimeout, Grace: cfg.Grace, Limiter: cfg.limiter, Logger: log, Redactor: red, Metrics: env.Metrics,
		Limits: Limits{MaxCalls: cfg.MaxCalls, MaxSessionCalls: cfg.MaxSessionCalls,
			MaxMessageBytes: int64(cfg.MaxMessageBytes), MaxInflightBytes: int64(cfg.MaxInflight),
			MaxResultBytes: cfg.MaxResultBytes},
	})
	if err != nil {
		return cli.Usagef("%v", err)
	}
	defer srv.e.StopWatches()
	var serve func(ctx context.Context) error
	if cfg.Transport == "http" {
		o := HTTPOptions{
			Addr: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), AuthToken: cfg.AuthToken, NoAuth: cfg.NoAuth,
			AllowedOrigins: cfg.Origins, AllowedHosts: cfg.AllowedHosts, MaxSessions: cfg.MaxSessions,
			SessionIdle: cfg.SessionIdle, SSE: cfg.SSE, Health: env.Health.serve, Grace: cfg.Grace, OAuth: verifier,
		}
		if err := srv.e.CheckHTTPOptions(o); err != nil {
			return cli.Usagef("%v", err)
		}
		serve = func(ctx context.Context) error { return srv.ServeHTTP(ctx, o, nil) }
	} else {
		if io.StdinIsTerminal {
			fmt.Fprintf(io.Stderr, "%s-mcp is an MCP server: it speaks JSON-RPC on stdin/stdout and is waiting for an MCP client.\n"+
				"Add it to your client (Claude Desktop, Claude Code, Cursor, VS Code — see configs/clients/), or try it with the\n"+
				"MCP Inspector: npx @modelcontextprotocol/inspector %s. Press Ctrl-D to quit.\n", spec.Name, os.Args[0])
		}
		log.Info().Str("agent", cfg.Agent).Strs("tools", srv.e.EffectiveTools(cfg.Agent)).Msg("serving stdio")
		serve = func(ctx context.Context) error { return srv.ServeStdio(ctx, cfg.Agent, io.Stdin, io.Stdout) }
	}
	g := &group{log: log, health: env.Health, grace: cfg.Grace}
	return g.run(ctx, serve, env.listeners, env.workers)
}

// checkPolicyTools refuses a policy that grants a tool no server of the
// fleet has — a misspelt name would otherwise grant nothing, silently. One
// policy covers every server, so a tool this server lacks is fine when
// another server has it; the server's own tools count too, for servers
// outside the fleet's list.
func checkPolicyTools(p *acl.Policy, files []string, tools []Tool, env *Env) error {
	if p == nil {
		return nil
	}
	own := map[string]bool{}
	for _, t := range tools {
		own[t.Name] = true
	}
	ownRes := map[string]bool{}
	for _, r := range env.resources {
		ownRes[r.Name] = true
	}
	for _, r := range env.templates {
		ownRes[r.Name] = true
	}
	var msgs []string
	candidates := acl.FleetToolNames()
	for name := range own {
		candidates = append(candidates, name)
	}
	for _, u := range p.UnknownTools(func(name string) bool { return own[name] }) {
		file := files[0]
		if u.Grant != "" {
			file = u.Grant
		}
		msgs = append(msgs, fmt.Sprintf("%s: agent %q is granted %q, which no server of the fleet has%s", file, u.Agent, u.Tool, suggest.Closest(u.Tool, candidates)))
	}
	resCandidates := acl.FleetResourceNames()
	for name := range ownRes {
		resCandidates = append(resCandidates, name)
	}
	for _, u := range p.UnknownResources(func(name string) bool { return ownRes[name] }) {
		msgs = append(msgs, fmt.Sprintf("%s: agent %q lists the resource %q, which no server of the fleet has%s", files[0], u.Agent, u.Tool, suggest.Closest(u.Tool, resCandidates)))
	}
	if len(msgs) == 0 {
		return nil
	}
	return cli.Usagef("ACL policy: unknown tool or resource names (a misspelt name would grant nothing):\n  %s", strings.Join(msgs, "\n  "))
}

// runCommand runs a subcommand with its own flags.
func runCommand(spec Spec, c Command, args []string, io IO) int {
	program := spec.Name + "-mcp " + c.Name
	f := cli.NewFlags(program)
	var level string
	grace := 10 * time.Second
	if c.ServerFlags {
		registerLogLevel(f, &level)
		f.Duration(&grace, "shutdown-grace", []string{"MCP_SHUTDOWN_GRACE"}, grace, "on SIGINT/SIGTERM, time work in flight gets to finish")
		if spec.Flags != nil {
			spec.Flags(f)
		}
	} else {
		level = "info"
	}
	if c.Flags != nil {
		c.Flags(f)
	}
	switch err := f.Parse(args, io.Getenv, true); {
	case errors.Is(err, cli.ErrHelp):
		f.Usage(io.Stdout, program, c.Summary)
		return 0
	case errors.Is(err, cli.ErrVersion):
		fmt.Fprintf(io.Stdout, "%s-mcp %s (commit %s)\n", spec.Name, spec.Version, spec.Commit)
		return 0
	case err != nil:
		fmt.Fprintf(io.Stderr, "%s: %v\n", program, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logs := logging.NewBatchWriter(io.Stderr)
	env := NewEnv(spec, io.Getenv, logs, level, logging.NewRedactor(f.Secrets()...))
	env.Stdout, env.Args = io.Stdout, f.Args()
	err := c.Run(ctx, env)
	if err == nil && (len(env.workers) > 0 || len(env.listeners) > 0) {
		g := &group{log: env.Logger, health: env.Health, grace: grace}
		err = g.run(ctx, nil, env.listeners, env.workers)
	}
	env.cleanup()
	_ = logs.Close()
	return exitCode(io.Stderr, program, err)
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// setupErr classes a set-up failure on a path (a data, database or
// workbook directory that cannot be created or is not a directory) as a
// configuration error: the path came from a flag, a variable or the data
// directory default, and the operator must change it, so Main exits 2.
func setupErr(err error) error {
	var pe *fs.PathError
	var ue *cli.UsageError
	if errors.As(err, &pe) && !errors.As(err, &ue) {
		return &cli.UsageError{Msg: err.Error() + " (a path setting is wrong: see --help for the flags and variables that set it)"}
	}
	return err
}
