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
	"github.com/mcp-fleet/mcp-fleet/shared/datadir"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/suggest"
	"github.com/rs/zerolog"
)

// Spec describes a server binary to Main.
type Spec struct {
	Info
	Summary     string // one line for --help
	DefaultPort int
	// Flags registers the server's own flags.
	Flags func(f *cli.Flags)
	// Setup builds the server's tools once flags are parsed, and may add
	// resources, workers, listeners and health checks through env. The
	// returned cleanup runs after everything has stopped.
	Setup func(ctx context.Context, env *Env) (tools []Tool, cleanup func(), err error)
	// Commands are subcommands: `<server>-mcp <name> [flags]`. Every
	// server also has "docs" (the Markdown reference).
	Commands []Command
}

// Command is a subcommand, such as `gmail-mcp auth` or `avinode-mcp
// webhooks`. It has its own flags and --help; with ServerFlags it also
// accepts the server's flags (credentials, data directory…) and logging.
// A command that registers workers or listeners on env keeps running them,
// under the same signals and grace period as the server, after Run returns.
type Command struct {
	Name    string
	Summary string
	Flags   func(f *cli.Flags)
	// ServerFlags: also accept Spec.Flags and --log-level.
	ServerFlags bool
	Run         func(ctx context.Context, env *Env) error
}

// Env is what Setup and commands get: the process's configuration and
// shared services, and the places to register what runs beside the tools.
type Env struct {
	Info     Info
	Getenv   func(string) string
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	Metrics  *metrics.Registry
	Notifier *Notifier
	Health   *Health
	// ReadOnly tells a server that only read-only tools will be served, so it
	// can open its backend read-only too.
	ReadOnly bool
	// Stdout is where a command writes its output (not the MCP stream).
	Stdout io.Writer
	// Args are a command's positional arguments.
	Args []string

	resources []Resource
	templates []ResourceTemplate
	workers   []Worker
	listeners []Listener
	cleanups  []func()
}

// AddCleanup runs fn once everything has stopped (after the transport, the
// workers and the listeners), in the reverse order of registration. A
// command uses it to close what its workers shared.
func (e *Env) AddCleanup(fn func()) { e.cleanups = append(e.cleanups, fn) }

func (e *Env) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// DataDir returns (and creates, 0700) the server's local state directory.
func (e *Env) DataDir() (string, error) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return datadir.Ensure(e.Info.Name, getenv)
}

// AddResource serves a static resource beside the tools.
func (e *Env) AddResource(r Resource) { e.resources = append(e.resources, r) }

// AddTemplate serves a resource template beside the tools.
func (e *Env) AddTemplate(t ResourceTemplate) { e.templates = append(e.templates, t) }

// AddWorker runs a background worker for as long as the process serves.
func (e *Env) AddWorker(w Worker) { e.workers = append(e.workers, w) }

// AddListener serves an extra HTTP listener beside the transport.
func (e *Env) AddListener(l Listener) { e.listeners = append(e.listeners, l) }

// AddHealthCheck adds a backend check to /healthz.
func (e *Env) AddHealthCheck(name string, fn func(ctx context.Context) error) {
	e.Health.AddCheck(name, fn)
}

// Config is the kit's own part of the command line.
type Config struct {
	Transport       string
	Host            string
	Port            int
	ACLFiles        []string
	Agent           string
	AuthToken       string
	AgentTokens     string
	ReadOnly        bool
	Tools           []string
	ExcludeTools    []string
	LogLevel        string
	RateLimit       string
	ToolTimeout     time.Duration
	MaxSessions     int
	SessionIdle     time.Duration
	Origins         []string
	AllowedHosts    []string
	NoAuth          bool
	SSE             bool
	Grace           time.Duration
	MaxCalls        int
	MaxSessionCalls int
	MaxMessageBytes int
	MaxInflight     int
	MaxResultBytes  int
	OAuth           oauthFlags
	// serverName names the server's own data-dir variable in --help.
	serverName string
	// Parsed once, by the flag check and by policy.
	limiter     *ratelimit.Limiter
	agentTokens map[string]string
	// secrets are the Secret flags' values, for the log redactor.
	secrets []string
}

// minTokenLength: a bearer token shorter than this is refused at start-up.
const minTokenLength = 16

var logLevelNames = []string{"debug", "info", "warn", "error"}

func registerLogLevel(f *cli.Flags, p *string) {
	f.Enum(p, "log-level", []string{"MCP_LOG_LEVEL", "LOG_LEVEL"}, "info", logLevelNames, "logs on stderr at this level or above")
}

func (c *Config) register(f *cli.Flags, defaultPort int) {
	f.Enum(&c.Transport, "transport", []string{"MCP_TRANSPORT"}, "stdio", []string{"stdio", "http"}, "transport: stdio, or http (streamable HTTP at /mcp)")
	f.String(&c.Host, "host", []string{"MCP_HOST"}, "127.0.0.1", "HTTP listen address")
	f.Int(&c.Port, "port", []string{"MCP_PORT", "MCP_HTTP_PORT"}, defaultPort, "HTTP listen port (0 picks a free one)")
	f.List(&c.ACLFiles, "acl", "MCP_ACL_FILE", string(os.PathListSeparator),
		"agent-to-tool policy file (YAML), then any grant files that widen it (repeat --acl, or separate with "+string(os.PathListSeparator)+"); when set it is enforced")
	f.String(&c.Agent, "agent", []string{"MCP_AGENT"}, "", "agent this stdio connection acts as (needs --acl; stdio only: over HTTP the bearer token names the agent)")
	f.Secret(&c.AuthToken, "MCP_AUTH_TOKEN", fmt.Sprintf("bearer token for HTTP when no ACL policy is used (at least %d characters)", minTokenLength))
	f.Secret(&c.AgentTokens, "MCP_AGENT_TOKENS", "agent=token pairs, comma separated, binding HTTP tokens to policy agents")
	f.Bool(&c.ReadOnly, "read-only", []string{"MCP_READ_ONLY"}, false, "serve only tools that change nothing")
	f.List(&c.Tools, "tools", "MCP_TOOLS", ",", "serve only these tools (comma separated or repeated)")
	f.List(&c.ExcludeTools, "exclude-tools", "MCP_EXCLUDE_TOOLS", ",", "do not serve these tools")
	registerLogLevel(f, &c.LogLevel)
	f.String(&c.RateLimit, "rate-limit", []string{"MCP_RATE_LIMIT"}, "", "per agent and tool, e.g. 60/min or 10/s,burst=20 (default off)")
	f.Duration(&c.ToolTimeout, "tool-timeout", []string{"MCP_TOOL_TIMEOUT"}, 60*time.Second, "time limit of a tool call without its own")
	f.Int(&c.MaxSessions, "max-sessions", []string{"MCP_MAX_SESSIONS"}, 100, "HTTP: most concurrent sessions")
	f.Duration(&c.SessionIdle, "session-idle-timeout", []string{"MCP_SESSION_IDLE_TIMEOUT"}, 30*time.Minute, "HTTP: end a session idle this long")
	f.List(&c.Origins, "allowed-origins", "MCP_ALLOWED_ORIGINS", ",", "HTTP: browser origins allowed besides loopback ones")
	f.List(&c.AllowedHosts, "allowed-hosts", "MCP_ALLOWED_HOSTS", ",", "HTTP: Host header values allowed: on a loopback listener, besides the loopback names; on another, the only ones (on 0.0.0.0 or :: with none given, any)")
	f.Bool(&c.NoAuth, "insecure-no-auth", []string{"MCP_INSECURE_NO_AUTH"}, false, "HTTP: serve without a bearer token (loopback only; for local testing)")
	f.Bool(&c.SSE, "sse", []string{"MCP_SSE"}, false, "HTTP: also serve the 2024-11-05 SSE transport at /sse and /message")
	c.OAuth.register(f)
	f.Duration(&c.Grace, "shutdown-grace", []string{"MCP_SHUTDOWN_GRACE"}, 10*time.Second, "on SIGINT/SIGTERM, time HTTP calls and workers in flight get to finish (stdio calls are cancelled at once)")
	f.Int(&c.MaxCalls, "max-calls", []string{"MCP_MAX_CALLS"}, engine.DefaultMaxCalls, "tool calls and reads running at once in the process")
	f.Int(&c.MaxSessionCalls, "max-session-calls", []string{"MCP_MAX_SESSION_CALLS"}, engine.DefaultMaxSessionCalls, "tool calls and reads running at once per session")
	f.Int(&c.MaxMessageBytes, "max-message-bytes", []string{"MCP_MAX_MESSAGE_BYTES"}, engine.DefaultMaxMessageBytes, "largest JSON-RPC message (stdio line or HTTP body), bytes")
	f.Int(&c.MaxInflight, "max-inflight-bytes", []string{"MCP_MAX_INFLIGHT_BYTES"}, engine.DefaultMaxInflightBytes, "bytes of messages served at once in the process; more is refused with a retryable error")
	f.Int(&c.MaxResultBytes, "max-result-bytes", []string{"MCP_MAX_RESULT_BYTES"}, DefaultMaxResultBytes, "largest tool result, bytes as sent (text and structured content together); tools page or cut what is larger and say how to get the rest")
	f.Note("MCP_DATA_DIR", "root of the servers' local state: <dir>/<server>")
	f.Note(strings.ToUpper(c.serverName)+"_DATA_DIR", "this server's local state directory (wins over MCP_DATA_DIR)")
	positive := func(p *int) func() error {
		return func() error {
			if *p <= 0 {
				return fmt.Errorf("want a positive number, got %d", *p)
			}
			return nil
		}
	}
	f.Check("port", func() error {
		if c.Port < 0 || c.Port > 65535 {
			return fmt.Errorf("want a port number 0–65535, got %d", c.Port)
		}
		return nil
	})
	for name, p := range map[string]*int{"max-sessions": &c.MaxSessions, "max-calls": &c.MaxCalls,
		"max-session-calls": &c.MaxSessionCalls, "max-message-bytes": &c.MaxMessageBytes, "max-inflight-bytes": &c.MaxInflight,
		"max-result-bytes": &c.MaxResultBytes} {
		f.Check(name, positive(p))
	}
	f.Check("tool-timeout", func() error {
		if c.ToolTimeout <= 0 {
			return errors.New("want a positive duration such as 30s")
		}
		return nil
	})
	f.Check("rate-limit", func() (err error) {
		c.limiter, err = ratelimit.Parse(c.RateLimit)
		return err
	})
}

// policy loads the ACL and binds tokens, refusing every combination that
// would silently grant or silently deny.
func (c *Config) policy() (*acl.Policy, error) {
	if c.AuthToken != "" && len(c.AuthToken) < minTokenLength {
		return nil, cli.Usagef("MCP_AUTH_TOKEN is %d characters; use at least %d (for example: openssl rand -hex 24)", len(c.AuthToken), minTokenLength)
	}
	if c.Transport == "http" && c.Agent != "" {
		// Over HTTP each request's agent is the one its bearer token is
		// bound to; a process-wide agent would be ignored, and whoever set
		// it would believe every connection acts as that agent.
		return nil, cli.Usagef("MCP_AGENT/--agent %q is set with the HTTP transport: it names the agent of a stdio connection only; over HTTP each request acts as the agent its bearer token is bound to (MCP_AGENT_TOKENS or token_sha256 in the policy): unset it", c.Agent)
	}
	if len(c.ACLFiles) == 0 {
		if c.Agent != "" {
			return nil, cli.Usagef("MCP_AGENT/--agent is set but no ACL policy is configured (--acl or MCP_ACL_FILE): an identity without a policy would grant everything")
		}
		if c.AgentTokens != "" {
			return nil, cli.Usagef("MCP_AGENT_TOKENS is set but no ACL policy is configured (--acl or MCP_ACL_FILE)")
		}
		return nil, nil
	}
	p, err := acl.Load(c.ACLFiles[0], c.ACLFiles[1:]...)
	if err != nil {
		return nil, cli.Usagef("--acl %s: %v", strings.Join(c.ACLFiles, string(os.PathListSeparator)), err)
	}
	if c.Agent != "" && !p.HasAgent(c.Agent) {
		return nil, cli.Usagef("--agent %q is not in the ACL policy %s (known: %s)%s", c.Agent, c.ACLFiles[0], strings.Join(p.Agents(), ", "), suggest.Closest(c.Agent, p.Agents()))
	}
	if c.AgentTokens != "" {
		toks, err := acl.ParseAgentTokens(c.AgentTokens)
		if err != nil {
			return nil, cli.Usagef("MCP_AGENT_TOKENS: %v", err)
		}
		c.agentTokens = toks
		for tok, agent := range toks {
			if len(tok) < minTokenLength {
				return nil, cli.Usagef("MCP_AGENT_TOKENS: the token of agent %q is %d characters; use at least %d", agent, len(tok), minTokenLength)
			}
			if err := p.AddToken(agent, tok); err != nil {
				return nil, cli.Usagef("MCP_AGENT_TOKENS: %v", err)
			}
		}
	}
	if c.Transport == "stdio" && c.Agent == "" {
		return nil, cli.Usagef("an ACL policy is configured but no agent: set MCP_AGENT or --agent to one of %s", strings.Join(p.Agents(), ", "))
	}
	return p, nil
}

const defaultGCPercent = 75

// IO is the process's standard streams and environment, so Main can be
// driven by tests.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// StdinIsTerminal: stdin is a terminal (a person, not an MCP client).
	StdinIsTerminal bool
}

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
	if err := run(ctx, spec, cfg, io); err != nil {
		fmt.Fprintf(io.Stderr, "%s: %v\n", program, err)
		var ue *cli.UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
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

func newEnv(spec Spec, getenv func(string) string, stderr io.Writer, level string, red *logging.Redactor) *Env {
	log := logging.New(stderr, level, red, spec.Name)
	return &Env{Info: spec.Info, Getenv: getenv, Logger: &log, Redactor: red, Metrics: metrics.New(spec.Name),
		Notifier: NewNotifier(), Health: NewHealth()}
}

func run(ctx context.Context, spec Spec, cfg *Config, io IO) error {
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
	env := newEnv(spec, io.Getenv, logs, cfg.LogLevel, red)
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
// outside the fleet's list. It also logs which grant files widen the
// policy, and for which step.
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

// serverFlags are the flags of the server itself: the kit's and spec's.
func serverFlags(spec Spec) (*cli.Flags, *Config) {
	f := cli.NewFlags(spec.Name + "-mcp")
	cfg := &Config{serverName: spec.Name}
	cfg.register(f, spec.DefaultPort)
	if spec.Flags != nil {
		spec.Flags(f)
	}
	return f, cfg
}

// allCommands are spec's commands and the ones every server has.
func allCommands(spec Spec) []Command {
	return append(append([]Command(nil), spec.Commands...), docsCommand(spec), healthCommand(spec))
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
	env := newEnv(spec, io.Getenv, logs, level, logging.NewRedactor(f.Secrets()...))
	env.Stdout, env.Args = io.Stdout, f.Args()
	err := c.Run(ctx, env)
	if err == nil && (len(env.workers) > 0 || len(env.listeners) > 0) {
		g := &group{log: env.Logger, health: env.Health, grace: grace}
		err = g.run(ctx, nil, env.listeners, env.workers)
	}
	env.cleanup()
	_ = logs.Close()
	if err != nil {
		fmt.Fprintf(io.Stderr, "%s: %v\n", program, err)
		var ue *cli.UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
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
