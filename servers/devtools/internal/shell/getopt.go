package shell

import (
	"fmt"
	"sort"
	"strings"
)

// The flag checker mirrors how GNU getopt_long (coreutils, grep) and git's
// parse-options read an argument list, so that what is checked is what the
// program will see:
//
//   - options may appear anywhere before "--" (GNU permutes them);
//   - "-abc" is a cluster of short options; the first one that takes a
//     value swallows the rest of the cluster ("-ofile") or, if nothing is
//     left, the next argument;
//   - "--name=value" or, for a required value, "--name value";
//   - an optional value is only ever attached ("-u<mode>", "--color=x").
//
// Flags are allowlisted per program. Abbreviated long options, which both
// getopt_long and git accept as unique prefixes, are refused: the program
// may know options this table does not, so only an exact spelling tells
// for certain which option the program will pick. A prefix of a refused
// option is reported as such ("--compress-prog is an abbreviation of
// --compress-program, which is not allowed: …").

type argMode uint8

const (
	noArg argMode = iota
	reqArg
	optArg
	// lastArgDefault is git's PARSE_OPT_LASTARG_DEFAULT: the option takes
	// the next argument as its value unless it is the last argument.
	lastArgDefault
)

type valueKind uint8

// The zero valueKind is plain text.
const (
	// pathValue values name a file the program reads; they are checked
	// against the roots like path operands.
	pathValue valueKind = iota + 1
)

type flagSpec struct {
	mode argMode
	kind valueKind
}

// flagSet is the allowlist of one program (or git subcommand).
type flagSet struct {
	short       map[byte]flagSpec
	long        map[string]flagSpec
	deniedShort map[byte]string
	deniedLong  map[string]string
	// digits accepts "-NUM" (head -5, git log -3, grep -2) as one flag.
	digits bool
}

// flags builds a flagSet from compact specs: "-n" (no value), "-n="
// (required value), "-n?" (optional, attached), "-n~" (git's last-argument
// default), and a "@" suffix after = marks a file-path value ("-f=@").
func flags(specs ...string) *flagSet {
	fs := &flagSet{short: map[byte]flagSpec{}, long: map[string]flagSpec{},
		deniedShort: map[byte]string{}, deniedLong: map[string]string{}}
	return fs.add(specs...)
}

func (fs *flagSet) add(specs ...string) *flagSet {
	for _, s := range specs {
		var sp flagSpec
		if strings.HasSuffix(s, "@") {
			sp.kind = pathValue
			s = s[:len(s)-1]
		}
		switch s[len(s)-1] {
		case '=':
			sp.mode = reqArg
			s = s[:len(s)-1]
		case '?':
			sp.mode = optArg
			s = s[:len(s)-1]
		case '~':
			sp.mode = lastArgDefault
			s = s[:len(s)-1]
		}
		switch {
		case strings.HasPrefix(s, "--"):
			fs.long[s[2:]] = sp
		case len(s) == 2 && s[0] == '-':
			fs.short[s[1]] = sp
		default:
			panic("shell: bad flag spec " + s)
		}
	}
	return fs
}

// deny records flags refused with a reason. Denied flags need not be in
// the allowlist (they are refused anyway); listing them gives the caller
// the reason and lets abbreviations of them be recognised.
func (fs *flagSet) deny(reason string, names ...string) *flagSet {
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "--"):
			fs.deniedLong[n[2:]] = reason
		case len(n) == 2 && n[0] == '-':
			fs.deniedShort[n[1]] = reason
		default:
			panic("shell: bad denied flag " + n)
		}
	}
	return fs
}

func (fs *flagSet) withDigits() *flagSet { fs.digits = true; return fs }

// parsed is an argument list as the program will read it.
type parsed struct {
	// seen holds the canonical names of the flags given ("-e", "--regexp").
	seen map[string]bool
	// operands are the non-flag arguments, in order.
	operands []string
	// paths are flag values that name files ("-f" of grep).
	paths []flagValue
}

type flagValue struct {
	flag, value string
}

func (p *parsed) has(names ...string) bool {
	for _, n := range names {
		if p.seen[n] {
			return true
		}
	}
	return false
}

// parse checks args against fs; prog names the program in messages.
func (fs *flagSet) parse(prog string, args []string) (*parsed, error) {
	p := &parsed{seen: map[string]bool{}}
	endOpts := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if endOpts || a == "-" || !strings.HasPrefix(a, "-") {
			p.operands = append(p.operands, a)
			continue
		}
		if a == "--" {
			endOpts = true
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			sp, err := fs.lookupLong(prog, name)
			if err != nil {
				return nil, err
			}
			switch sp.mode {
			case noArg:
				if hasVal {
					return nil, invalid("command", "%s: flag --%s takes no value", prog, name)
				}
			case reqArg:
				if !hasVal {
					if i+1 >= len(args) {
						return nil, invalid("command", "%s: flag --%s needs a value", prog, name)
					}
					i++
					val, hasVal = args[i], true
				}
			case lastArgDefault:
				if !hasVal && i+1 < len(args) {
					i++
					val, hasVal = args[i], true
				}
			}
			p.seen["--"+name] = true
			if hasVal && sp.kind == pathValue {
				p.paths = append(p.paths, flagValue{"--" + name, val})
			}
			continue
		}
		// A cluster of short options.
		if fs.digits && isDigits(a[1:]) {
			p.seen["-NUM"] = true
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			in := ""
			if len(a) > 2 {
				in = fmt.Sprintf(" (in %q)", a)
			}
			if reason, ok := fs.deniedShort[c]; ok {
				return nil, invalid("command", "%s: flag -%c%s is not allowed: %s", prog, c, in, reason)
			}
			sp, ok := fs.short[c]
			if !ok {
				return nil, invalid("command", "%s: flag -%s%s is not allowed%s", prog, printable(c), in, fs.hint())
			}
			p.seen["-"+string(c)] = true
			if sp.mode == noArg {
				continue
			}
			val, hasVal := a[j+1:], j+1 < len(a)
			if !hasVal && (sp.mode == reqArg || (sp.mode == lastArgDefault && i+1 < len(args))) {
				if i+1 >= len(args) {
					return nil, invalid("command", "%s: flag -%c needs a value", prog, c)
				}
				i++
				val, hasVal = args[i], true
			}
			if hasVal && sp.kind == pathValue {
				p.paths = append(p.paths, flagValue{"-" + string(c), val})
			}
			break
		}
	}
	return p, nil
}

func (fs *flagSet) lookupLong(prog, name string) (flagSpec, error) {
	if reason, ok := fs.deniedLong[name]; ok {
		return flagSpec{}, invalid("command", "%s: flag --%s is not allowed: %s", prog, name, reason)
	}
	if sp, ok := fs.long[name]; ok {
		return sp, nil
	}
	if name != "" {
		for _, d := range sortedKeys(fs.deniedLong) {
			if strings.HasPrefix(d, name) {
				return flagSpec{}, invalid("command", "%s: flag --%s is an abbreviation of --%s, which is not allowed: %s",
					prog, name, d, fs.deniedLong[d])
			}
		}
		var full []string
		for _, l := range sortedKeys(fs.long) {
			if strings.HasPrefix(l, name) {
				full = append(full, "--"+l)
			}
		}
		if len(full) > 0 {
			return flagSpec{}, invalid("command", "%s: abbreviated flag --%s is not accepted; write the flag in full (%s)",
				prog, name, strings.Join(full, " or "))
		}
	}
	return flagSpec{}, invalid("command", "%s: flag --%s is not allowed%s", prog, name, fs.hint())
}

// hint ends a "not allowed" message with the allowlist when it is short
// enough to read.
func (fs *flagSet) hint() string {
	var all []string
	for _, c := range sortedKeys(fs.short) {
		all = append(all, "-"+string(c))
	}
	for _, l := range sortedKeys(fs.long) {
		all = append(all, "--"+l)
	}
	if len(all) == 0 {
		return " (this program takes no flags)"
	}
	if len(all) > 40 {
		return " (not on this program's list of allowed flags)"
	}
	return " (allowed: " + strings.Join(all, " ") + ")"
}

func sortedKeys[K ~byte | ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

func printable(c byte) string {
	if c >= 0x21 && c < 0x7f {
		return string(c)
	}
	return fmt.Sprintf("\\x%02x", c)
}
