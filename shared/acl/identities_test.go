package acl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const identitiesPolicy = `
version: 1
agents:
  reader: {tools: [echo]}
  writer: {tools: [echo, write]}
  admin: {tools: [echo, write]}
identities:
  - subject: "auth0|alice"
    agent: admin
  - groups: [charter-ops, ops]
    agent: writer
  - scopes: [fleet:read, fleet:list]
    client_id: connector
    agent: reader
  - issuer: https://other.example
    subject: bob
    agent: reader
`

func TestIdentities(t *testing.T) {
	p, err := Parse([]byte(identitiesPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if p.IdentityRules() != 4 {
		t.Fatalf("%d rules", p.IdentityRules())
	}
	cases := []struct {
		id    Identity
		agent string
	}{
		// The first rule wins even when a later one matches too.
		{Identity{Subject: "auth0|alice", Groups: []string{"ops"}}, "admin"},
		{Identity{Subject: "carol", Groups: []string{"x", "ops"}}, "writer"},
		{Identity{Subject: "dan", ClientID: "connector", Scopes: []string{"fleet:list", "fleet:read", "openid"}}, "reader"},
		// Every scope of the rule is needed, and the client too.
		{Identity{Subject: "dan", ClientID: "connector", Scopes: []string{"fleet:read"}}, ""},
		{Identity{Subject: "dan", ClientID: "other", Scopes: []string{"fleet:list", "fleet:read"}}, ""},
		{Identity{Issuer: "https://other.example", Subject: "bob"}, "reader"},
		{Identity{Issuer: "https://idp.example", Subject: "bob"}, ""},
		{Identity{Subject: "AUTH0|ALICE"}, ""},
	}
	for _, tc := range cases {
		got, ok := p.AgentForIdentity(tc.id)
		if got != tc.agent || ok != (tc.agent != "") {
			t.Errorf("%+v → %q %v, want %q", tc.id, got, ok, tc.agent)
		}
	}
	if _, ok := mustParse(t, "version: 1\nagents:\n  a: {tools: []}\n").AgentForIdentity(Identity{Subject: "x"}); ok {
		t.Fatal("a policy without identities mapped one")
	}
}

func TestIdentitiesRefused(t *testing.T) {
	head := "version: 1\nagents:\n  reader: {tools: [echo]}\nidentities:\n"
	cases := map[string]string{
		"  - subject: x\n    agent: raeder\n":                    `identities[0]: agent "raeder" is not in the policy (agents: reader); did you mean "reader"?`,
		"  - subject: x\n":                                       "identities[0]: agent: say which agent",
		"  - agent: reader\n":                                    "identities[0]: give at least one of",
		"  - {issuer: https://idp.example.com, agent: reader}\n": "identities[0]: give at least one of",
		"  - groups: [\"\"]\n    agent: reader\n":                "empty group or scope",
		"  - subjects: [x]\n    agent: reader\n":                 "field subjects not found",
		"  - subject: x\n    agent: reader\n  - {}\n":            "identities[1]",
	}
	for rules, want := range cases {
		_, err := Parse([]byte(head + rules))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", rules, err, want)
		}
	}
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.yaml")
	grant := filepath.Join(dir, "g.yaml")
	_ = os.WriteFile(pol, []byte(head+"  - subject: x\n    agent: reader\n"), 0o600)
	_ = os.WriteFile(grant, []byte("version: 1\nstep: s\ngrants: {reader: [write]}\nidentities:\n  - subject: y\n    agent: reader\n"), 0o600)
	if _, err := Load(pol, grant); err == nil || !strings.Contains(err.Error(), "has identities") {
		t.Fatalf("identities in a grant file: %v", err)
	}
}

// TestShippedIdentitiesExample: the identities example commented out at
// the end of configs/acl.yaml loads once uncommented, and maps as it says.
func TestShippedIdentitiesExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "configs", "acl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "\n# identities:\n")
	if i < 0 {
		t.Fatal("configs/acl.yaml has no commented identities example")
	}
	var b strings.Builder
	b.WriteString(s[:i+1])
	for _, l := range strings.Split(s[i+1:], "\n") {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "# "), "#") + "\n")
	}
	p, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("the example, uncommented: %v", err)
	}
	if p.IdentityRules() != 3 {
		t.Fatalf("%d rules", p.IdentityRules())
	}
	for id, want := range map[*Identity]string{
		{Subject: "f3c1a9e2-6d1b-4c55-9f0e-2b7c8d4e5a61"}:                                    "developer",
		{Subject: "x", Groups: []string{"charter-ops"}}:                                      "operator",
		{Subject: "y", Scopes: []string{"fleet:orchestrator"}, ClientID: "claude-connector"}: "orchestrator",
	} {
		if got, _ := p.AgentForIdentity(*id); got != want {
			t.Errorf("%+v → %q, want %q", *id, got, want)
		}
	}
}
