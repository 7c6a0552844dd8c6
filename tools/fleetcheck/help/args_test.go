package help

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	acl := "  --acl value                  policy file; repeat --acl for more [$MCP_ACL]\n"
	s, err := Parse(strings.Replace(sample, "  --version ", acl+"  --version ", 1))
	if err != nil || !s.Flags["acl"].Repeatable {
		t.Fatalf("%+v, %v", s, err)
	}
	list := string(os.PathListSeparator)
	for _, tc := range []struct {
		name     string
		args     []string
		vals     map[string]string
		problems []string
	}{
		{"values, joined and bare", []string{"--transport", "http", "--port=3001", "--read-only", "--acl", "a.yaml", "--acl=b.yaml"},
			map[string]string{"transport": "http", "port": "3001", "read-only": "true", "acl": "a.yaml" + list + "b.yaml"}, nil},
		{"switch set explicitly", []string{"--read-only=false"}, map[string]string{"read-only": "false"}, nil},
		{"positional", []string{"serve"}, map[string]string{},
			[]string{`argument "serve" is not a --flag (demo-mcp takes no positional arguments)`}},
		{"unknown", []string{"--operators", "3"}, map[string]string{},
			[]string{"--operators is not a flag of demo-mcp (see demo-mcp --help)", `argument "3" is not a --flag (demo-mcp takes no positional arguments)`}},
		{"print and exit", []string{"--version", "--help"}, map[string]string{},
			[]string{"--version makes demo-mcp print and exit instead of serving", "--help makes demo-mcp print and exit instead of serving"}},
		{"missing value", []string{"--port"}, map[string]string{}, []string{"--port needs a value"}},
		{"switch with a value", []string{"--read-only=yes"}, map[string]string{"read-only": "yes"},
			[]string{`--read-only is a switch: --read-only, or --read-only=true|false, not "yes"`}},
		{"twice", []string{"--port", "1", "--port=2"}, map[string]string{"port": "2"}, []string{"--port given twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals, problems := s.ParseArgs(tc.args)
			if !reflect.DeepEqual(vals, tc.vals) || !reflect.DeepEqual(problems, tc.problems) {
				t.Errorf("ParseArgs(%q)\n got %v %q\nwant %v %q", tc.args, vals, problems, tc.vals, tc.problems)
			}
		})
	}
}
