// Package help reads what a server binary accepts from its --help output:
// its flags (whether each takes a value, the environment variables that set
// it, its default), the variables it reads from the environment only
// (secrets), its subcommands and its default HTTP port. --help is the
// servers' public contract, so checks of configuration files compare against
// it rather than against the servers' code.
package help

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Flag is one --flag of a server.
type Flag struct {
	Name       string   // without the dashes
	TakesValue bool     // "--name value" rather than a boolean switch
	Env        []string // variables that set it, in the order --help lists them
	Default    string   // as --help prints it; empty when none is shown
	// Repeatable: --help says the flag may be given more than once
	// ("repeat --acl"); its values then join as a path list.
	Repeatable bool
}

// Server is what one binary's --help says it accepts.
type Server struct {
	Program     string          // the name --help gives itself: avinode-mcp, or avinode-mcp webhooks for a command
	Flags       map[string]Flag // by name
	EnvOnly     []string        // variables read from the environment only (secrets)
	Commands    []string        // subcommands
	DefaultPort int             // the --port default
	env         map[string]bool
}

// HasEnv reports whether the server reads the variable, through a flag or
// from the environment only.
func (s *Server) HasEnv(name string) bool { return s.env[name] }

// Env lists every variable the server reads, sorted.
func (s *Server) Env() []string {
	out := make([]string, 0, len(s.env))
	for k := range s.env {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FlagForEnv returns the flag a variable sets, if any.
func (s *Server) FlagForEnv(name string) (Flag, bool) {
	for _, f := range s.Flags {
		for _, e := range f.Env {
			if e == name {
				return f, true
			}
		}
	}
	return Flag{}, false
}

var (
	// "  --name value   usage … [$A, $B] (default x)" or "  --name   usage".
	flagLine = regexp.MustCompile(`^  --([a-z][a-z0-9-]*)( value)?\s`)
	// "  $NAME   usage (environment only; …)".
	envLine  = regexp.MustCompile(`^  \$([A-Z][A-Z0-9_]*)\s`)
	envGroup = regexp.MustCompile(`\[(\$[A-Z][A-Z0-9_]*(?:, \$[A-Z][A-Z0-9_]*)*)\]`)
	defValue = regexp.MustCompile(`\(default ([^)]*)\)\s*$`)
	cmdLine  = regexp.MustCompile(`^  ([a-z][a-z0-9-]*)\s{2,}\S`)
	// "avinode-mcp — …", or "avinode-mcp webhooks — …" for a command.
	nameLine = regexp.MustCompile(`^([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)?) — `)
)

// Parse reads a --help text.
func Parse(text string) (*Server, error) {
	s := &Server{Flags: map[string]Flag{}, env: map[string]bool{}}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case s.Program == "" && nameLine.MatchString(line):
			s.Program = nameLine.FindStringSubmatch(line)[1]
			continue
		case strings.HasPrefix(line, "Flags"):
			section = "flags"
			continue
		case strings.HasPrefix(line, "Commands"):
			section = "commands"
			continue
		case line != "" && !strings.HasPrefix(line, " "):
			section = ""
			continue
		}
		switch section {
		case "flags":
			if m := flagLine.FindStringSubmatch(line); m != nil {
				f := Flag{Name: m[1], TakesValue: m[2] != "", Repeatable: strings.Contains(line, "repeat --"+m[1])}
				if g := envGroup.FindAllStringSubmatch(line, -1); g != nil {
					for _, v := range strings.Split(g[len(g)-1][1], ", ") {
						f.Env = append(f.Env, strings.TrimPrefix(v, "$"))
					}
				}
				if d := defValue.FindStringSubmatch(line); d != nil {
					f.Default = d[1]
				}
				if _, dup := s.Flags[f.Name]; dup {
					return nil, fmt.Errorf("help: flag --%s listed twice", f.Name)
				}
				s.Flags[f.Name] = f
				for _, e := range f.Env {
					s.env[e] = true
				}
			} else if m := envLine.FindStringSubmatch(line); m != nil {
				s.EnvOnly = append(s.EnvOnly, m[1])
				s.env[m[1]] = true
			}
		case "commands":
			if m := cmdLine.FindStringSubmatch(line); m != nil {
				s.Commands = append(s.Commands, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("help: %w", err)
	}
	if s.Program == "" {
		return nil, errors.New(`help: no "<program> — <summary>" line: not a server's --help`)
	}
	if len(s.Flags) == 0 {
		return nil, fmt.Errorf("help: %s lists no flags", s.Program)
	}
	if p, ok := s.Flags["port"]; ok {
		n, err := strconv.Atoi(p.Default)
		if err != nil {
			return nil, fmt.Errorf("help: %s: --port default %q is not a number", s.Program, p.Default)
		}
		s.DefaultPort = n
	}
	return s, nil
}

// Load runs bin --help and parses what it prints.
func Load(ctx context.Context, bin string) (*Server, error) {
	return load(ctx, bin, "--help")
}

// LoadCommand runs bin command --help and parses what it prints: the flags
// and variables of one of the server's commands (health, webhooks…).
func LoadCommand(ctx context.Context, bin, command string) (*Server, error) {
	s, err := load(ctx, bin, command, "--help")
	if err != nil {
		return nil, err
	}
	if want := filepath.Base(bin) + " " + command; s.Program != want {
		return nil, fmt.Errorf("help: %s %s --help names itself %q, not %q", bin, command, s.Program, want)
	}
	return s, nil
}

func load(ctx context.Context, bin string, args ...string) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"HOME=" + filepath.Dir(bin)} // --help must not depend on the caller's environment
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("help: %s %s: %w", bin, strings.Join(args, " "), err)
	}
	s, err := Parse(string(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	return s, nil
}
