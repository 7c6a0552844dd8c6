// Package shell runs one allowlisted program for the devtools server's
// shell_execute tool, without ever starting a shell.
//
// A request is a command line or an argument vector. A command line is
// parsed (see [Parse]) into one simple command; pipes, separators,
// redirections, substitutions and every other shell construct are refused.
// The program must be on the allowlist: the built-in read-only programs
// ([DefaultPrograms]), each with its own allowlist of flags and with every
// file argument confined to the roots, or an operator-added program, which
// takes any arguments (see [Config.Allow]).
//
// The program is found through a fixed PATH, never the server's, and runs
// in a working directory inside the roots, with a clean environment (PATH,
// HOME set to an empty temporary directory, LANG=C.UTF-8 and the variables
// the caller may set by name), standard input at /dev/null, in its own
// process group. On timeout, cancellation or when the output cap is reached
// the whole group is killed, and the group is killed again when the program
// exits so that no background child outlives the call.
package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Config is the operator's configuration. Zero fields take the defaults
// of [DefaultConfig].
type Config struct {
	// Roots are the directories commands may run in and name files in;
	// the same roots as the file tools. Required.
	Roots []string
	// Programs restricts the built-in programs to these names; nil means
	// all of [DefaultPrograms].
	Programs []string
	// Allow adds programs that take ANY arguments, unchecked: no flag
	// allowlist, no path confinement of their arguments. An interpreter or
	// package runner here (node, npm, python, sh…) can do anything the
	// server's user can: read and write any file, open network
	// connections, start processes that leave the process group. Names
	// must be plain program names, not built-in ones.
	Allow []string
	// Env lists the environment variable names a caller may set. Names
	// that would undo the sandbox (PATH, HOME, GIT_*, LD_* and similar)
	// are refused.
	Env []string
	// DefaultTimeout applies when a call gives none; MaxTimeout caps what
	// a call may ask for.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// MaxOutput caps stdout and stderr together, in bytes; past it the
	// program is killed and the result is marked truncated.
	MaxOutput int64
	// Path is the PATH programs are looked up in and children get:
	// absolute directories separated by ':'.
	Path string
	// HoldWrites, if set, keeps the file tools from changing the roots
	// until the returned function is called. A git command holds it from
	// the check of the repository's configuration to the program's exit,
	// so that what git reads is what was checked (a file_write racing the
	// command could otherwise plant a filter or diff program in between).
	HoldWrites func() (release func())
}

// DefaultConfig returns the defaults for every optional field.
func DefaultConfig() Config {
	return Config{
		DefaultTimeout: 30 * time.Second,
		MaxTimeout:     5 * time.Minute,
		MaxOutput:      10 << 20,
		Path:           "/usr/local/bin:/usr/bin:/bin",
	}
}

// Shell runs requests under one configuration. It is safe for concurrent
// use.
type Shell struct {
	cfg      Config
	roots    roots
	programs map[string]program
	extra    map[string]bool
	env      map[string]bool
	path     []string
}

var (
	programName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]*$`)
	envName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ValidEnvName says whether name may name an environment variable: letters,
// digits and _, not starting with a digit.
func ValidEnvName(name string) bool { return envName.MatchString(name) }

// reservedEnv are names a caller may never set: the sandbox sets them, or
// they make programs load code or read other configuration.
var reservedEnv = map[string]bool{
	"PATH": true, "HOME": true, "LANG": true, "IFS": true, "ENV": true, "BASH_ENV": true,
	"SHELLOPTS": true, "BASHOPTS": true, "PS4": true, "PAGER": true, "EDITOR": true, "VISUAL": true,
	"GCONV_PATH": true, "LOCPATH": true, "NLSPATH": true, "HOSTALIASES": true, "TMPDIR": true,
	"NODE_OPTIONS": true, "PYTHONSTARTUP": true, "PERL5OPT": true,
	// POSIXLY_CORRECT stops GNU programs from permuting options: "grep x f
	// -e /etc/passwd" would then read -e and /etc/passwd as files, where
	// the flag checker saw a pattern.
	"POSIXLY_CORRECT": true,
}

var reservedEnvPrefixes = []string{"GIT_", "LD_", "DYLD_", "BASH_FUNC_", "LC_"}

// New checks cfg and returns a Shell. Errors concern operator
// configuration and may name host paths.
func New(cfg Config) (*Shell, error) {
	d := DefaultConfig()
	if cfg.DefaultTimeout == 0 {
		cfg.DefaultTimeout = d.DefaultTimeout
	}
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = max(d.MaxTimeout, cfg.DefaultTimeout)
	}
	if cfg.MaxOutput == 0 {
		cfg.MaxOutput = d.MaxOutput
	}
	if cfg.Path == "" {
		cfg.Path = d.Path
	}
	if cfg.DefaultTimeout < 0 || cfg.MaxTimeout < 0 || cfg.MaxOutput < 0 {
		return nil, errors.New("shell: timeouts and the output cap must be positive")
	}
	if cfg.DefaultTimeout > cfg.MaxTimeout {
		return nil, fmt.Errorf("shell: default timeout %s exceeds the maximum %s", cfg.DefaultTimeout, cfg.MaxTimeout)
	}
	r, err := openRoots(cfg.Roots)
	if err != nil {
		return nil, err
	}
	s := &Shell{cfg: cfg, roots: r, programs: map[string]program{}, extra: map[string]bool{}, env: map[string]bool{}}
	for _, dir := range strings.Split(cfg.Path, ":") {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("shell: PATH entry %q is not an absolute directory", dir)
		}
		s.path = append(s.path, filepath.Clean(dir))
	}
	names := cfg.Programs
	if names == nil {
		names = DefaultPrograms()
	}
	for _, n := range names {
		p, ok := builtins[n]
		if !ok {
			return nil, fmt.Errorf("shell: %q is not a built-in program (built-in: %s)", n, strings.Join(DefaultPrograms(), ", "))
		}
		s.programs[n] = p
	}
	for _, n := range cfg.Allow {
		if !programName.MatchString(n) {
			return nil, fmt.Errorf("shell: allowed program %q must be a plain program name, without a path", n)
		}
		if _, ok := builtins[n]; ok {
			return nil, fmt.Errorf("shell: %q is a built-in program with its own flag policy; it cannot also be allowed with any arguments", n)
		}
		s.extra[n] = true
	}
	for _, n := range cfg.Env {
		if !ValidEnvName(n) {
			return nil, fmt.Errorf("shell: %q is not a valid environment variable name", n)
		}
		if reservedName(n) {
			return nil, fmt.Errorf("shell: environment variable %s cannot be allowed: the sandbox sets it or it makes programs load other code or configuration", n)
		}
		s.env[n] = true
	}
	return s, nil
}

func reservedName(n string) bool {
	u := strings.ToUpper(n)
	if reservedEnv[u] {
		return true
	}
	for _, p := range reservedEnvPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// Config returns the effective configuration (defaults filled in).
func (s *Shell) Config() Config { return s.cfg }

// Roots returns the roots as configured (absolute, cleaned).
func (s *Shell) Roots() []string { return slices.Clone(s.roots.given) }

// Programs returns the allowed built-in programs, sorted.
func (s *Shell) Programs() []string { return sortedKeys(s.programs) }

// Unrestricted returns the operator-added programs that take any
// arguments, sorted.
func (s *Shell) Unrestricted() []string { return sortedKeys(s.extra) }

// EnvNames returns the environment variable names a caller may set.
func (s *Shell) EnvNames() []string { return sortedKeys(s.env) }

// ReadOnly reports whether only read-only programs are allowed (no
// operator-added program).
func (s *Shell) ReadOnly() bool { return len(s.extra) == 0 }

func (s *Shell) allowedList() string {
	return strings.Join(slices.Sorted(slices.Values(append(s.Programs(), s.Unrestricted()...))), ", ")
}

// Request is one command to run. Exactly one of Command and Argv is set.
type Request struct {
	// Command is a command line, parsed by [Parse].
	Command string
	// Argv is the program and its arguments, taken literally.
	Argv []string
	// Cwd is the working directory: relative to the first root, or
	// absolute inside a root; empty means the first root.
	Cwd string
	// Timeout bounds the run; zero means the default, and anything above
	// the maximum is lowered to it.
	Timeout time.Duration
	// Env adds variables; every name must be allowed by the configuration.
	Env map[string]string
	// Roots, when set, replace the configured roots for this run: the
	// directories the caller has already decided this call may use (a
	// client's roots inside the configured ones). Each must be an existing
	// directory.
	Roots []string
}

// Result is what a run produced. A non-zero exit is a result, not an error.
type Result struct {
	// Argv is the command as parsed and checked (hardening flags that git
	// receives are not shown).
	Argv     []string
	Stdout   []byte
	Stderr   []byte
	ExitCode int // -1 when the program was killed by a signal
	// Signal names the signal that ended the program, if one did.
	Signal   string
	Duration time.Duration
	// Timeout is the limit that applied (after capping).
	Timeout time.Duration
	// Truncated: the output reached the cap; what came after was dropped
	// and the program was killed.
	Truncated bool
	// TimedOut: the program was killed because the timeout passed.
	TimedOut bool
}

// plan is a checked request, ready to start.
type plan struct {
	argv    []string // as the caller gave it
	bin     string   // absolute path of the program
	args    []string // arguments to run (may include hardening)
	cwd     string
	env     []string // extra variables (caller's and the policy's)
	timeout time.Duration
	git     bool
	chk     *checker
}

// check validates req against the configuration without running anything.
func (s *Shell) check(req Request) (*plan, error) {
	var argv []string
	switch {
	case req.Command != "" && len(req.Argv) > 0:
		return nil, invalid("command", "give either command or argv, not both")
	case len(req.Argv) > 0:
		for i, a := range req.Argv {
			if strings.ContainsRune(a, 0) {
				return nil, invalid("argv", "argv[%d] contains a NUL byte", i)
			}
		}
		argv = slices.Clone(req.Argv)
	case req.Command != "":
		var err error
		if argv, err = Parse(req.Command); err != nil {
			return nil, err
		}
	default:
		return nil, invalid("command", "give a command or argv")
	}
	name := argv[0]
	field := "command"
	if len(req.Argv) > 0 {
		field = "argv"
	}
	if name == "" {
		return nil, invalid(field, "the program name is empty")
	}
	if strings.ContainsRune(name, '/') {
		return nil, invalid(field, "program %q must be given by name, not by path: programs are looked up in the configured PATH (allowed: %s)", name, s.allowedList())
	}
	pol, builtin := s.programs[name]
	if !builtin && !s.extra[name] {
		return nil, invalid(field, "program %q is not allowed (allowed: %s)", name, s.allowedList())
	}
	rs := s.roots
	if req.Roots != nil {
		var err error
		if rs, err = openRoots(req.Roots); err != nil {
			return nil, failed("cannot open the call's roots", err)
		}
	}
	cwd, err := rs.cwd(req.Cwd)
	if err != nil {
		return nil, err
	}
	timeout := req.Timeout
	switch {
	case timeout < 0:
		return nil, invalid("timeout_ms", "the timeout must be positive")
	case timeout == 0:
		timeout = s.cfg.DefaultTimeout
	case timeout > s.cfg.MaxTimeout:
		timeout = s.cfg.MaxTimeout
	}
	var env []string
	for _, k := range sortedKeys(req.Env) {
		if !s.env[k] {
			allowed := "none are"
			if len(s.env) > 0 {
				allowed = strings.Join(s.EnvNames(), ", ")
			}
			return nil, invalid("env", "environment variable %q may not be set (allowed: %s)", k, allowed)
		}
		v := req.Env[k]
		if strings.ContainsRune(v, 0) {
			return nil, invalid("env", "the value of %s contains a NUL byte", k)
		}
		env = append(env, k+"="+v)
	}
	p := &plan{argv: argv, cwd: cwd, timeout: timeout, args: argv[1:]}
	p.chk = &checker{roots: rs, cwd: cwd, prog: name}
	if builtin {
		if p.args, err = pol.check(p.chk, argv[1:]); err != nil {
			if e, ok := err.(*Error); ok && e.Field == "command" {
				e.Field = field
			}
			return nil, err
		}
		if pol.env != nil {
			env = append(pol.env(p.chk), env...)
		}
		p.git = name == "git" && gitNeedsRepo(p.args)
	}
	bin, err := lookPath(name, s.path)
	if err != nil {
		return nil, &Error{Code: mcperr.NotFound, Field: field, Msg: fmt.Sprintf("program %q is allowed but not installed in PATH %s", name, s.cfg.Path), cause: err}
	}
	p.bin, p.env = bin, env
	return p, nil
}

// lookPath finds an executable regular file named name in dirs, the way a
// shell would, but in the configured PATH instead of the server's.
func lookPath(name string, dirs []string) (string, error) {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%s: not found in %s", name, strings.Join(dirs, ":"))
}

// Run checks and runs req. Refusals and start failures are [*Error]
// values; a cancelled or expired ctx (the caller's, not the request's own
// timeout) returns ctx's error after the program group has been killed.
func (s *Shell) Run(ctx context.Context, req Request) (*Result, error) {
	p, err := s.check(req)
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "devtools-shell-home-")
	if err != nil {
		return nil, failed("cannot create the command's home directory", err)
	}
	defer os.RemoveAll(home)
	env := append([]string{"PATH=" + s.cfg.Path, "HOME=" + home, "LANG=C.UTF-8"}, p.env...)
	args := p.args
	if p.git {
		if s.cfg.HoldWrites != nil {
			release := s.cfg.HoldWrites()
			defer release()
		}
		extra, err := gitPrepare(ctx, p.chk, p.bin, env)
		if err != nil {
			return nil, err
		}
		args = append(extra, args...)
	}
	res, err := execute(ctx, p.bin, p.argv[0], args, p.cwd, env, p.timeout, s.cfg.MaxOutput)
	if err != nil {
		return nil, err
	}
	res.Argv, res.Timeout = p.argv, p.timeout
	return res, nil
}
