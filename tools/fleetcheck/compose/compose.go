// Package compose checks the fleet's docker-compose.yml without a container
// engine: it loads the file as `docker compose` does (compose-go: the .env
// file interpolated, the result validated against the Compose
// specification) and holds every service to what it will really run — each
// server's command line and environment to the flags and variables its
// binary's --help lists, its image to a stage of the Dockerfile, its
// healthcheck to the server's own health command, its ports to loopback, its
// dependencies to healthy services, its files to files in the repository.
package compose

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/dockerfile"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/image"
)

// imageRepo is the repository `make images` names images in.
const imageRepo = "mcp-fleet/"

// Load reads the compose file as `docker compose` run in its directory
// would, with envFile as its .env: variables interpolated from envFile
// only (not from this process's environment, so the result does not depend
// on who runs the check), then validated. The services of the given
// profiles are included, as with `docker compose --profile`.
func Load(ctx context.Context, file, envFile string, profiles ...string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(filepath.Dir(file)),
		cli.WithEnvFiles(envFile),
		cli.WithDotEnv,
		cli.WithProfiles(profiles),
	)
	if err != nil {
		return nil, fmt.Errorf("compose: %s: %w", file, err)
	}
	p, err := opts.LoadProject(ctx)
	if err != nil {
		return nil, fmt.Errorf("compose: %s: %w", file, err)
	}
	return p, nil
}

// Variables lists the variables a compose file takes from its environment:
// those it interpolates (${NAME…}) and those it passes through to a
// container without a value (NAME: with nothing after it).
func Variables(file string) (map[string]bool, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var dict map[string]any
	if err := yaml.Unmarshal(raw, &dict); err != nil {
		return nil, fmt.Errorf("compose: %s: %w", file, err)
	}
	out := map[string]bool{}
	for name := range template.ExtractVariables(dict, template.DefaultPattern) {
		out[name] = true
	}
	services, _ := dict["services"].(map[string]any)
	for _, s := range services {
		svc, _ := s.(map[string]any)
		switch env := svc["environment"].(type) {
		case map[string]any:
			for k, v := range env {
				if v == nil {
					out[k] = true
				}
			}
		case []any:
			for _, item := range env {
				if s, ok := item.(string); ok && !strings.Contains(s, "=") {
					out[s] = true
				}
			}
		}
	}
	return out, nil
}

// envEntry matches a variable's entry in an env file, set or commented out:
// "NAME=…", "# NAME=…", and the second of "# A= / B=".
var envEntry = regexp.MustCompile(`(?:^#?\s*|\s/\s+)([A-Z][A-Z0-9_]*)=`)

// EnvEntries lists the variables an env file (configs/.env.example) has an
// entry for, set or commented out.
func EnvEntries(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, m := range envEntry.FindAllStringSubmatch(sc.Text(), -1) {
			out[m[1]] = true
		}
	}
	return out, sc.Err()
}

// Facts are what the services are checked against.
type Facts struct {
	// Root is the repository: the build context, and where every file a
	// service mounts must be.
	Root       string
	Dockerfile *dockerfile.File
	// Help is each program's --help by the name it gives itself:
	// "avinode-mcp", and its commands as "avinode-mcp health",
	// "avinode-mcp webhooks".
	Help map[string]*help.Server
}

// Problem is one thing wrong with a service (or with the file, when Service
// is empty).
type Problem struct {
	Service, Msg string
}

func (p Problem) String() string {
	if p.Service == "" {
		return p.Msg
	}
	return p.Service + ": " + p.Msg
}

type check struct {
	p        *types.Project
	facts    *Facts
	problems []Problem
}

func (c *check) errf(service, format string, args ...any) {
	c.problems = append(c.problems, Problem{Service: service, Msg: fmt.Sprintf(format, args...)})
}

// Check holds every service of p to the facts and returns what is wrong.
func Check(p *types.Project, facts *Facts) []Problem {
	c := &check{p: p, facts: facts}
	for _, name := range p.ServiceNames() {
		svc := p.Services[name]
		c.common(svc)
		if svc.Build != nil {
			c.server(svc)
			continue
		}
		c.thirdParty(svc)
	}
	c.volumes()
	c.sharedStore()
	return c.problems
}

// common holds for every service: restarted, healthy, reachable only from
// this machine, files from the repository, dependencies waited for.
func (c *check) common(svc types.ServiceConfig) {
	if svc.Restart != "unless-stopped" && svc.Restart != "always" {
		c.errf(svc.Name, "restart is %q: a long-running service wants unless-stopped (or always)", svc.Restart)
	}
	if hc := svc.HealthCheck; hc == nil || hc.Disable || len(hc.Test) < 2 {
		c.errf(svc.Name, "no healthcheck: nothing could wait for it to be ready")
	} else if hc.Test[0] != "CMD" {
		c.errf(svc.Name, "healthcheck %q: write it in the exec form [\"CMD\", …]; the server images have no shell", hc.Test)
	}
	for _, port := range svc.Ports {
		if ip := net.ParseIP(port.HostIP); ip == nil || !ip.IsLoopback() {
			c.errf(svc.Name, "port %d is published on %q: publish on 127.0.0.1 only (a TLS proxy in front for the rest)", port.Target, port.HostIP)
		}
	}
	for _, v := range svc.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		rel, err := filepath.Rel(c.facts.Root, v.Source)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			c.errf(svc.Name, "mounts %s, which is outside the repository", v.Source)
		} else if _, err := os.Stat(v.Source); err != nil {
			c.errf(svc.Name, "mounts %s, which the repository does not have", rel)
		}
		if !v.ReadOnly {
			c.errf(svc.Name, "mounts %s read-write: a file from the repository is configuration, mount it :ro", v.Source)
		}
	}
	for dep, d := range svc.DependsOn {
		if d.Condition != types.ServiceConditionHealthy {
			c.errf(svc.Name, "depends on %s with condition %q: wait for service_healthy", dep, d.Condition)
		}
	}
	// A service that names another one as a host needs it up and healthy.
	for _, other := range c.p.ServiceNames() {
		if other == svc.Name || !c.names(svc, other) {
			continue
		}
		if _, ok := svc.DependsOn[other]; !ok {
			c.errf(svc.Name, "connects to %s but does not depend on it (depends_on with condition service_healthy)", other)
		}
	}
}

// names reports whether the service's command or environment reaches the
// host other (a URL's host, a DSN's host).
func (c *check) names(svc types.ServiceConfig, other string) bool {
	values := slices.Clone([]string(svc.Command))
	for _, v := range svc.Environment {
		if v != nil {
			values = append(values, *v)
		}
	}
	for _, v := range values {
		if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Hostname() == other {
			return true
		}
	}
	return false
}

// thirdParty checks the database, PostgREST and the gateway: pinned
// images, and healthchecks that use each one's own tool.
func (c *check) thirdParty(svc types.ServiceConfig) {
	repo, tag, _ := strings.Cut(svc.Image, ":")
	if tag == "" || tag == "latest" {
		c.errf(svc.Name, "image %q is not pinned to a version", svc.Image)
	}
	test := []string(nil)
	if svc.HealthCheck != nil {
		test = svc.HealthCheck.Test
	}
	switch repo {
	case "postgres":
		if !regexp.MustCompile(`^1[56]\.[0-9]+`).MatchString(tag) {
			c.errf(svc.Name, "image %q: want a pinned PostgreSQL 15.x or 16.x", svc.Image)
		}
		if len(test) < 2 || test[1] != "pg_isready" {
			c.errf(svc.Name, "healthcheck %q: use pg_isready", test)
		}
	case "postgrest/postgrest":
		// Prefer: max-affected needs 13; --ready, the check of an image
		// without a shell, 14.
		m := regexp.MustCompile(`^v([0-9]+)\.`).FindStringSubmatch(tag)
		if major, _ := strconv.Atoi(append(m, "", "")[1]); major < 14 {
			c.errf(svc.Name, "image %q: want PostgREST 14 or later (Prefer: max-affected, postgrest --ready)", svc.Image)
		}
		if !slices.Equal(test, []string{"CMD", "postgrest", "--ready"}) {
			c.errf(svc.Name, "healthcheck %q: use [\"CMD\", \"postgrest\", \"--ready\"]", test)
		}
		if v := svc.Environment["PGRST_ADMIN_SERVER_PORT"]; v == nil || *v == "" {
			c.errf(svc.Name, "postgrest --ready asks the admin server: set PGRST_ADMIN_SERVER_PORT")
		}
		if v := svc.Environment["PGRST_JWT_SECRET"]; v == nil || len(*v) < 32 {
			c.errf(svc.Name, "PGRST_JWT_SECRET must be 32 characters or more")
		}
	case "quay.io/keycloak/keycloak":
		c.keycloak(svc, test)
	}
}

// keycloak checks the oauth profile's authorization server: opt-in (it
// runs in development mode), its realm imported from the repository, and
// a healthcheck that asks the management port's readiness endpoint, which
// answers only with KC_HEALTH_ENABLED.
func (c *check) keycloak(svc types.ServiceConfig, test []string) {
	if len(svc.Profiles) == 0 {
		c.errf(svc.Name, "runs in every stack: Keycloak here is a development server, put it in a profile (profiles: [oauth])")
	}
	args := []string(svc.Command)
	if len(args) == 0 || args[0] != "start-dev" {
		c.errf(svc.Name, "command %q: the realm file sets up a development server (start-dev); production Keycloak is configured elsewhere", args)
	}
	if !slices.Contains(args, "--import-realm") {
		c.errf(svc.Name, "command %q lacks --import-realm: the fleet realm would not exist", args)
	}
	const importDir = "/opt/keycloak/data/import/"
	imported := false
	for _, v := range svc.Volumes {
		if v.Type == types.VolumeTypeBind && strings.HasPrefix(v.Target, importDir) && strings.HasSuffix(v.Target, ".json") {
			imported = true
		}
	}
	if !imported {
		c.errf(svc.Name, "no realm file mounted in %s", importDir)
	}
	if v := svc.Environment["KC_HEALTH_ENABLED"]; v == nil || *v != "true" {
		c.errf(svc.Name, "KC_HEALTH_ENABLED is not true: the healthcheck's endpoint would not answer")
	}
	if !strings.Contains(strings.Join(test, " "), "/health/ready") || !strings.Contains(strings.Join(test, " "), "9000") {
		c.errf(svc.Name, "healthcheck %q: ask /health/ready on the management port 9000", test)
	}
	if v := svc.Environment["KC_HOSTNAME"]; v == nil || *v == "" {
		c.errf(svc.Name, "no KC_HOSTNAME: the issuer would follow each request's Host, and the servers compare it byte for byte")
	}
}

// server checks a service built from the Dockerfile: one of the servers,
// or one of a server's commands.
func (c *check) server(svc types.ServiceConfig) {
	b := svc.Build
	if b.Context != c.facts.Root || (b.Dockerfile != "" && b.Dockerfile != "Dockerfile") {
		c.errf(svc.Name, "builds %s/%s: want the repository's Dockerfile", b.Context, b.Dockerfile)
	}
	stage, ok := dockerfile.Find(c.facts.Dockerfile.Stages, b.Target)
	if !ok || len(stage.Entrypoint) == 0 {
		c.errf(svc.Name, "build target %q is not a server stage of the Dockerfile", b.Target)
		return
	}
	for arg, v := range b.Args {
		if !c.facts.Dockerfile.Declares(arg) {
			c.errf(svc.Name, "build argument %s is declared nowhere in the Dockerfile", arg)
		}
		if arg == "BINARIES" && v != nil {
			if _, ok := dockerfile.Find(c.facts.Dockerfile.Stages, "binaries-"+*v); !ok {
				c.errf(svc.Name, "BINARIES=%s: the Dockerfile has no binaries-%s stage", *v, *v)
			}
		}
	}
	binary := stage.Entrypoint[0]
	program := filepath.Base(binary)
	if repo, _, _ := strings.Cut(svc.Image, ":"); repo != imageRepo+program {
		c.errf(svc.Name, "image %q: the name make images gives it is %s%s", svc.Image, imageRepo, program)
	}
	h := c.facts.Help[program]
	if h == nil {
		c.errf(svc.Name, "no --help of %s to check it against", program)
		return
	}
	args := []string(svc.Command)
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if !slices.Contains(h.Commands, args[0]) {
			c.errf(svc.Name, "%s has no command %q (its commands: %s)", program, args[0], strings.Join(h.Commands, ", "))
			return
		}
		program += " " + args[0]
		if h = c.facts.Help[program]; h == nil {
			c.errf(svc.Name, "no --help of %s to check it against", program)
			return
		}
		args = args[1:]
	}
	flags := c.flags(svc.Name, h, args)
	for name := range svc.Environment {
		if !h.HasEnv(name) {
			c.errf(svc.Name, "sets %s, which %s does not read (see its --help)", name, h.Program)
		}
	}
	if program == filepath.Base(binary) {
		c.mcp(svc, h, flags)
	} else if strings.HasSuffix(program, " webhooks") {
		c.webhooks(svc, flags)
	}
	if hc := svc.HealthCheck; hc != nil && len(hc.Test) >= 2 && hc.Test[0] == "CMD" {
		c.health(svc, binary, hc.Test[1:], flags)
	}
}

// flags reads a command line against h: every argument a flag h lists,
// with its value when it takes one.
func (c *check) flags(service string, h *help.Server, args []string) map[string]string {
	vals, problems := h.ParseArgs(args)
	for _, p := range problems {
		c.errf(service, "%s", p)
	}
	return vals
}

// value is what a flag is set to: on the command line, else by one of its
// variables in the service's environment, else its default.
func value(svc types.ServiceConfig, h *help.Server, flags map[string]string, name string) string {
	if v, ok := flags[name]; ok {
		return v
	}
	f := h.Flags[name]
	for _, e := range f.Env {
		if v := svc.Environment[e]; v != nil && *v != "" {
			return *v
		}
	}
	return f.Default
}

// mcp checks an MCP server served over HTTP to other machines' clients
// through a published port, under the policy.
func (c *check) mcp(svc types.ServiceConfig, h *help.Server, flags map[string]string) {
	if v := value(svc, h, flags, "transport"); v != "http" {
		c.errf(svc.Name, "serves transport %q: the stack's servers serve streamable HTTP (--transport http)", v)
	}
	if v := value(svc, h, flags, "host"); v != "0.0.0.0" {
		c.errf(svc.Name, "listens on %q: inside its container a server listens on 0.0.0.0 to be reached through its port", v)
	}
	port, _ := strconv.Atoi(value(svc, h, flags, "port"))
	c.published(svc, port)
	acl, grants, _ := strings.Cut(value(svc, h, flags, "acl"), string(os.PathListSeparator))
	for _, g := range strings.Split(grants, string(os.PathListSeparator)) {
		if g != "" && !c.mounted(svc, g, filepath.Join(c.facts.Root, "configs", "acl.d", filepath.Base(g))) {
			c.errf(svc.Name, "grant file %s: mount configs/acl.d/%s there, read-only", g, filepath.Base(g))
		}
	}
	if acl == "" {
		c.errf(svc.Name, "runs without the policy (--acl %s)", image.Policy)
	} else if !c.mounted(svc, acl, filepath.Join(c.facts.Root, "configs", "acl.yaml")) {
		c.errf(svc.Name, "--acl %s: mount configs/acl.yaml there, read-only", acl)
	}
	if v := svc.Environment["MCP_AGENT_TOKENS"]; v == nil || *v == "" {
		c.errf(svc.Name, "no MCP_AGENT_TOKENS: under the policy each agent needs its bearer token")
	}
	if _, ok := svc.Environment["MCP_AUTH_TOKEN"]; ok {
		c.errf(svc.Name, "sets MCP_AUTH_TOKEN, which a server under a policy refuses (tokens are bound to agents)")
	}
	hosts := strings.Split(value(svc, h, flags, "allowed-hosts"), ",")
	for _, want := range []string{"localhost", "127.0.0.1", svc.Name} {
		if !slices.Contains(hosts, want) {
			c.errf(svc.Name, "--allowed-hosts %q lacks %s: on 0.0.0.0 a server given a list accepts only the Host names on it "+
				"(localhost and 127.0.0.1 for this machine's clients and the healthcheck, the service name for the stack's)", strings.Join(hosts, ","), want)
		}
	}
	if v := svc.Environment["MCP_DATA_DIR"]; v == nil || *v != image.DataDir {
		c.errf(svc.Name, "MCP_DATA_DIR is not %s", image.DataDir)
	} else if !c.volumeAt(svc, image.DataDir) {
		c.errf(svc.Name, "no named volume on %s: its state would be lost with the container", image.DataDir)
	}
	grace, err := time.ParseDuration(value(svc, h, flags, "shutdown-grace"))
	if err == nil && (svc.StopGracePeriod == nil || time.Duration(*svc.StopGracePeriod) <= grace) {
		c.errf(svc.Name, "stop_grace_period must exceed the server's --shutdown-grace %s, or its calls in flight are killed", grace)
	}
}

// webhooks checks the avinode webhook service: the receiver published for
// Avinode's notifications, processors not published at all.
func (c *check) webhooks(svc types.ServiceConfig, flags map[string]string) {
	role := flags["role"]
	host, portText, err := net.SplitHostPort(flags["listen"])
	port, _ := strconv.Atoi(portText)
	switch {
	case err != nil || port == 0:
		c.errf(svc.Name, "--listen %q: want host:port", flags["listen"])
	case role == "receiver" || role == "all" || role == "":
		if host != "0.0.0.0" {
			c.errf(svc.Name, "the receiver listens on %q: on 0.0.0.0 inside the container, to be reached through its port", host)
		}
		c.published(svc, port)
	default:
		if len(svc.Ports) > 0 {
			c.errf(svc.Name, "a %s publishes ports: only the receiver takes requests", role)
		}
	}
	if v := svc.Environment["DATABASE_URL"]; v == nil || !strings.HasPrefix(*v, "postgres://") {
		c.errf(svc.Name, "no PostgreSQL DATABASE_URL: separate receivers and processors share the store only on PostgreSQL")
	}
}

// published checks that the container port the service listens on is the
// one it publishes.
func (c *check) published(svc types.ServiceConfig, port int) {
	for _, p := range svc.Ports {
		if int(p.Target) == port {
			return
		}
	}
	c.errf(svc.Name, "listens on port %d but does not publish it", port)
}

// health checks a server's healthcheck: its own binary's health command,
// asking the port the service listens on.
func (c *check) health(svc types.ServiceConfig, binary string, test []string, served map[string]string) {
	if test[0] != binary || len(test) < 2 || test[1] != "health" {
		c.errf(svc.Name, "healthcheck %q: run the server's own %s health", test, binary)
		return
	}
	h := c.facts.Help[filepath.Base(binary)+" health"]
	if h == nil {
		c.errf(svc.Name, "no --help of %s health to check it against", filepath.Base(binary))
		return
	}
	flags := c.flags(svc.Name, h, test[2:])
	var port string
	if u, ok := flags["url"]; ok {
		pu, err := url.Parse(u)
		if err != nil || pu.Hostname() != "127.0.0.1" || pu.Path != "/healthz" {
			c.errf(svc.Name, "healthcheck --url %q: ask http://127.0.0.1:<port>/healthz inside the container", u)
			return
		}
		port = pu.Port()
	} else {
		port = value(svc, h, flags, "port")
	}
	want := served["port"]
	if l, ok := served["listen"]; ok {
		_, want, _ = net.SplitHostPort(l)
	} else if want == "" {
		want = c.facts.Help[filepath.Base(binary)].Flags["port"].Default
	}
	if port != want {
		c.errf(svc.Name, "healthcheck asks port %s; the service listens on %s", port, want)
	}
}

// mounted reports whether source is bind-mounted read-only at target.
func (c *check) mounted(svc types.ServiceConfig, target, source string) bool {
	for _, v := range svc.Volumes {
		if v.Type == types.VolumeTypeBind && v.Target == target && v.Source == source && v.ReadOnly {
			return true
		}
	}
	return false
}

// volumeAt reports whether a named volume is mounted at target.
func (c *check) volumeAt(svc types.ServiceConfig, target string) bool {
	for _, v := range svc.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Target == target && v.Source != "" {
			return true
		}
	}
	return false
}

// volumes: every declared volume is used (compose itself refuses a service
// that uses an undeclared one).
func (c *check) volumes() {
	used := map[string]bool{}
	for _, svc := range c.p.Services {
		for _, v := range svc.Volumes {
			if v.Type == types.VolumeTypeVolume {
				used[v.Source] = true
			}
		}
	}
	for name := range c.p.Volumes {
		if !used[name] {
			c.errf("", "volume %s is declared but no service mounts it", name)
		}
	}
}

// sharedStore: every process of the avinode image shares one store.
func (c *check) sharedStore() {
	stores := map[string][]string{}
	for _, name := range c.p.ServiceNames() {
		svc := c.p.Services[name]
		if svc.Build == nil || svc.Build.Target != "avinode" {
			continue
		}
		v := ""
		if p := svc.Environment["DATABASE_URL"]; p != nil {
			v = *p
		}
		stores[v] = append(stores[v], name)
	}
	if len(stores) > 1 {
		var groups []string
		for _, names := range stores {
			groups = append(groups, strings.Join(names, ", "))
		}
		slices.Sort(groups)
		c.errf("", "the avinode services do not share one store (DATABASE_URL differs between: %s)", strings.Join(groups, " | "))
	}
}
