package clients

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/image"
)

// Facts are what the entries are checked against.
type Facts struct {
	Root    string                  // the repository, for files named under RootPlaceholder
	Servers map[string]*help.Server // by server name: avinode, gmail, …
	Policy  *acl.Policy             // configs/acl.yaml
	Images  map[string]string       // image names `make images` builds (with and without tag) → server name
}

// Via says how a client reaches a server.
type Via string

// The ways.
const (
	ViaBinary    Via = "binary"     // the client starts bin/<server>-mcp over stdio
	ViaContainer Via = "container"  // the client starts `docker run -i` (or podman) over stdio
	ViaBridge    Via = "mcp-remote" // the client starts mcp-remote, a stdio bridge to the server's HTTP endpoint
	ViaHTTP      Via = "http"       // the client speaks streamable HTTP itself
)

// Token kinds: which server variable a bearer token is given to.
const (
	TokenServer = "server" // MCP_AUTH_TOKEN: the server's one token, no policy
	TokenAgent  = "agent"  // MCP_AGENT_TOKENS: a token bound to a policy agent
)

// Target is an entry understood: which server it reaches, how, and as which
// agent.
type Target struct {
	File   *File
	Entry  Entry
	Server string
	Via    Via
	Agent  string // the policy agent it acts as; "" for none

	Args    []string          // the server's arguments (for a container: after the image)
	Flags   map[string]string // Args by flag name
	Env     map[string]string // the server's environment as the entry sets it (for a container: what -e passes)
	Image   string
	Volumes map[string]string // container path → host path or volume name

	URL       string // HTTP and bridge: as written
	TokenRef  string // HTTP and bridge: the placeholder carrying the bearer token, as written
	TokenName string // its variable name, input id or literal placeholder
	TokenFor  string // TokenServer or TokenAgent

	// Credentials lists what makes the entry use a real account or a file
	// only its user has (a secret variable, a path under /abs/path/to/ other
	// than the checkout and the project). Such an entry is checked but not
	// started by the tests.
	Credentials []string
}

// Problem is one thing wrong with an entry.
type Problem struct {
	File, Entry, Msg string
}

func (p Problem) String() string {
	if p.Entry == "" {
		return p.File + ": " + p.Msg
	}
	return fmt.Sprintf("%s: %s: %s", p.File, p.Entry, p.Msg)
}

type analysis struct {
	f        *File
	facts    *Facts
	problems []Problem
}

func (a *analysis) errf(entry, format string, args ...any) {
	a.problems = append(a.problems, Problem{File: a.f.Path, Entry: entry, Msg: fmt.Sprintf(format, args...)})
}

// Analyze checks every entry of f against facts and returns what each entry
// reaches. An entry with problems still yields a target when its server
// could be told.
func Analyze(f *File, facts *Facts) ([]Target, []Problem) {
	a := &analysis{f: f, facts: facts}
	var targets []Target
	usedInputs := map[string]bool{}
	fileAgent := a.agentOfFile()
	for _, e := range f.Entries {
		t, ok := a.entry(e, usedInputs)
		if !ok {
			continue
		}
		if !strings.HasPrefix(e.Name, t.Server) {
			a.errf(e.Name, "the name should start with the server's (%s): it reaches %s-mcp", t.Server, t.Server)
		}
		if fileAgent != "" && t.Agent != fileAgent {
			a.errf(e.Name, "acts as agent %q in a file for agent %q", t.Agent, fileAgent)
		}
		targets = append(targets, t)
	}
	for _, in := range f.Inputs {
		if !usedInputs[in.ID] {
			a.errf("", "input %q is declared but no server uses it", in.ID)
		}
	}
	return targets, a.problems
}

// agentOfFile: a file named for a policy agent (agents/flight_search.mcp.json,
// agents/flight_search_http.mcp.json) configures that agent only.
func (a *analysis) agentOfFile() string {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(a.f.Path), ".json"), ".mcp")
	base = strings.TrimSuffix(base, "_http")
	if a.facts.Policy != nil && a.facts.Policy.HasAgent(base) {
		return base
	}
	return ""
}

func (a *analysis) entry(e Entry, usedInputs map[string]bool) (Target, bool) {
	t := Target{File: a.f, Entry: e, Env: map[string]string{}, Flags: map[string]string{}}
	bridge := e.Command == "npx"
	// Every value the client expands must use the client's own syntax.
	values := []string{e.Command, e.URL}
	if !bridge {
		values = append(values, e.Args...)
	}
	for _, v := range e.Env {
		values = append(values, v)
	}
	for _, v := range e.Headers {
		values = append(values, v)
	}
	for _, v := range values {
		refs, err := Refs(a.f.Client, v)
		if err != nil {
			a.errf(e.Name, "%v", err)
		}
		for _, r := range refs {
			if r.Kind == "input" {
				usedInputs[r.Name] = true
				a.checkInput(e.Name, r.Name)
			}
		}
	}
	switch {
	case e.Transport() == "http":
		t.Via = ViaHTTP
		return t, a.http(&t)
	case strings.HasPrefix(e.Command, RootPlaceholder+"/bin/"):
		t.Via = ViaBinary
		return t, a.binary(&t)
	case e.Command == "docker" || e.Command == "podman":
		t.Via = ViaContainer
		return t, a.container(&t)
	case bridge:
		t.Via = ViaBridge
		return t, a.bridge(&t)
	}
	a.errf(e.Name, "command %q is none of %s/bin/<server>-mcp, docker or podman, npx mcp-remote", e.Command, RootPlaceholder)
	return t, false
}

func (a *analysis) checkInput(entry, id string) {
	for _, in := range a.f.Inputs {
		if in.ID == id {
			if in.Type != "promptString" || !in.Password {
				a.errf(entry, `input %q should be {"type": "promptString", "password": true}: it holds a token`, id)
			}
			return
		}
	}
	a.errf(entry, "${input:%s} is not declared under inputs", id)
}

func (a *analysis) server(entry, name string) (*help.Server, bool) {
	s, ok := a.facts.Servers[name]
	if !ok {
		known := make([]string, 0, len(a.facts.Servers))
		for k := range a.facts.Servers {
			known = append(known, k)
		}
		sort.Strings(known)
		a.errf(entry, "no server %q (the servers: %s)", name, strings.Join(known, ", "))
	}
	return s, ok
}

// binary: /abs/path/to/mcp-fleet/bin/<server>-mcp [flags].
func (a *analysis) binary(t *Target) bool {
	e := t.Entry
	prog := strings.TrimPrefix(e.Command, RootPlaceholder+"/bin/")
	t.Server = strings.TrimSuffix(prog, "-mcp")
	s, ok := a.server(e.Name, t.Server)
	if !ok {
		return false
	}
	if prog != s.Program {
		a.errf(e.Name, "command %s: the binary is %s", e.Command, s.Program)
	}
	t.Args = e.Args
	t.Flags = a.flags(e.Name, s, e.Args)
	for k, v := range e.Env {
		t.Env[k] = v
	}
	a.serverEnv(e.Name, s, t.Env)
	a.identity(t, RootPlaceholder+"/configs/acl.yaml", nil)
	a.stdioOnly(t)
	a.paths(t, nil)
	a.credentials(t, s)
	return true
}

// flags parses a server's arguments against its --help.
func (a *analysis) flags(entry string, s *help.Server, args []string) map[string]string {
	vals, problems := s.ParseArgs(args)
	for _, p := range problems {
		a.errf(entry, "%s", p)
	}
	return vals
}

func (a *analysis) serverEnv(entry string, s *help.Server, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !s.HasEnv(k) {
			a.errf(entry, "%s is not a variable %s reads (see %s --help)", k, s.Program, s.Program)
		}
	}
}

// identity finds the agent an stdio entry acts as and checks that it comes
// with the policy: acl is the policy path the entry must use, extra the
// paths that also count (a container's mounts).
func (a *analysis) identity(t *Target, acl string, extra map[string]string) {
	agent, fromFlag := t.Flags["agent"]
	if !fromFlag {
		agent = t.Env["MCP_AGENT"]
	}
	policy, ok := t.Flags["acl"]
	if !ok {
		policy = t.Env["MCP_ACL_FILE"]
	}
	// The policy comes first; grant files of configs/acl.d may follow.
	policy, grants, _ := strings.Cut(policy, string(os.PathListSeparator))
	for _, g := range strings.Split(grants, string(os.PathListSeparator)) {
		if g != "" && !strings.Contains(g, "/configs/acl.d/") && extra[g] == "" {
			a.errf(t.Entry.Name, "grant file %s: use one of the shipped grants in configs/acl.d", g)
		}
	}
	t.Agent = agent
	if agent != "" && (a.facts.Policy == nil || !a.facts.Policy.HasAgent(agent)) {
		a.errf(t.Entry.Name, "agent %q is not in configs/acl.yaml (agents: %s)", agent, strings.Join(a.agents(), ", "))
	}
	switch {
	case agent != "" && policy == "":
		a.errf(t.Entry.Name, "agent %q without a policy: add --acl %s", agent, acl)
	case policy != "" && agent == "" && t.Via != ViaHTTP:
		a.errf(t.Entry.Name, "a policy without an agent: the server would refuse every call; set MCP_AGENT")
	case policy != "" && policy != acl && extra[policy] == "":
		a.errf(t.Entry.Name, "policy %s: use the shipped one, %s", policy, acl)
	}
}

func (a *analysis) agents() []string {
	if a.facts.Policy == nil {
		return nil
	}
	return a.facts.Policy.Agents()
}

func (a *analysis) stdioOnly(t *Target) {
	tr, ok := t.Flags["transport"]
	if !ok {
		tr = t.Env["MCP_TRANSPORT"]
	}
	if tr != "" && tr != "stdio" {
		a.errf(t.Entry.Name, "transport %q: a client that starts the server talks to it over stdio", tr)
	}
}

// paths checks the files an entry names: under the checkout they must
// exist; in a container they must be in the image or mounted.
func (a *analysis) paths(t *Target, mounts map[string]string) {
	vals := make([]string, 0, len(t.Flags)+len(t.Env))
	for _, v := range t.Flags {
		vals = append(vals, v)
	}
	for _, v := range t.Env {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	for _, v := range splitPaths(vals) {
		switch {
		case strings.HasPrefix(v, RootPlaceholder+"/"):
			if t.Via == ViaContainer {
				a.errf(t.Entry.Name, "%s is a path on the host; the server runs in the container (mount it)", v)
			} else if a.facts.Root != "" {
				if _, err := os.Stat(filepath.Join(a.facts.Root, strings.TrimPrefix(v, RootPlaceholder+"/"))); err != nil {
					a.errf(t.Entry.Name, "%s: no such file in the repository", v)
				}
			}
		case t.Via == ViaContainer && strings.HasPrefix(v, "/"):
			if !inImage(v, mounts) {
				a.errf(t.Entry.Name, "%s is neither in the image (%s, %s, %s) nor mounted", v, image.Policy, image.DataDir, image.Workspace)
			}
		}
	}
}

// splitPaths splits path lists (a policy and its grant files) into their
// paths; a value whose parts are not all paths (a URL) stays whole.
func splitPaths(vals []string) []string {
	var out []string
	for _, v := range vals {
		parts := strings.Split(v, string(os.PathListSeparator))
		whole := false
		for _, p := range parts {
			if !strings.HasPrefix(p, RootPlaceholder+"/") && !strings.HasPrefix(p, "/") {
				whole = true
			}
		}
		if whole {
			parts = []string{v}
		}
		out = append(out, parts...)
	}
	return out
}

func inImage(p string, mounts map[string]string) bool {
	for _, root := range []string{image.Policy, image.DataDir, image.Workspace} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	for dst := range mounts {
		if p == dst || strings.HasPrefix(p, dst+"/") {
			return true
		}
	}
	return false
}

var otherPath = regexp.MustCompile(`/abs/path/to/[^\s"]*`)

func (a *analysis) credentials(t *Target, s *help.Server) {
	for _, k := range s.EnvOnly {
		if _, set := t.Env[k]; set && k != "MCP_AUTH_TOKEN" && k != "MCP_AGENT_TOKENS" {
			t.Credentials = append(t.Credentials, k)
		}
	}
	for _, v := range append(append([]string{}, t.Args...), mapValues(t.Env)...) {
		for _, p := range otherPath.FindAllString(v, -1) {
			if !strings.HasPrefix(p, RootPlaceholder) && !strings.HasPrefix(p, ProjectPlaceholder) {
				t.Credentials = append(t.Credentials, p)
			}
		}
	}
	sort.Strings(t.Credentials)
}

// container: docker run -i --rm [options] IMAGE [flags].
func (a *analysis) container(t *Target) bool {
	e := t.Entry
	args := e.Args
	if len(args) == 0 || args[0] != "run" {
		a.errf(e.Name, "%s %s: want %s run -i --rm … IMAGE", e.Command, strings.Join(args, " "), e.Command)
		return false
	}
	t.Volumes = map[string]string{}
	passed := map[string]bool{}
	var interactive, remove bool
	i := 1
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		opt, val, hasVal := strings.Cut(args[i], "=")
		needs := func() bool {
			if hasVal {
				return true
			}
			if i+1 >= len(args) {
				a.errf(e.Name, "%s needs a value", opt)
				return false
			}
			i++
			val = args[i]
			return true
		}
		switch opt {
		case "-i", "--interactive":
			interactive = true
		case "--rm":
			remove = true
		case "--init":
		case "-t", "--tty", "-it", "-ti":
			a.errf(e.Name, "%s: a terminal mangles the JSON-RPC stream; use -i alone", opt)
		case "-d", "--detach":
			a.errf(e.Name, "%s: the client talks to the container's stdin and stdout", opt)
		case "--name":
			needs()
			a.errf(e.Name, "--name: a fixed name makes the next session's container fail while one runs")
		case "-p", "--publish":
			needs()
			a.errf(e.Name, "%s: a stdio server listens on no port", opt)
		case "-e", "--env":
			if !needs() {
				continue
			}
			name, v, has := strings.Cut(val, "=")
			if !has {
				ev, set := e.Env[name]
				if !set {
					a.errf(e.Name, "-e %s passes the client's %s, but the entry's env does not set it", name, name)
				}
				v = ev
			}
			t.Env[name] = v
			passed[name] = true
		case "-v", "--volume":
			if !needs() {
				continue
			}
			a.volume(t, val)
		case "--network", "--user", "-u", "--read-only", "--cap-drop", "--security-opt", "--memory", "--cpus", "--pids-limit":
			if opt != "--read-only" {
				needs()
			}
		default:
			a.errf(e.Name, "%s: an option these checks do not know; keep to -i --rm -e -v --init --network --user", opt)
		}
	}
	if !interactive {
		a.errf(e.Name, "no -i: without it the container's stdin is closed and the server stops at once")
	}
	if !remove {
		a.errf(e.Name, "no --rm: every session would leave a stopped container behind")
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		if !passed[k] {
			a.errf(e.Name, "env %s reaches %s, not the server: pass it with -e %s", k, e.Command, k)
		}
	}
	if i >= len(args) {
		a.errf(e.Name, "no image after the options")
		return false
	}
	t.Image = args[i]
	server, ok := a.facts.Images[t.Image]
	if !ok {
		a.errf(e.Name, "image %s is not one `make images` builds (%s)", t.Image, strings.Join(slices.Sorted(maps.Keys(a.facts.Images)), ", "))
		return false
	}
	t.Server = server
	s, ok := a.server(e.Name, server)
	if !ok {
		return false
	}
	t.Args = args[i+1:]
	t.Flags = a.flags(e.Name, s, t.Args)
	a.serverEnv(e.Name, s, t.Env)
	a.identity(t, image.Policy, t.Volumes)
	a.stdioOnly(t)
	a.paths(t, t.Volumes)
	a.credentials(t, s)
	return true
}

func (a *analysis) volume(t *Target, spec string) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 || (len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw") {
		a.errf(t.Entry.Name, "-v %s: want SOURCE:/container/path[:ro]", spec)
		return
	}
	src, dst := parts[0], parts[1]
	if !strings.HasPrefix(dst, "/") {
		a.errf(t.Entry.Name, "-v %s: the container path must be absolute", spec)
		return
	}
	if strings.Contains(src, "/") && !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "${") {
		a.errf(t.Entry.Name, "-v %s: a host path must be absolute (a name alone is a named volume)", spec)
	}
	if dst == image.Policy && src != RootPlaceholder+"/configs/acl.yaml" && !strings.HasPrefix(src, "/") {
		a.errf(t.Entry.Name, "-v %s: mount a policy file over %s", spec, image.Policy)
	}
	t.Volumes[dst] = src
}

var bridgePackage = regexp.MustCompile(`^mcp-remote@\d+\.\d+\.\d+$`)

// bridge: npx -y mcp-remote@X.Y.Z URL --header Authorization:${AUTH_HEADER},
// with AUTH_HEADER="Bearer <TOKEN>" in env; mcp-remote expands ${AUTH_HEADER}
// itself, from its environment.
func (a *analysis) bridge(t *Target) bool {
	e := t.Entry
	args := e.Args
	if len(args) > 0 && args[0] == "-y" {
		args = args[1:]
	} else {
		a.errf(e.Name, "npx without -y asks before installing, and nobody answers a client's subprocess")
	}
	if len(args) < 2 || !bridgePackage.MatchString(args[0]) {
		a.errf(e.Name, "want npx -y mcp-remote@X.Y.Z URL --header Authorization:${AUTH_HEADER} (a pinned version)")
		return false
	}
	t.URL = args[1]
	header := ""
	for i := 2; i < len(args); i++ {
		switch args[i] {
		case "--header":
			if i+1 < len(args) {
				i++
				header = args[i]
				continue
			}
			a.errf(e.Name, "--header needs a value")
		case "--transport":
			if i+1 < len(args) && args[i+1] == "http-only" {
				i++
				continue
			}
			a.errf(e.Name, "--transport: only http-only (the servers serve SSE only with --sse)")
		default:
			a.errf(e.Name, "mcp-remote option %q: keep to --header and --transport http-only", args[i])
		}
	}
	// The header is one argument without a space after the colon: some
	// clients split arguments on spaces.
	m := regexp.MustCompile(`^Authorization:\$\{([A-Z_]+)\}$`).FindStringSubmatch(header)
	if m == nil {
		a.errf(e.Name, "want --header Authorization:${AUTH_HEADER} (no space; the value comes from env)")
		return a.url(t)
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		if k != m[1] {
			a.errf(e.Name, "env %s: mcp-remote needs only %s", k, m[1])
		}
	}
	val, ok := e.Env[m[1]]
	if !ok {
		a.errf(e.Name, "--header uses ${%s} but env does not set it", m[1])
		return a.url(t)
	}
	ok = a.url(t)
	lit := regexp.MustCompile(`^Bearer (<([A-Z][A-Z0-9_]*)>)$`).FindStringSubmatch(val)
	if lit == nil {
		a.errf(e.Name, "env %s: want \"Bearer <NAME_MCP_TOKEN>\", a placeholder for the token", m[1])
		return ok
	}
	t.TokenRef, t.TokenName = lit[1], lit[2]
	if ok {
		a.tokenName(t, t.TokenName, "_MCP_TOKEN", strings.ToUpper)
	}
	return ok
}

// http: the client's own streamable HTTP with a bearer token header.
func (a *analysis) http(t *Target) bool {
	e := t.Entry
	ok := a.url(t)
	auth, has := e.Headers["Authorization"]
	if len(e.Headers) != 1 || !has {
		a.errf(e.Name, "headers %v: want exactly Authorization: Bearer <token variable>", slices.Sorted(maps.Keys(e.Headers)))
		return ok
	}
	value, found := strings.CutPrefix(auth, "Bearer ")
	refs, _ := Refs(a.f.Client, value)
	if !found || len(refs) != 1 || refs[0].Raw != value {
		a.errf(e.Name, "Authorization %q: want \"Bearer \" and one variable holding the token", auth)
		return ok
	}
	t.TokenRef, t.TokenName = value, refs[0].Name
	if !ok {
		return false
	}
	switch refs[0].Kind {
	case "env":
		a.tokenName(t, t.TokenName, "_MCP_TOKEN", strings.ToUpper)
	case "input":
		a.tokenName(t, t.TokenName, "-token", func(s string) string { return s })
	default:
		a.errf(e.Name, "the token comes from %s, not a variable or an input", refs[0].Raw)
	}
	return true
}

// tokenName: a token variable is named for its server (SERVER_MCP_TOKEN,
// given to the server as MCP_AUTH_TOKEN) or for a policy agent
// (AGENT_MCP_TOKEN, given in MCP_AGENT_TOKENS); VS Code inputs likewise
// (server-token, agent-token).
func (a *analysis) tokenName(t *Target, name, suffix string, form func(string) string) {
	if name == form(t.Server)+suffix {
		t.TokenFor = TokenServer
		return
	}
	for _, ag := range a.agents() {
		if name == form(ag)+suffix {
			t.TokenFor, t.Agent = TokenAgent, ag
			return
		}
	}
	a.errf(t.Entry.Name, "token %s: name it %s (the server's token) or for a policy agent (%s)", name,
		form(t.Server)+suffix, form("<agent>")+suffix)
}

// url: http://127.0.0.1:<the server's default port>/mcp.
func (a *analysis) url(t *Target) bool {
	e := t.Entry
	if t.URL == "" {
		t.URL = e.URL
	}
	u, err := url.Parse(t.URL)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") || u.Path != "/mcp" || u.RawQuery != "" {
		a.errf(e.Name, "url %s: want http://127.0.0.1:<port>/mcp (a server on this machine; put TLS in front for others)", t.URL)
		return false
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		a.errf(e.Name, "url %s: name the port", t.URL)
		return false
	}
	for _, name := range slices.Sorted(maps.Keys(a.facts.Servers)) {
		if a.facts.Servers[name].DefaultPort == port {
			t.Server = name
			return true
		}
	}
	a.errf(e.Name, "url %s: port %d is no server's default port", t.URL, port)
	return false
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
