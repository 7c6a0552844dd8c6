package clients

import (
	"fmt"
	"regexp"
	"strings"
)

// Placeholders the configuration files use for what differs per machine;
// every client sees them as plain text, so a person replaces them.
const (
	// RootPlaceholder stands for the absolute path of the mcp-fleet checkout.
	RootPlaceholder = "/abs/path/to/mcp-fleet"
	// ProjectPlaceholder stands for the project devtools works on.
	ProjectPlaceholder = "/abs/path/to/project"
)

// Ref is one variable reference (`${…}`) in a configuration value.
type Ref struct {
	Raw  string // as written, e.g. ${env:AVINODE_MCP_TOKEN}
	Kind string // "env", "input", "workspaceFolder", "userHome"
	Name string // the variable or input id ("" for the folder kinds)
}

var refPattern = regexp.MustCompile(`\$\{([^}]*)\}`)
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Refs lists the variable references in s as client c reads them. A
// reference c does not expand is an error: the client would pass it on as
// literal text.
func Refs(c Client, s string) ([]Ref, error) {
	var out []Ref
	for _, m := range refPattern.FindAllStringSubmatch(s, -1) {
		r, err := parseRef(c, m[0], m[1])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRef(c Client, raw, body string) (Ref, error) {
	switch c {
	case ClaudeCode:
		// ${NAME} and ${NAME:-default}, from the environment.
		name, _, _ := strings.Cut(body, ":-")
		if envName.MatchString(name) {
			return Ref{Raw: raw, Kind: "env", Name: name}, nil
		}
	case Cursor, VSCode:
		switch {
		case body == "workspaceFolder":
			return Ref{Raw: raw, Kind: "workspaceFolder"}, nil
		case body == "userHome":
			return Ref{Raw: raw, Kind: "userHome"}, nil
		case strings.HasPrefix(body, "env:") && envName.MatchString(body[4:]):
			return Ref{Raw: raw, Kind: "env", Name: body[4:]}, nil
		case c == VSCode && strings.HasPrefix(body, "input:") && len(body) > 6:
			return Ref{Raw: raw, Kind: "input", Name: body[6:]}, nil
		}
	}
	return Ref{}, fmt.Errorf("%s does not expand %s", c, raw)
}

// Vars are the values a test gives the variables and placeholders.
type Vars struct {
	Root    string            // replaces RootPlaceholder
	Project string            // replaces ProjectPlaceholder and ${workspaceFolder}
	Home    string            // ${userHome}
	Env     map[string]string // the client's environment
	Inputs  map[string]string // what the user typed for each VS Code input
	Literal map[string]string // other placeholders (e.g. "<AVINODE_MCP_TOKEN>") and their values
}

// Expand does what client c does to a configuration value, then replaces
// the placeholders. A variable without a value is an error, as it would
// reach the server as an empty string.
func Expand(c Client, s string, v Vars) (string, error) {
	var firstErr error
	out := refPattern.ReplaceAllStringFunc(s, func(raw string) string {
		r, err := parseRef(c, raw, raw[2:len(raw)-1])
		if err != nil {
			firstErr = err
			return raw
		}
		var val string
		var ok bool
		switch r.Kind {
		case "env":
			val, ok = v.Env[r.Name]
			if !ok && c == ClaudeCode {
				if _, def, has := strings.Cut(raw[2:len(raw)-1], ":-"); has {
					val, ok = def, true
				}
			}
		case "input":
			val, ok = v.Inputs[r.Name]
		case "workspaceFolder":
			val, ok = v.Project, v.Project != ""
		case "userHome":
			val, ok = v.Home, v.Home != ""
		}
		if !ok && firstErr == nil {
			firstErr = fmt.Errorf("%s has no value", raw)
		}
		return val
	})
	if firstErr != nil {
		return "", firstErr
	}
	if v.Root != "" {
		out = strings.ReplaceAll(out, RootPlaceholder, v.Root)
	}
	if v.Project != "" {
		out = strings.ReplaceAll(out, ProjectPlaceholder, v.Project)
	}
	for k, val := range v.Literal {
		out = strings.ReplaceAll(out, k, val)
	}
	return out, nil
}
