package compose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

// realm is the part of a Keycloak realm file the profile depends on.
type realm struct {
	Realm        string `json:"realm"`
	ClientScopes []struct {
		Name            string            `json:"name"`
		Attributes      map[string]string `json:"attributes"`
		ProtocolMappers []struct {
			ProtocolMapper string            `json:"protocolMapper"`
			Config         map[string]string `json:"config"`
		} `json:"protocolMappers"`
	} `json:"clientScopes"`
	DefaultDefaultClientScopes  []string `json:"defaultDefaultClientScopes"`
	DefaultOptionalClientScopes []string `json:"defaultOptionalClientScopes"`
}

// TestOAuthProfile: `docker compose --profile oauth` adds a Keycloak that
// passes the checks, whose realm issues, per server, a scope that puts
// exactly that server's resource URL into aud; the servers take their
// OAuth settings from .env and stay as they were without them.
func TestOAuthProfile(t *testing.T) {
	facts, _ := gatherFacts(t)
	p := load(t, filledEnv(t))
	if _, ok := p.Services["keycloak"]; ok {
		t.Error("keycloak runs without --profile oauth")
	}
	// Without an issuer a server refuses every other OAuth setting (it
	// would be ignored), so none may have a value.
	for _, s := range testbin.Servers {
		for name, v := range p.Services[s].Environment {
			if strings.HasPrefix(name, "MCP_OAUTH_") && v != nil && *v != "" {
				t.Errorf("%s: %s=%q with no MCP_OAUTH_ISSUER in .env: the server would refuse to start", s, name, *v)
			}
		}
	}

	envFile := filledEnv(t, "MCP_OAUTH_ISSUER=https://idp.example.com/realms/fleet", "GMAIL_OAUTH_RESOURCE=https://gmail.example.com/mcp",
		"KC_BOOTSTRAP_ADMIN_PASSWORD=0123456789abcdef")
	po, err := Load(t.Context(), composeFile(t), envFile, "oauth")
	if err != nil {
		t.Fatal(err)
	}
	kc, ok := po.Services["keycloak"]
	if !ok {
		t.Fatalf("no keycloak service in the oauth profile: %v", po.ServiceNames())
	}
	for _, problem := range Check(po, facts) {
		t.Error(problem)
	}
	if v := kc.Environment["KC_BOOTSTRAP_ADMIN_PASSWORD"]; v == nil || *v != "0123456789abcdef" {
		t.Errorf("keycloak's admin password from .env: %v", v)
	}

	raw, err := os.ReadFile(filepath.Join(facts.Root, "configs", "compose", "keycloak", "fleet-realm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r realm
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("fleet-realm.json: %v", err)
	}
	if r.Realm != "fleet" || !strings.Contains(*kc.Environment["KC_HOSTNAME"], "://") {
		t.Errorf("realm %q, KC_HOSTNAME %v", r.Realm, kc.Environment["KC_HOSTNAME"])
	}
	audiences := map[string][]string{} // scope → the audiences its mappers add
	mappers := map[string][]string{}
	for _, cs := range r.ClientScopes {
		for _, m := range cs.ProtocolMappers {
			mappers[cs.Name] = append(mappers[cs.Name], m.ProtocolMapper)
			if m.ProtocolMapper == "oidc-audience-mapper" {
				audiences[cs.Name] = append(audiences[cs.Name], m.Config["included.custom.audience"])
				if m.Config["access.token.claim"] != "true" {
					t.Errorf("scope %s: the audience mapper does not write the access token", cs.Name)
				}
			}
		}
	}
	// A realm file with client scopes gets none of Keycloak's built-in ones:
	// the subject must come from a scope of the file, in every token.
	if !slices.Contains(mappers["basic"], "oidc-sub-mapper") || !slices.Contains(r.DefaultDefaultClientScopes, "basic") {
		t.Errorf("no default scope gives tokens their sub: %v, defaults %v", mappers, r.DefaultDefaultClientScopes)
	}
	for _, s := range testbin.Servers {
		svc := po.Services[s]
		scope := "mcp:" + s
		want := "http://localhost:" + map[string]string{"avinode": "3001", "gmail": "3002", "sheets": "3003", "supabase": "3004", "devtools": "3005"}[s] + "/mcp"
		if s == "gmail" {
			want = "https://gmail.example.com/mcp"
		}
		if got := env(svc, "MCP_OAUTH_RESOURCE"); got != want {
			t.Errorf("%s: MCP_OAUTH_RESOURCE %q, want %q", s, got, want)
		}
		if env(svc, "MCP_OAUTH_ISSUER") != "https://idp.example.com/realms/fleet" {
			t.Errorf("%s: MCP_OAUTH_ISSUER %q: .env's value does not reach it", s, env(svc, "MCP_OAUTH_ISSUER"))
		}
		if env(svc, "MCP_OAUTH_SCOPES") != scope || env(svc, "MCP_OAUTH_REQUIRED_SCOPES") != scope {
			t.Errorf("%s: advertises %q and requires %q, want %s", s, env(svc, "MCP_OAUTH_SCOPES"), env(svc, "MCP_OAUTH_REQUIRED_SCOPES"), scope)
		}
		// The realm's audience is the resource's default: a token for the
		// scope is good at this server and at no other.
		if s != "gmail" && !slices.Equal(audiences[scope], []string{want}) {
			t.Errorf("scope %s adds the audiences %q, want exactly [%s]", scope, audiences[scope], want)
		}
		if !slices.Contains(r.DefaultOptionalClientScopes, scope) || slices.Contains(r.DefaultDefaultClientScopes, scope) {
			t.Errorf("scope %s must be optional, not default: in every token it would make it good at %s", scope, s)
		}
	}

	t.Run("finds", func(t *testing.T) {
		bad := po.Services["keycloak"]
		bad.Profiles = nil
		bad.Command = []string{"start"}
		bad.Environment = map[string]*string{}
		bad.Volumes = nil
		po.Services["keycloak"] = bad
		got := ""
		for _, pr := range Check(po, facts) {
			got += pr.String() + "\n"
		}
		for _, want := range []string{"put it in a profile", "start-dev", "--import-realm", "no realm file", "KC_HEALTH_ENABLED", "KC_HOSTNAME"} {
			if !strings.Contains(got, want) {
				t.Errorf("the checks miss %q; they said:\n%s", want, got)
			}
		}
	})
}
