package acl

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/suggest"
)

// Identity is what an OAuth access token says about its bearer, as far as
// the policy's identities rules look at it.
type Identity struct {
	Issuer   string
	Subject  string
	ClientID string
	Groups   []string
	Scopes   []string
}

// identityRule maps the identities it matches to an agent. Every matcher
// it gives must match; a rule without matchers is a load error (it would
// give every token of the issuer the agent). Issuer is a filter, not a
// matcher: the server accepts one issuer, so every token it takes names it.
type identityRule struct {
	Issuer   string   `yaml:"issuer"`
	Subject  string   `yaml:"subject"`
	Groups   []string `yaml:"groups"`
	Scopes   []string `yaml:"scopes"`
	ClientID string   `yaml:"client_id"`
	Agent    string   `yaml:"agent"`
}

func (r identityRule) matches(id Identity) bool {
	if r.Issuer != "" && r.Issuer != id.Issuer {
		return false
	}
	if r.Subject != "" && r.Subject != id.Subject {
		return false
	}
	if r.ClientID != "" && r.ClientID != id.ClientID {
		return false
	}
	if len(r.Groups) > 0 && !anyOf(r.Groups, id.Groups) {
		return false
	}
	for _, s := range r.Scopes {
		if !slices.Contains(id.Scopes, s) {
			return false
		}
	}
	return true
}

func anyOf(want, have []string) bool {
	return slices.ContainsFunc(want, func(w string) bool { return slices.Contains(have, w) })
}

// checkIdentities refuses rules without a matcher (issuer alone is none)
// or naming no known agent.
func (p *Policy) checkIdentities(rules []identityRule) error {
	for i, r := range rules {
		at := fmt.Sprintf("identities[%d]", i)
		if r.Agent == "" {
			return fmt.Errorf("%s: agent: say which agent this identity acts as", at)
		}
		if !p.HasAgent(r.Agent) {
			return fmt.Errorf("%s: agent %q is not in the policy (agents: %s)%s", at, r.Agent, strings.Join(p.Agents(), ", "), suggest.Closest(r.Agent, p.Agents()))
		}
		if r.Subject == "" && len(r.Groups) == 0 && len(r.Scopes) == 0 && r.ClientID == "" {
			return errors.New(at + ": give at least one of subject, groups, scopes, client_id (issuer alone is not one): a rule matching every token would grant " + r.Agent + " to anyone the issuer knows")
		}
		for _, list := range [][]string{r.Groups, r.Scopes} {
			for _, v := range list {
				if strings.TrimSpace(v) == "" {
					return fmt.Errorf("%s: an empty group or scope matches nothing", at)
				}
			}
		}
	}
	p.identities = rules
	return nil
}

// AgentForIdentity returns the agent of the first identities rule that
// matches id; false when none does.
func (p *Policy) AgentForIdentity(id Identity) (string, bool) {
	for _, r := range p.identities {
		if r.matches(id) {
			return r.Agent, true
		}
	}
	return "", false
}

// IdentityRules is the number of identities rules.
func (p *Policy) IdentityRules() int { return len(p.identities) }
