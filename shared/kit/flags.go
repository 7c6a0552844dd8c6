package kit

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Flags is a flag set in which every flag has an environment variable: the
// variable sets the value, a flag on the command line overrides it, and
// --help shows both. Names in the seeds' spelling (MCP_HTTP_PORT…) are kept
// as aliases.
type Flags struct {
	fs     *flag.FlagSet
	specs  []*flagSpec
	byName map[string]*flagSpec
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
}

// NewFlags starts a flag set for the named program.
func NewFlags(program string) *Flags {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &Flags{fs: fs, byName: map[string]*flagSpec{}}
}

func (f *Flags) add(s *flagSpec) {
	if _, dup := f.byName[s.name]; dup {
		panic("kit: duplicate flag " + s.name)
	}
	f.specs = append(f.specs, s)
	f.byName[s.name] = s
}

// String registers a string flag read from the first set variable of envs.
func (f *Flags) String(p *string, name string, envs []string, def, usage string) {
	*p = def
	f.fs.StringVar(p, name, def, usage)
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: def, apply: func(v string) error { *p = v; return nil }})
}

// Secret registers a value that is read from the environment only: command
// lines are visible to every user of the machine in ps.
func (f *Flags) Secret(p *string, env, usage string) {
	f.add(&flagSpec{name: env, envs: []string{env}, usage: usage, secret: true, envOnly: true,
		apply: func(v string) error { *p = v; return nil }})
}

// Bool registers a boolean flag; env values are parsed by strconv.ParseBool.
func (f *Flags) Bool(p *bool, name string, envs []string, def bool, usage string) {
	*p = def
	f.fs.BoolVar(p, name, def, usage)
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
	f.fs.IntVar(p, name, def, usage)
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: strconv.Itoa(def),
		apply: func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("want an integer, got %q", v)
			}
			*p = n
			return nil
		}})
}

// Duration registers a duration flag ("30s", "5m").
func (f *Flags) Duration(p *time.Duration, name string, envs []string, def time.Duration, usage string) {
	*p = def
	f.fs.DurationVar(p, name, def, usage)
	f.add(&flagSpec{name: name, envs: envs, usage: usage, def: def.String(),
		apply: func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("want a duration such as 30s or 5m, got %q", v)
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
	f.fs.Func(name, usage, func(v string) error {
		if !fromCLI {
			*p, fromCLI = nil, true
		}
		for _, item := range strings.Split(v, sep) {
			if item = strings.TrimSpace(item); item != "" {
				*p = append(*p, item)
			}
		}
		return nil
	})
	f.add(&flagSpec{name: name, envs: []string{env}, usage: usage,
		apply: func(v string) error {
			*p = nil
			for _, item := range strings.Split(v, sep) {
				if item = strings.TrimSpace(item); item != "" {
					*p = append(*p, item)
				}
			}
			return nil
		}})
}

// ErrHelp and ErrVersion are returned by Parse when the user asked for them.
var (
	ErrHelp    = flag.ErrHelp
	ErrVersion = fmt.Errorf("version requested")
)

// Parse applies the environment, then the command line. A command-line flag
// given explicitly wins over its variable. Unknown flags and stray arguments
// are errors: a mistyped option must never be silently ignored.
func (f *Flags) Parse(args []string, getenv func(string) string) error {
	var version bool
	f.fs.BoolVar(&version, "version", false, "print version and exit")
	for _, s := range f.specs {
		for _, e := range s.envs {
			if v := getenv(e); v != "" {
				if err := s.apply(v); err != nil {
					return fmt.Errorf("%s: %w", e, err)
				}
				break
			}
		}
	}
	if err := f.fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ErrHelp
		}
		return err
	}
	if f.fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags start with --; see --help)", f.fs.Arg(0))
	}
	if version {
		return ErrVersion
	}
	return nil
}

// Usage writes the help text: every flag with its variables and default.
func (f *Flags) Usage(w io.Writer, program, summary string) {
	fmt.Fprintf(w, "%s — %s\n\nUsage: %s [flags]\n\nFlags (each also read from the environment variable shown):\n", program, summary, program)
	specs := append([]*flagSpec(nil), f.specs...)
	sort.SliceStable(specs, func(i, j int) bool { return !specs[i].envOnly && specs[j].envOnly })
	for _, s := range specs {
		if s.envOnly {
			fmt.Fprintf(w, "  %-28s %s (environment only; never pass secrets as flags)\n", "$"+s.envs[0], s.usage)
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

// ProgramName is the base name of the running binary.
func ProgramName() string { return filepath.Base(os.Args[0]) }
