package shell

import (
	"regexp"
	"strings"
)

// find has its own grammar: leading options (-H -L -P -D -O), then starting
// points (every argument before the first that begins with "-" or is "(",
// ")", "!" or ","), then an expression of single-dash primaries with a
// fixed number of arguments each. No abbreviations, no clusters.

// findPrimaries maps an allowed primary to its argument count and whether
// that argument names a file.
var findPrimaries = map[string]struct {
	args int
	path bool
}{
	// operators and positional options
	"!": {}, "-not": {}, "-a": {}, "-and": {}, "-o": {}, "-or": {}, ",": {}, "(": {}, ")": {},
	"-depth": {}, "-d": {}, "-mount": {}, "-xdev": {}, "-noleaf": {}, "-daystart": {},
	"-ignore_readdir_race": {}, "-noignore_readdir_race": {}, "-warn": {}, "-nowarn": {},
	"-maxdepth": {args: 1}, "-mindepth": {args: 1}, "-regextype": {args: 1},
	// tests
	"-true": {}, "-false": {}, "-empty": {}, "-executable": {}, "-readable": {}, "-writable": {},
	"-nouser": {}, "-nogroup": {},
	"-name": {args: 1}, "-iname": {args: 1}, "-path": {args: 1}, "-ipath": {args: 1},
	"-wholename": {args: 1}, "-iwholename": {args: 1}, "-regex": {args: 1}, "-iregex": {args: 1},
	"-lname": {args: 1}, "-ilname": {args: 1}, "-type": {args: 1}, "-xtype": {args: 1},
	"-size": {args: 1}, "-perm": {args: 1}, "-user": {args: 1}, "-group": {args: 1},
	"-uid": {args: 1}, "-gid": {args: 1}, "-links": {args: 1}, "-inum": {args: 1},
	"-amin": {args: 1}, "-atime": {args: 1}, "-cmin": {args: 1}, "-ctime": {args: 1},
	"-mmin": {args: 1}, "-mtime": {args: 1}, "-used": {args: 1}, "-fstype": {args: 1}, "-context": {args: 1},
	"-newer": {args: 1, path: true}, "-anewer": {args: 1, path: true}, "-cnewer": {args: 1, path: true},
	"-samefile": {args: 1, path: true},
	// actions that only write to standard output
	"-print": {}, "-print0": {}, "-printf": {args: 1}, "-ls": {}, "-prune": {}, "-quit": {},
	"-help": {}, "--help": {}, "-version": {}, "--version": {},
}

var findDenied = map[string]string{
	"-exec":        "it runs commands",
	"-execdir":     "it runs commands",
	"-ok":          "it runs commands",
	"-okdir":       "it runs commands",
	"-delete":      "it deletes files",
	"-fprint":      "it writes files",
	"-fprint0":     "it writes files",
	"-fprintf":     "it writes files",
	"-fls":         "it writes files",
	"-follow":      whyFollows,
	"-L":           whyFollows,
	"-files0-from": whyFileList,
}

// -newerXY compares with a file unless Y is t (a date string).
var findNewerXY = regexp.MustCompile(`^-newer[aBcm]([aBcmt])$`)

func checkFind(c *checker, args []string) ([]string, error) {
	i := 0
	// Leading options.
	for ; i < len(args); i++ {
		a := args[i]
		if reason, ok := findDenied[a]; ok {
			return nil, invalid("command", "find: flag %s is not allowed: %s", a, reason)
		}
		if a == "-H" || a == "-P" {
			continue
		}
		if a == "-D" || strings.HasPrefix(a, "-O") {
			return nil, invalid("command", "find: flag %s is not allowed (allowed leading options: -H -P)", a)
		}
		break
	}
	// Starting points.
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == ")" || a == "!" || a == "," {
			break
		}
		if err := c.path(a, "find: starting point "+quote(a)); err != nil {
			return nil, err
		}
	}
	// Expression.
	for ; i < len(args); i++ {
		a := args[i]
		if reason, ok := findDenied[a]; ok {
			return nil, invalid("command", "find: flag %s is not allowed: %s", a, reason)
		}
		if m := findNewerXY.FindStringSubmatch(a); m != nil {
			if i+1 >= len(args) {
				return nil, invalid("command", "find: %s needs a value", a)
			}
			i++
			if m[1] != "t" {
				if err := c.path(args[i], "find: the file "+quote(args[i])+" given to "+a); err != nil {
					return nil, err
				}
			}
			continue
		}
		prim, ok := findPrimaries[a]
		if !ok {
			if strings.HasPrefix(a, "-") {
				return nil, invalid("command", "find: %s is not allowed (not on find's list of allowed tests and actions)", a)
			}
			return nil, invalid("command", "find: unexpected argument %q in the expression (starting points come before it)", a)
		}
		if i+prim.args >= len(args) && prim.args > 0 {
			return nil, invalid("command", "find: %s needs a value", a)
		}
		if prim.path {
			if err := c.path(args[i+1], "find: the file "+quote(args[i+1])+" given to "+a); err != nil {
				return nil, err
			}
		}
		i += prim.args
	}
	return args, nil
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
