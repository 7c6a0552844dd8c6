package kit

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/suggest"
)

// config is the kit's own part of the command line.
type config struct {
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

func (c *config) register(f *cli.Flags, defaultPort int) {
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
	f.Int(&c.MaxCalls, "max-calls", []string{"MCP_MAX_CALLS"}, budget.DefaultMaxCalls, "tool calls and reads running at once in the process")
	f.Int(&c.MaxSessionCalls, "max-session-calls", []string{"MCP_MAX_SESSION_CALLS"}, budget.DefaultMaxSessionCalls, "tool calls and reads running at once per session")
	f.Int(&c.MaxMessageBytes, "max-message-bytes", []string{"MCP_MAX_MESSAGE_BYTES"}, budget.DefaultMaxMessageBytes, "largest JSON-RPC message (stdio line or HTTP body), bytes")
	f.Int(&c.MaxInflight, "max-inflight-bytes", []string{"MCP_MAX_INFLIGHT_BYTES"}, budget.DefaultMaxInflightBytes, "bytes of messages served at once in the process; more is refused with a retryable error")
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
func (c *config) policy() (*acl.Policy, error) {
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

// serverFlags are the flags of the server itself: the kit's and spec's.
func serverFlags(spec Spec) (*cli.Flags, *config) {
	f := cli.NewFlags(spec.Name + "-mcp")
	cfg := &config{serverName: spec.Name}
	cfg.register(f, spec.DefaultPort)
	if spec.Flags != nil {
		spec.Flags(f)
	}
	return f, cfg
}
