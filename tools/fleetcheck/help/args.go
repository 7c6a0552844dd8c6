package help

import (
	"fmt"
	"os"
	"strings"
)

// ParseArgs reads a command line meant for the server against its --help:
// every argument a flag it lists, with its value when it takes one. It
// returns the value of each flag given (a switch given bare is "true"; a
// repeatable flag's values join as a path list) and, one sentence each,
// what the server would refuse or what would keep it from serving.
func (s *Server) ParseArgs(args []string) (vals map[string]string, problems []string) {
	vals = map[string]string{}
	problem := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "--") {
			problem("argument %q is not a --flag (%s takes no positional arguments)", arg, s.Program)
			continue
		}
		name, val, hasVal := strings.Cut(arg[2:], "=")
		f, ok := s.Flags[name]
		switch {
		case !ok:
			problem("--%s is not a flag of %s (see %s --help)", name, s.Program, s.Program)
			continue
		case name == "help" || name == "version":
			problem("--%s makes %s print and exit instead of serving", name, s.Program)
			continue
		case f.TakesValue && !hasVal:
			if i+1 >= len(args) {
				problem("--%s needs a value", name)
				continue
			}
			i++
			val = args[i]
		case !f.TakesValue && !hasVal:
			val = "true"
		case !f.TakesValue && val != "true" && val != "false":
			problem("--%s is a switch: --%s, or --%s=true|false, not %q", name, name, name, val)
		}
		if prev, dup := vals[name]; dup && f.Repeatable {
			val = prev + string(os.PathListSeparator) + val
		} else if dup {
			problem("--%s given twice", name)
		}
		vals[name] = val
	}
	return vals, problems
}
