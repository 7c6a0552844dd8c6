package compose

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/dockerfile"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The secrets `docker compose up` refuses to start without.
var requiredSecrets = []string{"POSTGRES_PASSWORD", "PGRST_AUTHENTICATOR_PASSWORD", "AVINODE_DB_PASSWORD",
	"PGRST_JWT_SECRET", "SUPABASE_AGENT_JWT", "MCP_AGENT_TOKENS", "AVINODE_WEBHOOK_CLIENT_SECRET"}

func composeFile(t testing.TB) string { return filepath.Join(testbin.Root(t), "docker-compose.yml") }

// filledEnv is what the README has a user do: copy configs/.env.example to
// .env and fill its secrets with scripts/compose-env.sh. extra lines are
// appended.
func filledEnv(t testing.TB, extra ...string) string {
	t.Helper()
	root := testbin.Root(t)
	example, err := os.ReadFile(filepath.Join(root, "configs", ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, example, 0o644); err != nil {
		t.Fatal(err)
	}
	runScript(t, nil, path)
	if len(extra) > 0 {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(strings.Join(extra, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// runScript runs scripts/compose-env.sh with args and returns its stdout.
func runScript(t testing.TB, env []string, args ...string) string {
	t.Helper()
	out, err := script(env, args...)
	if err != nil {
		t.Fatalf("compose-env.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func script(env []string, args ...string) (string, error) {
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "compose-env.sh")}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func load(t testing.TB, envFile string) *types.Project {
	t.Helper()
	p, err := Load(context.Background(), composeFile(t), envFile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gatherFacts builds the servers and reads their --help and their
// commands'; it returns the facts and the binaries by server.
func gatherFacts(t *testing.T) (*Facts, map[string]string) {
	t.Helper()
	root := testbin.Root(t)
	df, err := dockerfile.ParseFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	facts := &Facts{Root: root, Dockerfile: df, Help: map[string]*help.Server{}}
	dir := t.TempDir()
	ctx := context.Background()
	bins := map[string]string{}
	for _, s := range testbin.Servers {
		bin := testbin.Server(t, dir, s)
		bins[s] = bin
		h, err := help.Load(ctx, bin)
		if err != nil {
			t.Fatal(err)
		}
		facts.Help[h.Program] = h
		for _, cmd := range []string{"health", "webhooks"} {
			if !slices.Contains(h.Commands, cmd) {
				continue
			}
			ch, err := help.LoadCommand(ctx, bin, cmd)
			if err != nil {
				t.Fatal(err)
			}
			facts.Help[ch.Program] = ch
		}
	}
	return facts, bins
}

func env(svc types.ServiceConfig, name string) string {
	if v := svc.Environment[name]; v != nil {
		return *v
	}
	return ""
}

// TestStack checks the shipped docker-compose.yml, loaded with a .env made
// as the README says, against the real binaries, the Dockerfile and the
// policy; then that the checks catch what they are for; then runs the
// database's first start on a real PostgreSQL.
func TestStack(t *testing.T) {
	facts, bins := gatherFacts(t)
	envFile := filledEnv(t)
	p := load(t, envFile)

	t.Run("services", func(t *testing.T) {
		want := []string{"avinode", "avinode-processor", "avinode-webhooks", "devtools", "gmail", "postgres", "postgrest",
			"rest-gateway", "sheets", "supabase"}
		if got := p.ServiceNames(); !slices.Equal(got, want) {
			t.Errorf("services %q, want %q", got, want)
		}
		for _, s := range testbin.Servers {
			svc := p.Services[s]
			if svc.Build == nil || svc.Build.Target != s {
				t.Errorf("%s: not built from its Dockerfile stage", s)
			}
		}
		if d := p.Services["avinode-processor"].Deploy; d == nil || d.Replicas == nil || *d.Replicas != 2 {
			t.Errorf("the processor's deploy: %+v, want 2 replicas", d)
		}
		cmd := func(s string) string { return strings.Join(p.Services[s].Command, " ") }
		if !strings.Contains(cmd("avinode"), "--webhook-processing service") {
			t.Errorf("avinode leaves processing to the service: %q", cmd("avinode"))
		}
		if !strings.HasPrefix(cmd("avinode-webhooks"), "webhooks --role receiver") ||
			!strings.HasPrefix(cmd("avinode-processor"), "webhooks --role processor") {
			t.Errorf("webhook roles: %q, %q", cmd("avinode-webhooks"), cmd("avinode-processor"))
		}
		if u := env(p.Services["avinode"], "DATABASE_URL"); !strings.HasPrefix(u, "postgres://avinode:") || !strings.Contains(u, "@postgres:5432/avinode") {
			t.Errorf("avinode's store %q: want the avinode role's database", u)
		}
		sb := p.Services["supabase"]
		if !strings.Contains(cmd("supabase"), "--backend rest") || env(sb, "SUPABASE_URL") != "http://rest-gateway:8000" {
			t.Errorf("supabase: %q, SUPABASE_URL %q: want the REST backend through the gateway", cmd("supabase"), env(sb, "SUPABASE_URL"))
		}
		for _, s := range []string{"gmail", "sheets"} {
			for name, v := range p.Services[s].Environment {
				if strings.HasPrefix(name, "GOOGLE_") && v != nil {
					t.Errorf("%s: %s is set with no Google credentials in .env: the local backend wants it unset", s, name)
				}
			}
		}
	})

	t.Run("checks", func(t *testing.T) {
		for _, problem := range Check(p, facts) {
			t.Error(problem)
		}
	})

	t.Run("agents", func(t *testing.T) {
		policy, err := acl.Load(filepath.Join(facts.Root, "configs", "acl.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range testbin.Servers {
			tokens := env(p.Services[s], "MCP_AGENT_TOKENS")
			agents := map[string]bool{}
			for pair := range strings.SplitSeq(tokens, ",") {
				agent, token, _ := strings.Cut(pair, "=")
				if !policy.HasAgent(agent) {
					t.Errorf("%s: MCP_AGENT_TOKENS names %q, which configs/acl.yaml does not", s, agent)
				}
				if len(token) < 16 {
					t.Errorf("%s: %s's token is %d characters; the kit wants 16 or more", s, agent, len(token))
				}
				agents[agent] = true
			}
			for _, a := range policy.Agents() {
				if !agents[a] {
					t.Errorf("%s: agent %s of the policy has no token", s, a)
				}
			}
		}
	})

	t.Run("jwt", func(t *testing.T) {
		secret := env(p.Services["postgrest"], "PGRST_JWT_SECRET")
		claims, err := verifyJWT(env(p.Services["supabase"], "SUPABASE_KEY"), secret)
		if err != nil {
			t.Fatal(err)
		}
		if claims["role"] != agentRole {
			t.Errorf("supabase-mcp's JWT claims %v; want role %s", claims, agentRole)
		}
	})

	t.Run("finds", func(t *testing.T) { testFinds(t, facts, envFile) })
	t.Run("initdb", func(t *testing.T) { testInitDB(t, p, bins) })
}

// agentRole is the database role of the agents' requests.
const agentRole = "fleet_agent"

func testFinds(t *testing.T, facts *Facts, envFile string) {
	type mutation struct {
		name   string
		change func(p *types.Project)
		want   string
	}
	svc := func(p *types.Project, name string, f func(s *types.ServiceConfig)) {
		s := p.Services[name]
		f(&s)
		p.Services[name] = s
	}
	str := func(s string) *string { return &s }
	tests := []mutation{
		{"unknown flag", func(p *types.Project) {
			svc(p, "avinode", func(s *types.ServiceConfig) { s.Command = append(s.Command, "--no-such-flag") })
		}, "--no-such-flag is not a flag of avinode-mcp"},
		{"flag without value", func(p *types.Project) {
			svc(p, "devtools", func(s *types.ServiceConfig) { s.Command = append(s.Command, "--root") })
		}, "--root needs a value"},
		{"positional argument", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) { s.Command = append(s.Command, "extra") })
		}, `argument "extra" is not a --flag`},
		{"flag twice", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) { s.Command = append(s.Command, "--port", "3002") })
		}, "--port given twice"},
		{"grant file not mounted", func(p *types.Project) {
			svc(p, "avinode", func(s *types.ServiceConfig) {
				s.Command = append(s.Command, "--acl", "/etc/mcp-fleet/acl.d/flight-search-cancel-trips.yaml")
			})
		}, "grant file /etc/mcp-fleet/acl.d/flight-search-cancel-trips.yaml: mount configs/acl.d/flight-search-cancel-trips.yaml there"},
		{"unknown variable", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) { s.Environment["GMAIL_NO_SUCH"] = str("x") })
		}, "sets GMAIL_NO_SUCH, which gmail-mcp does not read"},
		{"a command's variable", func(p *types.Project) {
			svc(p, "avinode-processor", func(s *types.ServiceConfig) { s.Environment["MCP_AGENT_TOKENS"] = str("x") })
		}, "sets MCP_AGENT_TOKENS, which avinode-mcp webhooks does not read"},
		{"published everywhere", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Ports[0].HostIP = "0.0.0.0" })
		}, `port 3003 is published on "0.0.0.0"`},
		{"port not published", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Ports = nil })
		}, "listens on port 3003 but does not publish it"},
		{"health on another port", func(p *types.Project) {
			svc(p, "supabase", func(s *types.ServiceConfig) {
				s.HealthCheck.Test = types.HealthCheckTest{"CMD", "/usr/local/bin/supabase-mcp", "health", "--port", "3999"}
			})
		}, "healthcheck asks port 3999; the service listens on 3004"},
		{"health through a shell", func(p *types.Project) {
			svc(p, "devtools", func(s *types.ServiceConfig) {
				s.HealthCheck.Test = types.HealthCheckTest{"CMD-SHELL", "devtools-mcp health"}
			})
		}, "exec form"},
		{"health of another binary", func(p *types.Project) {
			svc(p, "devtools", func(s *types.ServiceConfig) {
				s.HealthCheck.Test = types.HealthCheckTest{"CMD", "/usr/local/bin/avinode-mcp", "health"}
			})
		}, "run the server's own /usr/local/bin/devtools-mcp health"},
		{"health flag unknown", func(p *types.Project) {
			svc(p, "avinode-webhooks", func(s *types.ServiceConfig) { s.HealthCheck.Test = append(s.HealthCheck.Test, "--bogus") })
		}, "--bogus is not a flag of avinode-mcp health"},
		{"health URL elsewhere", func(p *types.Project) {
			svc(p, "avinode-processor", func(s *types.ServiceConfig) {
				s.HealthCheck.Test = types.HealthCheckTest{"CMD", "/usr/local/bin/avinode-mcp", "health", "--url", "http://example.com:8090/healthz"}
			})
		}, "ask http://127.0.0.1:<port>/healthz"},
		{"health URL port", func(p *types.Project) {
			svc(p, "avinode-processor", func(s *types.ServiceConfig) {
				s.HealthCheck.Test = types.HealthCheckTest{"CMD", "/usr/local/bin/avinode-mcp", "health", "--url", "http://127.0.0.1:9/healthz"}
			})
		}, "healthcheck asks port 9; the service listens on 8090"},
		{"no healthcheck", func(p *types.Project) {
			svc(p, "rest-gateway", func(s *types.ServiceConfig) { s.HealthCheck = nil })
		}, "no healthcheck"},
		{"started is not healthy", func(p *types.Project) {
			svc(p, "avinode", func(s *types.ServiceConfig) {
				d := s.DependsOn["postgres"]
				d.Condition = types.ServiceConditionStarted
				s.DependsOn["postgres"] = d
			})
		}, `depends on postgres with condition "service_started"`},
		{"no dependency", func(p *types.Project) {
			svc(p, "supabase", func(s *types.ServiceConfig) { s.DependsOn = nil })
		}, "connects to rest-gateway but does not depend on it"},
		{"no stage", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) { s.Build.Target = "nope" })
		}, `build target "nope" is not a server stage`},
		{"image name", func(p *types.Project) {
			svc(p, "avinode", func(s *types.ServiceConfig) { s.Image = "other/avinode-mcp:1" })
		}, "the name make images gives it is mcp-fleet/avinode-mcp"},
		{"build argument", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Build.Args["NOPE"] = str("1") })
		}, "build argument NOPE is declared nowhere"},
		{"binaries", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Build.Args["BINARIES"] = str("elsewhere") })
		}, "no binaries-elsewhere stage"},
		{"other Dockerfile", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Build.Dockerfile = "Other.Dockerfile" })
		}, "want the repository's Dockerfile"},
		{"unknown command", func(p *types.Project) {
			svc(p, "avinode-webhooks", func(s *types.ServiceConfig) { s.Command[0] = "webhookz" })
		}, `has no command "webhookz"`},
		{"stores differ", func(p *types.Project) {
			svc(p, "avinode-processor", func(s *types.ServiceConfig) {
				s.Environment["DATABASE_URL"] = str("postgres://avinode@postgres:5432/other")
			})
		}, "do not share one store"},
		{"processor on SQLite", func(p *types.Project) {
			for _, n := range []string{"avinode", "avinode-webhooks", "avinode-processor"} {
				svc(p, n, func(s *types.ServiceConfig) { delete(s.Environment, "DATABASE_URL"); s.DependsOn = nil })
			}
		}, "no PostgreSQL DATABASE_URL"},
		{"processor published", func(p *types.Project) {
			svc(p, "avinode-processor", func(s *types.ServiceConfig) {
				s.Ports = []types.ServicePortConfig{{HostIP: "127.0.0.1", Target: 8090, Published: "8091"}}
			})
		}, "a processor publishes ports"},
		{"receiver on loopback", func(p *types.Project) {
			svc(p, "avinode-webhooks", func(s *types.ServiceConfig) { s.Command[4] = "127.0.0.1:8090" })
		}, `the receiver listens on "127.0.0.1"`},
		{"bad listen", func(p *types.Project) {
			svc(p, "avinode-webhooks", func(s *types.ServiceConfig) { s.Command[4] = "8090" })
		}, `--listen "8090": want host:port`},
		{"unused volume", func(p *types.Project) {
			p.Volumes["spare"] = types.VolumeConfig{Name: "spare"}
		}, "volume spare is declared but no service mounts it"},
		{"missing file", func(p *types.Project) {
			svc(p, "rest-gateway", func(s *types.ServiceConfig) {
				s.Volumes[0].Source = filepath.Join(facts.Root, "configs", "compose", "missing.conf")
			})
		}, "mounts configs/compose/missing.conf, which the repository does not have"},
		{"file outside", func(p *types.Project) {
			svc(p, "rest-gateway", func(s *types.ServiceConfig) { s.Volumes[0].Source = "/etc/passwd" })
		}, "mounts /etc/passwd, which is outside the repository"},
		{"writable file", func(p *types.Project) {
			svc(p, "postgres", func(s *types.ServiceConfig) { s.Volumes[1].ReadOnly = false })
		}, "read-write"},
		{"loopback only hosts", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) {
				i := slices.Index(s.Command, "--allowed-hosts")
				s.Command[i+1] = "localhost,gmail"
			})
		}, "lacks 127.0.0.1"},
		{"auth token with a policy", func(p *types.Project) {
			svc(p, "devtools", func(s *types.ServiceConfig) { s.Environment["MCP_AUTH_TOKEN"] = str("0123456789abcdef0123") })
		}, "which a server under a policy refuses"},
		{"no tokens", func(p *types.Project) {
			svc(p, "devtools", func(s *types.ServiceConfig) { delete(s.Environment, "MCP_AGENT_TOKENS") })
		}, "no MCP_AGENT_TOKENS"},
		{"no policy", func(p *types.Project) {
			svc(p, "devtools", func(s *types.ServiceConfig) {
				i := slices.Index(s.Command, "--acl")
				s.Command = slices.Delete(s.Command, i, i+2)
			})
		}, "runs without the policy"},
		{"policy not mounted", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Volumes = s.Volumes[1:] })
		}, "mount configs/acl.yaml there"},
		{"stdio", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Command[1] = "stdio" })
		}, `serves transport "stdio"`},
		{"loopback inside", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Command[3] = "127.0.0.1" })
		}, `listens on "127.0.0.1"`},
		{"no data volume", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Volumes = s.Volumes[:1] })
			delete(p.Volumes, "sheets-data")
		}, "no named volume on /data"},
		{"data elsewhere", func(p *types.Project) {
			svc(p, "sheets", func(s *types.ServiceConfig) { s.Environment["MCP_DATA_DIR"] = str("/var/data") })
		}, "MCP_DATA_DIR is not /data"},
		{"grace", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) { g := types.Duration(5e9); s.StopGracePeriod = &g })
		}, "stop_grace_period must exceed"},
		{"no restart", func(p *types.Project) {
			svc(p, "gmail", func(s *types.ServiceConfig) { s.Restart = "no" })
		}, `restart is "no"`},
		{"postgres unpinned", func(p *types.Project) {
			svc(p, "postgres", func(s *types.ServiceConfig) { s.Image = "postgres:latest" })
		}, "is not pinned"},
		{"postgres 13", func(p *types.Project) {
			svc(p, "postgres", func(s *types.ServiceConfig) { s.Image = "postgres:13.4" })
		}, "want a pinned PostgreSQL 15.x or 16.x"},
		{"postgres health", func(p *types.Project) {
			svc(p, "postgres", func(s *types.ServiceConfig) { s.HealthCheck.Test = types.HealthCheckTest{"CMD", "true"} })
		}, "use pg_isready"},
		{"old postgrest", func(p *types.Project) {
			svc(p, "postgrest", func(s *types.ServiceConfig) { s.Image = "postgrest/postgrest:v12.2.3" })
		}, "want PostgREST 14 or later"},
		{"postgrest health", func(p *types.Project) {
			svc(p, "postgrest", func(s *types.ServiceConfig) { s.HealthCheck.Test = types.HealthCheckTest{"CMD", "postgrest"} })
		}, `use ["CMD", "postgrest", "--ready"]`},
		{"postgrest admin", func(p *types.Project) {
			svc(p, "postgrest", func(s *types.ServiceConfig) { delete(s.Environment, "PGRST_ADMIN_SERVER_PORT") })
		}, "set PGRST_ADMIN_SERVER_PORT"},
		{"short JWT secret", func(p *types.Project) {
			svc(p, "postgrest", func(s *types.ServiceConfig) { s.Environment["PGRST_JWT_SECRET"] = str("short") })
		}, "32 characters or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := load(t, envFile) // fresh: the changes must not leak into other cases
			tt.change(p)
			problems := Check(p, facts)
			var msgs []string
			for _, pr := range problems {
				msgs = append(msgs, pr.String())
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tt.want) }) {
				t.Errorf("want a problem containing %q; got:\n%s", tt.want, strings.Join(msgs, "\n"))
			}
		})
	}
	t.Run("no help", func(t *testing.T) {
		p := load(t, envFile)
		thin := &Facts{Root: facts.Root, Dockerfile: facts.Dockerfile, Help: map[string]*help.Server{}}
		for k, v := range facts.Help {
			if k != "avinode-mcp webhooks" && k != "gmail-mcp" && k != "sheets-mcp health" {
				thin.Help[k] = v
			}
		}
		var msgs []string
		for _, pr := range Check(p, thin) {
			msgs = append(msgs, pr.String())
		}
		for _, want := range []string{"avinode-webhooks: no --help of avinode-mcp webhooks", "gmail: no --help of gmail-mcp",
			"sheets: no --help of sheets-mcp health"} {
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }) {
				t.Errorf("want %q; got:\n%s", want, strings.Join(msgs, "\n"))
			}
		}
	})
}

// TestEnvExample: every variable docker-compose.yml takes from .env has an
// entry in configs/.env.example; the example alone (secrets not filled) is
// refused, naming each secret; its example JWT is what it says it is.
func TestEnvExample(t *testing.T) {
	root := testbin.Root(t)
	example := filepath.Join(root, "configs", ".env.example")
	vars, err := Variables(composeFile(t))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := EnvEntries(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"POSTGRES_PASSWORD", "MCP_AGENT_TOKENS", "AVINODE_API_TOKEN", "GOOGLE_CLIENT_ID"} {
		if !vars[name] {
			t.Errorf("Variables does not list %s", name)
		}
	}
	var names []string
	for name := range vars {
		names = append(names, name)
		if !entries[name] {
			t.Errorf("docker-compose.yml takes %s from .env, but configs/.env.example has no entry for it", name)
		}
	}
	sort.Strings(names)
	t.Logf("variables: %s", strings.Join(names, " "))
	if !entries["AVINODE_CLIENT_SECRET"] || !entries["MCP_TRANSPORT"] || entries["OAuth"] {
		t.Errorf("EnvEntries misreads the example: %v", entries)
	}

	if _, err := Load(context.Background(), composeFile(t), example); err == nil {
		t.Error("the stack loads with the example's secrets empty")
	}
	for _, name := range requiredSecrets {
		_, err := Load(context.Background(), composeFile(t), filledEnv(t, name+"="))
		if err == nil || !strings.Contains(err.Error(), "required variable "+name+" is missing a value") {
			t.Errorf("loading without %s: %v", name, err)
		}
	}

	text, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`signed with the secret\s*\n#\s*([0-9a-f]{32,}),[^\n]*\n#\s*(eyJ[\w-]+\.[\w-]+\.[\w-]+)`).FindSubmatch(text)
	if m == nil {
		t.Fatal("configs/.env.example has no example JWT with its secret")
	}
	claims, err := verifyJWT(string(m[2]), string(m[1]))
	if err != nil || claims["role"] != agentRole {
		t.Errorf("the example JWT: %v, %v", claims, err)
	}
}

// TestPassThrough: a credential set in .env reaches its server; one not
// set reaches nobody.
func TestPassThrough(t *testing.T) {
	p := load(t, filledEnv(t, "AVINODE_API_TOKEN=mock_from_env", "GOOGLE_SHEETS_CLIENT_DATABASE_ID=sheet-1"))
	if got := env(p.Services["avinode"], "AVINODE_API_TOKEN"); got != "mock_from_env" {
		t.Errorf("avinode's AVINODE_API_TOKEN = %q", got)
	}
	if got := env(p.Services["avinode-processor"], "AVINODE_API_TOKEN"); got != "mock_from_env" {
		t.Errorf("the processor's AVINODE_API_TOKEN = %q", got)
	}
	if got := env(p.Services["sheets"], "GOOGLE_SHEETS_CLIENT_DATABASE_ID"); got != "sheet-1" {
		t.Errorf("sheets' GOOGLE_SHEETS_CLIENT_DATABASE_ID = %q", got)
	}
	if v := p.Services["gmail"].Environment["GOOGLE_REFRESH_TOKEN"]; v != nil {
		t.Errorf("gmail got GOOGLE_REFRESH_TOKEN=%q, which .env does not set", *v)
	}
	if _, ok := p.Services["avinode-webhooks"].Environment["AVINODE_API_TOKEN"]; ok {
		t.Error("the receiver, which fetches nothing from Avinode, gets the Avinode token")
	}
}

// TestComposeEnvScript: the script fills every secret once, with values the
// servers accept, and keeps them on a second run.
func TestComposeEnvScript(t *testing.T) {
	path := filledEnv(t)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	runScript(t, nil, path)
	second, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Error("a second run changed the file")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v: want 0600", fi.Mode(), err)
	}
	values := map[string]string{}
	for line := range strings.SplitSeq(string(first), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			v, _, _ = strings.Cut(v, " #")
			values[k] = strings.TrimSpace(v)
		}
	}
	for _, name := range requiredSecrets {
		if len(values[name]) < 16 {
			t.Errorf("%s = %q", name, values[name])
		}
	}
	if len(values["PGRST_JWT_SECRET"]) < 32 {
		t.Errorf("PGRST_JWT_SECRET is %d characters", len(values["PGRST_JWT_SECRET"]))
	}
	if values["AVINODE_WEBHOOK_CLIENT_ID"] != "mcp-fleet" || values["MCP_TRANSPORT"] != "stdio" {
		t.Errorf("values set in the example changed: %q, %q", values["AVINODE_WEBHOOK_CLIENT_ID"], values["MCP_TRANSPORT"])
	}
	minted := strings.TrimSpace(runScript(t, []string{"PGRST_JWT_SECRET=" + values["PGRST_JWT_SECRET"]}, "--jwt", agentRole))
	if minted != values["SUPABASE_AGENT_JWT"] {
		t.Errorf("--jwt %s gives %q; the filled file has %q", agentRole, minted, values["SUPABASE_AGENT_JWT"])
	}

	// A value already set is kept.
	kept := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(kept, []byte("POSTGRES_PASSWORD=mine  # comment\nMCP_AGENT_TOKENS=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runScript(t, nil, kept)
	text, _ := os.ReadFile(kept)
	if !strings.Contains(string(text), "POSTGRES_PASSWORD=mine  # comment\n") || !regexp.MustCompile(`(?m)^MCP_AGENT_TOKENS=orchestrator=[0-9a-f]{48},`).Match(text) ||
		!regexp.MustCompile(`(?m)^AVINODE_DB_PASSWORD=[0-9a-f]{48}$`).Match(text) {
		t.Errorf("filled:\n%s", text)
	}

	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--jwt", agentRole}, "set PGRST_JWT_SECRET"},
		{nil, []string{filepath.Join(t.TempDir(), "none")}, "no such file"},
		{nil, nil, "usage"},
	} {
		out, err := script(c.env, c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("compose-env.sh %q: %v, %q; want a failure saying %q", c.args, err, out, c.want)
		}
	}
}

// verifyJWT checks an HS256 JWT's signature with secret, as PostgREST does,
// and returns its claims.
func verifyJWT(token, secret string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a JWT: %d parts", len(parts))
	}
	var header map[string]any
	if err := decodePart(parts[0], &header); err != nil {
		return nil, err
	}
	if header["alg"] != "HS256" {
		return nil, fmt.Errorf("alg %v, want HS256", header["alg"])
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, fmt.Errorf("the signature does not verify with the secret")
	}
	var claims map[string]any
	return claims, decodePart(parts[1], &claims)
}

func decodePart(s string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
