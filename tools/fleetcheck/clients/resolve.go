package clients

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Launch is what a client does for an entry, with every variable and
// placeholder replaced: the process it starts (stdio) or the endpoint and
// headers it sends (HTTP).
type Launch struct {
	Command string
	Args    []string
	Env     []string // KEY=VALUE, sorted; added to the client's own environment

	URL     string
	Headers map[string]string
}

// Resolve expands t's entry as its client would, with v giving the
// variables' values, and puts bins[server] in place of the binary under the
// checkout (so a test may run binaries it built elsewhere). Containers and
// the mcp-remote bridge are not resolved: they need a container runtime or
// Node.js.
func Resolve(t Target, v Vars, bins map[string]string) (Launch, error) {
	c := t.File.Client
	var l Launch
	var err error
	expand := func(s string) string {
		if err != nil {
			return ""
		}
		var out string
		out, err = Expand(c, s, v)
		return out
	}
	switch t.Via {
	case ViaBinary:
		bin, ok := bins[t.Server]
		if !ok {
			return Launch{}, fmt.Errorf("no binary of %s given", t.Server)
		}
		l.Command = bin
		for _, a := range t.Entry.Args {
			l.Args = append(l.Args, expand(a))
		}
		for _, k := range slices.Sorted(maps.Keys(t.Entry.Env)) {
			l.Env = append(l.Env, k+"="+expand(t.Entry.Env[k]))
		}
		sort.Strings(l.Env)
	case ViaHTTP:
		l.URL = expand(t.Entry.URL)
		l.Headers = map[string]string{}
		for k, h := range t.Entry.Headers {
			l.Headers[k] = expand(h)
		}
	default:
		return Launch{}, fmt.Errorf("%s: %s entries are not started by these checks", t.Entry.Name, t.Via)
	}
	if err != nil {
		return Launch{}, fmt.Errorf("%s: %s: %w", t.File.Path, t.Entry.Name, err)
	}
	for _, s := range append(append([]string{l.URL}, l.Args...), l.Env...) {
		if strings.Contains(s, "/abs/path/to/") {
			return Launch{}, fmt.Errorf("%s: %s: %q still names a placeholder path", t.File.Path, t.Entry.Name, s)
		}
	}
	return l, nil
}
