package kit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/datadir"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/rs/zerolog"
)

// Spec describes a server binary to Main.
type Spec struct {
	Info
	Summary     string // one line for --help
	DefaultPort int
	// Flags registers the server's own flags.
	Flags func(f *Flags)
	// Setup builds the server's tools once flags are parsed. The returned
	// cleanup runs after the transport stops.
	Setup func(ctx context.Context, env *Env) (tools []Tool, cleanup func(), err error)
}

// Env is what Setup gets: the process's configuration and shared services.
type Env struct {
	Info     Info
	Getenv   func(string) string
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	Metrics  *metrics.Registry
	// ReadOnly tells a server that only read-only tools will be served, so it
	// can open its backend read-only too.
	ReadOnly bool
}

// DataDir returns (and creates, 0700) the server's local state directory.
func (e *Env) DataDir() (string, error) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return datadir.Ensure(e.Info.Name, getenv)
}

// Config is the kit's own part of the command line.
type Config struct {
	Transport    string
	Host         string
	Port         int
	ACLFile      string
	Agent        string
	AuthToken    string
	AgentTokens  string
	ReadOnly     bool
	Tools        []string
	ExcludeTools []string
	LogLevel     string
	RateLimit    string
	ToolTimeout  time.Duration
	MaxSessions  int
	SessionIdle  time.Duration
	Origins      []string
	AllowedHosts []string
	NoAuth       bool
	SSE          bool
}

func (c *Config) register(f *Flags, defaultPort int) {
	f.String(&c.Transport, "transport", []string{"MCP_TRANSPORT"}, "stdio", "transport: stdio or http (streamable HTTP)")
	f.String(&c.Host, "host", []string{"MCP_HOST"}, "127.0.0.1", "HTTP listen address")
	f.Int(&c.Port, "port", []string{"MCP_PORT", "MCP_HTTP_PORT"}, defaultPort, "HTTP listen port")
	f.String(&c.ACLFile, "acl", []string{"MCP_ACL_FILE"}, "", "agent-to-tool policy file (YAML); when set it is enforced")
	f.String(&c.Agent, "agent", []string{"MCP_AGENT"}, "", "agent this stdio connection acts as (needs --acl)")
	f.Secret(&c.AuthToken, "MCP_AUTH_TOKEN", "bearer token for HTTP when no ACL policy is used")
	f.Secret(&c.AgentTokens, "MCP_AGENT_TOKENS", "agent=token pairs, comma separated, binding HTTP tokens to policy agents")
	f.Bool(&c.ReadOnly, "read-only", []string{"MCP_READ_ONLY"}, false, "serve only tools that change nothing")
	f.List(&c.Tools, "tools", "MCP_TOOLS", ",", "serve only these tools (comma separated or repeated)")
	f.List(&c.ExcludeTools, "exclude-tools", "MCP_EXCLUDE_TOOLS", ",", "do not serve these tools")
	f.String(&c.LogLevel, "log-level", []string{"MCP_LOG_LEVEL", "LOG_LEVEL"}, "info", "debug, info, warn or error (logs go to stderr)")
	f.String(&c.RateLimit, "rate-limit", []string{"MCP_RATE_LIMIT"}, "", "per agent and tool, e.g. 60/min or 10/s,burst=20 (default off)")
	f.Duration(&c.ToolTimeout, "tool-timeout", []string{"MCP_TOOL_TIMEOUT"}, 60*time.Second, "time limit of a tool call without its own")
	f.Int(&c.MaxSessions, "max-sessions", []string{"MCP_MAX_SESSIONS"}, 100, "HTTP: most concurrent sessions")
	f.Duration(&c.SessionIdle, "session-idle-timeout", []string{"MCP_SESSION_IDLE_TIMEOUT"}, 30*time.Minute, "HTTP: drop a session idle this long")
	f.List(&c.Origins, "allowed-origins", "MCP_ALLOWED_ORIGINS", ",", "HTTP: browser origins allowed besides loopback ones")
	f.List(&c.AllowedHosts, "allowed-hosts", "MCP_ALLOWED_HOSTS", ",", "HTTP: Host header values allowed besides loopback names")
	f.Bool(&c.NoAuth, "insecure-no-auth", []string{"MCP_INSECURE_NO_AUTH"}, false, "HTTP: serve without a bearer token (loopback only; for local testing)")
	f.Bool(&c.SSE, "sse", []string{"MCP_SSE"}, false, "HTTP: also serve the 2024-11-05 SSE transport at /sse and /message")
}

// policy loads the ACL and binds tokens, refusing every combination that
// would silently grant or silently deny.
func (c *Config) policy() (*acl.Policy, error) {
	if c.ACLFile == "" {
		if c.Agent != "" {
			return nil, errors.New("MCP_AGENT/--agent is set but no ACL policy is configured (--acl or MCP_ACL_FILE): an identity without a policy would grant everything")
		}
		if c.AgentTokens != "" {
			return nil, errors.New("MCP_AGENT_TOKENS is set but no ACL policy is configured (--acl or MCP_ACL_FILE)")
		}
		return nil, nil
	}
	p, err := acl.Load(c.ACLFile)
	if err != nil {
		return nil, err
	}
	if c.Agent != "" && !p.HasAgent(c.Agent) {
		return nil, fmt.Errorf("agent %q is not in the ACL policy %s (known: %s)", c.Agent, c.ACLFile, strings.Join(p.Agents(), ", "))
	}
	if c.AgentTokens != "" {
		toks, err := acl.ParseAgentTokens(c.AgentTokens)
		if err != nil {
			return nil, err
		}
		for tok, agent := range toks {
			if err := p.AddToken(agent, tok); err != nil {
				return nil, err
			}
		}
	}
	if c.Transport == "stdio" && c.Agent == "" {
		return nil, fmt.Errorf("an ACL policy is configured but no agent: set MCP_AGENT or --agent to one of %s", strings.Join(p.Agents(), ", "))
	}
	return p, nil
}

const defaultGCPercent = 75

// Main runs a server binary: flags and environment, logging, tools, then
// the chosen transport until SIGINT/SIGTERM or stdin closes. It returns the
// process exit code. stdout carries protocol messages only.
func Main(spec Spec, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	program := spec.Name + "-mcp"
	f := NewFlags(program)
	var cfg Config
	cfg.register(f, spec.DefaultPort)
	if spec.Flags != nil {
		spec.Flags(f)
	}
	switch err := f.Parse(args, getenv); {
	case errors.Is(err, ErrHelp):
		f.Usage(stdout, program, spec.Summary)
		return 0
	case errors.Is(err, ErrVersion):
		fmt.Fprintf(stdout, "%s %s (commit %s)\n", program, spec.Version, spec.Commit)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 2
	}
	if getenv("GOGC") == "" {
		// These servers keep a few MB live; collecting at 75% growth instead
		// of 100% keeps the resident set of a long session ~2 MB smaller for
		// a few percent of CPU. GOGC in the environment still wins.
		debug.SetGCPercent(defaultGCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, spec, &cfg, getenv, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}
	return 0
}

func run(ctx context.Context, spec Spec, cfg *Config, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch cfg.Transport {
	case "stdio", "http":
	default:
		return fmt.Errorf("transport %q: want stdio or http", cfg.Transport)
	}
	policy, err := cfg.policy()
	if err != nil {
		return err
	}
	limiter, err := ratelimit.Parse(cfg.RateLimit)
	if err != nil {
		return err
	}
	red := logging.NewRedactor(cfg.AuthToken)
	if toks, err := acl.ParseAgentTokens(cfg.AgentTokens); err == nil {
		for tok := range toks {
			red.Add(tok)
		}
	}
	log := logging.New(stderr, cfg.LogLevel, red, spec.Name)
	reg := metrics.New(spec.Name)
	env := &Env{Info: spec.Info, Getenv: getenv, Logger: &log, Redactor: red, Metrics: reg, ReadOnly: cfg.ReadOnly}
	tools, cleanup, err := spec.Setup(ctx, env)
	if err != nil {
		return err
	}
	if cleanup != nil {
		defer cleanup()
	}
	srv, err := New(spec.Info, tools, Options{
		Policy: policy, ReadOnly: cfg.ReadOnly, Include: cfg.Tools, Exclude: cfg.ExcludeTools,
		DefaultTimeout: cfg.ToolTimeout, Limiter: limiter, Logger: &log, Redactor: red, Metrics: reg,
	})
	if err != nil {
		return err
	}
	if cfg.Transport == "http" {
		return srv.ServeHTTP(ctx, HTTPOptions{
			Addr: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), AuthToken: cfg.AuthToken, NoAuth: cfg.NoAuth,
			AllowedOrigins: cfg.Origins, AllowedHosts: cfg.AllowedHosts, MaxSessions: cfg.MaxSessions,
			SessionIdle: cfg.SessionIdle, SSE: cfg.SSE,
		}, nil)
	}
	log.Info().Str("agent", cfg.Agent).Strs("tools", srv.ToolNames()).Msg("serving stdio")
	return srv.ServeStdio(ctx, cfg.Agent, stdin, stdout)
}
