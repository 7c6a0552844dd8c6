// Package acl is the agent-to-tool access policy: which agent may
// call which tool, and which HTTP bearer token or OAuth identity speaks for
// which agent (the ordered identities rules: first match wins). A
// configured policy fails closed — an agent it does not name gets nothing —
// and every mistake in the file is a load error, never a silent grant.
//
// A policy is one policy file (agents, their tools, their tokens),
// optionally followed by grant files: each widens the policy for one
// workflow step it names (`step:`), by adding tools to agents the policy
// already has. A deployment opts into a widening by listing its grant file
// after the policy; the policy alone is the least-privilege default.
package acl

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Policy maps agents to the tools they may call.
type Policy struct {
	agents map[string]*agent
	// tokens maps sha256(token) → agent.
	tokens map[[32]byte]string
	// grants are the grant files applied, in order.
	grants []Grant
	// identities map OAuth identities to agents, first match wins.
	identities []identityRule
}

// Grant is one grant file applied to a policy.
type Grant struct {
	Path string
	// Step is the workflow step the file says needs its tools.
	Step string
	// Tools are the tools it adds, by agent.
	Tools map[string][]string
}

type agent struct {
	tools map[string]bool
	// resources, when the entry lists them, are exactly the resources the
	// agent may read; nil means "follow the tool families".
	resources map[string]bool
}

// fileFormat is a policy file (agents) or a grant file (step and grants).
type fileFormat struct {
	Version int                  `yaml:"version"`
	Agents  map[string]agentSpec `yaml:"agents"`
	// Step names the workflow step a grant file's tools are for.
	Step string `yaml:"step"`
	// Grants are the tools a grant file adds, by agent.
	Grants map[string][]string `yaml:"grants"`
	// Identities map OAuth access-token identities to agents (policy
	// files only).
	Identities []identityRule `yaml:"identities"`
}

type agentSpec struct {
	Description string   `yaml:"description"`
	Tools       []string `yaml:"tools"`
	// Resources, when present (even empty), lists exactly the resources the
	// agent may read, by name; absent, a resource follows its tool family.
	Resources *[]string `yaml:"resources"`
	// TokenSHA256 lists hex sha256 digests of bearer tokens that identify the
	// agent over HTTP; the file never holds a usable token.
	TokenSHA256 []string `yaml:"token_sha256"`
}

// Names are checked by hand: a counted repetition such as {0,63} makes a
// regexp program large enough to show in every server's start-up time.
const (
	namePattern = "a lowercase letter, then up to 63 of a-z 0-9 _ -"
	toolPattern = "1 to 128 of a-z A-Z 0-9 _ -"
)

func validAgentName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Load reads a policy file and then the grant files that widen it, in
// order. The first path must be a policy file and every other a grant file;
// a grant to an agent the policy does not name, a file given twice, or a
// grant file without its step is an error.
func Load(path string, grants ...string) (*Policy, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ACL policy: %w", err)
	}
	p, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("ACL policy %s: %w", path, err)
	}
	seen := map[string]bool{filepath.Clean(path): true}
	for _, g := range grants {
		if seen[filepath.Clean(g)] {
			return nil, fmt.Errorf("ACL grant file %s is given twice", g)
		}
		seen[filepath.Clean(g)] = true
		raw, err := os.ReadFile(g)
		if err != nil {
			return nil, fmt.Errorf("read ACL grant file: %w", err)
		}
		if err := p.applyGrant(g, raw); err != nil {
			return nil, fmt.Errorf("ACL grant file %s: %w", g, err)
		}
	}
	return p, nil
}

func decode(raw []byte) (*fileFormat, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f fileFormat
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("version must be 1, got %d", f.Version)
	}
	return &f, nil
}

// applyGrant adds a grant file's tools to the policy's agents.
func (p *Policy) applyGrant(path string, raw []byte) error {
	f, err := decode(raw)
	if err != nil {
		return err
	}
	switch {
	case len(f.Agents) > 0:
		return errors.New("has agents: it is a policy file, and only the first file may be one (the others are grant files: step and grants)")
	case len(f.Identities) > 0:
		return errors.New("has identities: they belong in the policy file, which names who acts as which agent")
	case strings.TrimSpace(f.Step) == "":
		return errors.New("step: say which workflow step needs these tools")
	case len(f.Grants) == 0:
		return errors.New("grants: no tools granted")
	}
	g := Grant{Path: path, Step: strings.TrimSpace(f.Step), Tools: map[string][]string{}}
	for name, tools := range f.Grants {
		a, ok := p.agents[name]
		if !ok {
			return fmt.Errorf("grants: agent %q is not in the policy (agents: %s)", name, strings.Join(p.Agents(), ", "))
		}
		if len(tools) == 0 {
			return fmt.Errorf("grants: agent %q: no tools", name)
		}
		for _, t := range tools {
			if !validToolName(t) {
				return fmt.Errorf("grants: agent %q: tool %q is not a valid tool name", name, t)
			}
		}
		for _, t := range tools {
			a.tools[t] = true
		}
		g.Tools[name] = append([]string(nil), tools...)
	}
	p.grants = append(p.grants, g)
	return nil
}

// Grants lists the grant files applied to the policy, in order.
func (p *Policy) Grants() []Grant { return append([]Grant(nil), p.grants...) }

// Parse reads a policy from YAML. Unknown keys are errors: a misspelt "tols:"
// must not quietly give an agent nothing, or worse.
func Parse(raw []byte) (*Policy, error) {
	f, err := decode(raw)
	if err != nil {
		return nil, err
	}
	if f.Step != "" || len(f.Grants) > 0 {
		return nil, errors.New("this is a grant file (step and grants): give it after the policy file it widens")
	}
	if len(f.Agents) == 0 {
		return nil, errors.New("no agents defined")
	}
	p := &Policy{agents: map[string]*agent{}, tokens: map[[32]byte]string{}}
	for name, spec := range f.Agents {
		if !validAgentName(name) {
			return nil, fmt.Errorf("agent %q: a name is %s", name, namePattern)
		}
		a := &agent{tools: map[string]bool{}}
		for _, t := range spec.Tools {
			if !validToolName(t) {
				return nil, fmt.Errorf("agent %q: tool %q is not a valid tool name", name, t)
			}
			a.tools[t] = true
		}
		if spec.Resources != nil {
			a.resources = map[string]bool{}
			for _, r := range *spec.Resources {
				if !validToolName(r) {
					return nil, fmt.Errorf("agent %q: resource %q is not a valid resource name", name, r)
				}
				a.resources[r] = true
			}
		}
		for _, h := range spec.TokenSHA256 {
			sum, err := parseDigest(h)
			if err != nil {
				return nil, fmt.Errorf("agent %q: token_sha256: %w", name, err)
			}
			if other, dup := p.tokens[sum]; dup {
				return nil, fmt.Errorf("agent %q: token_sha256 already used by agent %q", name, other)
			}
			p.tokens[sum] = name
		}
		p.agents[name] = a
	}
	if err := p.checkIdentities(f.Identities); err != nil {
		return nil, err
	}
	return p, nil
}

func parseDigest(h string) ([32]byte, error) {
	var sum [32]byte
	b, err := hex.DecodeString(strings.TrimSpace(h))
	if err != nil || len(b) != 32 {
		return sum, fmt.Errorf("%q is not a hex sha256 digest", h)
	}
	copy(sum[:], b)
	return sum, nil
}

// HasAgent reports whether the policy names agent.
func (p *Policy) HasAgent(name string) bool {
	_, ok := p.agents[name]
	return ok
}

// Agents returns the agent names, sorted.
func (p *Policy) Agents() []string { return sortedKeys(p.agents) }

// Allowed reports whether agent may call tool. Unknown agents may call nothing.
func (p *Policy) Allowed(agentName, tool string) bool {
	a, ok := p.agents[agentName]
	return ok && a.tools[tool]
}

// AllowedResource reports whether agent may read the resource named name,
// which belongs to the tool family given (the tools that read or change
// what it shows). The rule: an agent whose entry lists resources may read
// exactly those; otherwise it may read a resource when it may call any tool
// of its family. Unknown agents may read nothing.
func (p *Policy) AllowedResource(agentName, name string, family []string) bool {
	a, ok := p.agents[agentName]
	if !ok {
		return false
	}
	if a.resources != nil {
		return a.resources[name]
	}
	for _, t := range family {
		if a.tools[t] {
			return true
		}
	}
	return false
}

// Tools returns the tools granted to agent, sorted.
func (p *Policy) Tools(agentName string) []string {
	a, ok := p.agents[agentName]
	if !ok {
		return nil
	}
	return sortedKeys(a.tools)
}

// AddToken binds a bearer token to an agent (from MCP_AGENT_TOKENS). The
// agent must exist in the policy.
func (p *Policy) AddToken(agentName, token string) error {
	if !p.HasAgent(agentName) {
		return fmt.Errorf("token for agent %q: the policy has no such agent (known: %s)", agentName, strings.Join(p.Agents(), ", "))
	}
	sum := sha256.Sum256([]byte(token))
	if other, dup := p.tokens[sum]; dup && other != agentName {
		return fmt.Errorf("token for agent %q is already bound to agent %q", agentName, other)
	}
	p.tokens[sum] = agentName
	return nil
}

// AgentForToken returns the agent a bearer token speaks for.
func (p *Policy) AgentForToken(token string) (string, bool) {
	sum := sha256.Sum256([]byte(token))
	name, ok := p.tokens[sum]
	return name, ok
}

// HasTokens reports whether any token is bound.
func (p *Policy) HasTokens() bool { return len(p.tokens) > 0 }

// TokenEqual compares two tokens in constant time.
func TokenEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// ParseAgentTokens reads MCP_AGENT_TOKENS: "agent=token,agent2=token2".
func ParseAgentTokens(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, tok, ok := strings.Cut(part, "=")
		name, tok = strings.TrimSpace(name), strings.TrimSpace(tok)
		if !ok || name == "" || tok == "" {
			return nil, fmt.Errorf("MCP_AGENT_TOKENS entry %d: want agent=token", len(out)+1)
		}
		if len(tok) < 16 {
			return nil, fmt.Errorf("MCP_AGENT_TOKENS: token for agent %q is shorter than 16 characters", name)
		}
		if _, dup := out[tok]; dup {
			return nil, fmt.Errorf("MCP_AGENT_TOKENS: one token is given twice")
		}
		out[tok] = name
	}
	return out, nil
}

// sortedKeys lists m's keys, sorted; an empty m gives an empty, not nil,
// list.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
