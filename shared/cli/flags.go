// Package cli reads a program's settings from its command line and its
// environment: every flag has a variable, bad values are refused in one
// message shape, secrets are taken from the environment only, and --help
// lists both. The kit's Main and every server's own flags use it.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/suggest"
)

// Flags is a flag set in which every flag has an environment variable: the
// variable sets the value, a flag on the command line overrides it, and
// --help shows both. Older names (MCP_HTTP_PORT beside MCP_PORT…) are kept as
// aliases. Every bad value is refused with one message shape: the flag
// or variable, the value, what is wanted, and a suggestion where one is
// obvious.
type Flags struct {
	fs     *flag.FlagSet
	specs  []*flagSpec
	byName map[string]*flagSpec
	// args are the positional arguments left after Parse.
	args []string
	// secrets are the values the Secret flags were given.
	secrets []string
}

type flagSpec struct {
	name    string
	envs    []string
	usage   string
	def     string
	apply   func(string) error
	isBool  bool
	secret  bool
	envOnly bool
	// check runs after parsing, on the final value.
	check func() error
	// envOnlyApply, when set, applies an environment value (lists: the
	// variable replaces the default instead of extending it).
	envOnlyApply func(string) error
	// note: an environment variable read elsewhere, listed for reference.
	note bool
}

// NewFlags starts a flag set for the named program.
func NewFlags(program string) *Flags {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &Flags{fs: fs, byName: map[string]*flagSpec{}}
}

func (f *Flags) add(s *flagSpec) {
	if _, dup := f.byName[s.name]; dup {
		panic("cli: duplicate flag " + s.name)
	}
	f.specs = append(f.specs, s)
	f.byName[s.name] = s
	if s.envOnly {
		return
	}
	if s.isBool {
		f.fs.BoolFunc(s.name, s.usage, s.apply)
	} else {
		f.fs.Func(s.name, s.usage, s.apply)
	}
}

// String registers a string flag read from the first set variable of envs.
func (f *Flags) String(p *string, name string, envs []string, def, usage string) {
	*p = def
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: def, apply: func(v string) error { *p = v; return nil }})
}

// Enum registers a string flag whose value must be one of allowed.
func (f *Flags) Enum(p *string, name string, envs []string, def string, allowed []string, usage string) {
	*p = def
	f.add(&flagSpec{name: name, envs: envs, usage: usage + " (" + strings.Join(allowed, ", ") + ")", def: def,
		apply: func(v string) error {
			for _, a := range allowed {
				if v == a {
					*p = v
					return nil
				}
			}
			return fmt.Errorf("want one of %s, got %q%s", strings.Join(allowed, ", "), v, suggest.Closest(v, allowed))
		}})
}

// Secret registers a value that is read from the environment only: command
// lines are visible to every user of the machine in ps.
//
// Every value a Secret flag is given goes to the process's log redactor
// (and, when it is a URL, the password it carries), so a server never has
// to remember to add its secrets there.
func (f *Flags) Secret(p *string, env, usage string) {
	f.add(&flagSpec{name: env, envs: []string{env}, usage: usage, secret: true, envOnly: true,
		apply: func(v string) error {
			*p = v
			if v != "" {
				f.secrets = append(f.secrets, v)
				if u, err := url.Parse(v); err == nil && u.User != nil {
					if pw, ok := u.User.Password(); ok && pw != "" {
						f.secrets = append(f.secrets, pw)
					}
				}
			}
			return nil
		}})
}

// Secrets returns the values the Secret flags were given (and the passwords
// of those that are URLs): what the log redactor masks.
func (f *Flags) Secrets() []string { return f.secrets }

// Note documents an environment variable the server reads directly (not
// through a flag), so that --help and the generated reference list it.
func (f *Flags) Note(env, usage string) {
	f.add(&flagSpec{name: env, envs: []string{env}, usage: usage, envOnly: true, note: true,
		apply: func(string) error { return nil }})
}

// Bool registers a boolean flag; values are true/false (1/0, t/f).
func (f *Flags) Bool(p *bool, name string, envs []string, def bool, usage string) {
	*p = def
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: strconv.FormatBool(def), isBool: true,
		apply: func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false, got %q", v)
			}
			*p = b
			return nil
		}})
}

// Int registers an integer flag.
func (f *Flags) Int(p *int, name string, envs []string, def int, usage string) {
	*p = def
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: strconv.Itoa(def),
		apply: func(v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("want a whole number, got %q", v)
			}
			*p = n
			return nil
		}})
}

// Duration registers a duration flag ("30s", "5m").
func (f *Flags) Duration(p *time.Duration, name string, envs []string, def time.Duration, usage string) {
	*p = def
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: def.String(),
		apply: func(v string) error {
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil {
				hint := ""
				if _, nerr := strconv.Atoi(strings.TrimSpace(v)); nerr == nil {
					hint = fmt.Sprintf(" (did you mean %ss?)", strings.TrimSpace(v))
				}
				return fmt.Errorf("want a duration such as 30s or 5m, got %q%s", v, hint)
			}
			if d < 0 {
				return fmt.Errorf("want a positive duration, got %q", v)
			}
			*p = d
			return nil
		}})
}

// List registers a repeatable flag whose env variable holds a list separated
// by sep (commas, or os.PathListSeparator for paths).
func (f *Flags) List(p *[]string, name string, env string, sep string, usage string) {
	// The env value is applied before the command line; the first --name on
	// the command line replaces it rather than extending it.
	fromCLI := false
	split := func(v string) []string {
		var out []string
		for _, item := range strings.Split(v, sep) {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
		return out
	}
	s := &flagSpec{name: name, envs: []string{env}, usage: usage}
	s.apply = func(v string) error {
		if !fromCLI {
			*p, fromCLI = nil, true
		}
		*p = append(*p, split(v)...)
		return nil
	}
	f.add(s)
	// The environment replaces the default; it is not "the command line".
	envApply := func(v string) error { *p = split(v); return nil }
	s.envOnlyApply = envApply
}

// Check adds a test of the final value of flag name (after environment and
// command line); its error is reported like a bad value.
func (f *Flags) Check(name string, check func() error) {
	s := f.byName[name]
	if s == nil {
		panic("cli: Check of unknown flag " + name)
	}
	s.check = check
}

// Args returns the positional arguments left after Parse.
func (f *Flags) Args() []string { return f.args }

// ErrHelp and ErrVersion are returned by Parse when the user asked for them.
var (
	ErrHelp    = flag.ErrHelp
	ErrVersion = errors.New("version requested")
)

// UsageError is a bad flag, variable or argument; a server's Main exits 2
// with it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Parse applies the environment, then the command line. A command-line flag
// given explicitly wins over its variable. Unknown flags are errors: a
// mistyped option must never be silently ignored. Positional arguments are
// refused unless allowArgs is set (subcommands read them through Args).
func (f *Flags) Parse(args []string, getenv func(string) string, allowArgs ...bool) error {
	var version bool
	if f.fs.Lookup("version") == nil {
		f.fs.BoolVar(&version, "version", false, "print version and exit")
	}
	for _, s := range f.specs {
		for _, e := range s.envs {
			if v := getenv(e); v != "" {
				apply := s.apply
				if s.envOnlyApply != nil {
					apply = s.envOnlyApply
				}
				if err := apply(v); err != nil {
					return Usagef("%s=%q: %v", e, shorten(v, s.secret), err)
				}
				break
			}
		}
	}
	if err := f.fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ErrHelp
		}
		return f.explain(err)
	}
	f.args = f.fs.Args()
	if len(f.args) > 0 && !(len(allowArgs) > 0 && allowArgs[0]) {
		return Usagef("unexpected argument %q (flags start with --; see --help)", f.args[0])
	}
	for _, s := range f.specs {
		if s.check != nil {
			if err := s.check(); err != nil {
				return Usagef("%s: %v", f.source(s, getenv), err)
			}
		}
	}
	if version {
		return ErrVersion
	}
	return nil
}

// source names where a flag's value came from: --name when it was on the
// command line, else the environment variable that set it.
func (f *Flags) source(s *flagSpec, getenv func(string) string) string {
	given := false
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Name == s.name {
			given = true
		}
	})
	if !given {
		for _, e := range s.envs {
			if getenv(e) != "" {
				return e
			}
		}
	}
	return "--" + s.name
}

// explain rewrites the flag package's errors into the kit's one shape.
func (f *Flags) explain(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return Usagef("unknown flag --%s%s (see --help)", name, suggest.Closest(name, f.names()))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return Usagef("--%s needs a value (see --help)", name)
	}
	// invalid value "x" for flag -name: reason / invalid boolean value …
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		name, reason, _ := strings.Cut(rest, ": ")
		return Usagef("--%s: %s", name, reason)
	}
	if i := strings.Index(msg, " for -"); i >= 0 {
		rest := msg[i+len(" for -"):]
		name, reason, _ := strings.Cut(rest, ": ")
		return Usagef("--%s: %s", name, reason)
	}
	return Usagef("%s (see --help)", msg)
}

func (f *Flags) names() []string {
	out := make([]string, 0, len(f.specs))
	for _, s := range f.specs {
		if !s.envOnly {
			out = append(out, s.name)
		}
	}
	return out
}

func shorten(v string, secret bool) string {
	if secret {
		return "…"
	}
	if len(v) > 80 {
		return v[:80] + "…"
	}
	return v
}

// Usage writes the help text: every flag with its variables and default.
func (f *Flags) Usage(w io.Writer, program, summary string) {
	fmt.Fprintf(w, "%s — %s\n\nUsage: %s [flags]\n\nFlags (each also read from the environment variable shown):\n", program, summary, program)
	f.writeFlags(w)
}

func (f *Flags) writeFlags(w io.Writer) {
	specs := append([]*flagSpec(nil), f.specs...)
	sort.SliceStable(specs, func(i, j int) bool { return !specs[i].envOnly && specs[j].envOnly })
	for _, s := range specs {
		if s.envOnly {
			if s.note {
				fmt.Fprintf(w, "  %-28s %s (environment only)\n", "$"+s.envs[0], s.usage)
			} else {
				fmt.Fprintf(w, "  %-28s %s (environment only; never pass secrets as flags)\n", "$"+s.envs[0], s.usage)
			}
			continue
		}
		line := "  --" + s.name
		if !s.isBool {
			line += " value"
		}
		envs := make([]string, len(s.envs))
		for i, e := range s.envs {
			envs[i] = "$" + e
		}
		fmt.Fprintf(w, "%-30s %s", line, s.usage)
		if len(envs) > 0 {
			fmt.Fprintf(w, " [%s]", strings.Join(envs, ", "))
		}
		if s.def != "" && s.def != "false" && s.def != "0s" {
			fmt.Fprintf(w, " (default %s)", s.def)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %-28s print version and commit, then exit\n", "--version")
	fmt.Fprintf(w, "  %-28s print this help, then exit\n", "--help")
}

// FlagInfo describes one flag, for generated reference docs.
type FlagInfo struct {
	Name    string // "" for environment-only values
	Envs    []string
	Default string
	Usage   string
	Secret  bool
}

// Describe lists the flags in registration order.
func (f *Flags) Describe() []FlagInfo {
	out := make([]FlagInfo, 0, len(f.specs))
	for _, s := range f.specs {
		fi := FlagInfo{Name: s.name, Envs: s.envs, Default: s.def, Usage: s.usage, Secret: s.secret}
		if s.envOnly {
			fi.Name = ""
		}
		out = append(out, fi)
	}
	return out
}
