package cli_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
)

type testFlags struct {
	name    string
	port    int
	verbose bool
	wait    time.Duration
	tags    []string
	paths   []string
	secret  string
}

func newTestFlags() (*cli.Flags, *testFlags) {
	f := cli.NewFlags("prog")
	v := &testFlags{}
	f.String(&v.name, "name", []string{"T_NAME", "T_NAME_OLD"}, "anon", "a name")
	f.Int(&v.port, "port", []string{"T_PORT"}, 80, "a port")
	f.Bool(&v.verbose, "verbose", []string{"T_VERBOSE"}, false, "talk more")
	f.Duration(&v.wait, "wait", []string{"T_WAIT"}, 5*time.Second, "how long")
	f.List(&v.tags, "tag", "T_TAGS", ",", "tags")
	f.List(&v.paths, "path", "T_PATHS", string(os.PathListSeparator), "paths")
	f.Secret(&v.secret, "T_SECRET", "a secret")
	return f, v
}

func TestFlagsDefaults(t *testing.T) {
	f, v := newTestFlags()
	if err := f.Parse(nil, envFrom(nil)); err != nil {
		t.Fatal(err)
	}
	want := testFlags{name: "anon", port: 80, wait: 5 * time.Second}
	if !reflect.DeepEqual(*v, want) {
		t.Fatalf("defaults %+v, want %+v", *v, want)
	}
}

func TestFlagsEnvThenCommandLine(t *testing.T) {
	env := map[string]string{
		"T_NAME": "from-env", "T_NAME_OLD": "from-alias", "T_PORT": "8080", "T_VERBOSE": "1",
		"T_WAIT": "2m", "T_TAGS": " a, b,,c ", "T_PATHS": strings.Join([]string{"/x", "/y"}, string(os.PathListSeparator)),
		"T_SECRET": "hush-0123456789",
	}
	t.Run("environment sets", func(t *testing.T) {
		f, v := newTestFlags()
		if err := f.Parse(nil, envFrom(env)); err != nil {
			t.Fatal(err)
		}
		want := testFlags{name: "from-env", port: 8080, verbose: true, wait: 2 * time.Minute,
			tags: []string{"a", "b", "c"}, paths: []string{"/x", "/y"}, secret: "hush-0123456789"}
		if !reflect.DeepEqual(*v, want) {
			t.Fatalf("got %+v, want %+v", *v, want)
		}
	})
	t.Run("alias used when the first variable is unset or empty", func(t *testing.T) {
		f, v := newTestFlags()
		if err := f.Parse(nil, envFrom(map[string]string{"T_NAME": "", "T_NAME_OLD": "from-alias"})); err != nil {
			t.Fatal(err)
		}
		if v.name != "from-alias" {
			t.Fatalf("name %q", v.name)
		}
	})
	t.Run("command line overrides", func(t *testing.T) {
		f, v := newTestFlags()
		args := []string{"--name", "cli", "-port=9", "--verbose=false", "--wait", "1s", "--tag", "x", "--tag=y", "--path", "/z"}
		if err := f.Parse(args, envFrom(env)); err != nil {
			t.Fatal(err)
		}
		want := testFlags{name: "cli", port: 9, verbose: false, wait: time.Second,
			tags: []string{"x", "y"}, paths: []string{"/z"}, secret: "hush-0123456789"}
		if !reflect.DeepEqual(*v, want) {
			t.Fatalf("got %+v, want %+v", *v, want)
		}
	})
	t.Run("list from the command line without env", func(t *testing.T) {
		f, v := newTestFlags()
		if err := f.Parse([]string{"--tag", "x", "--tag", "y"}, envFrom(nil)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.tags, []string{"x", "y"}) {
			t.Fatalf("tags %q", v.tags)
		}
	})
	t.Run("empty list env", func(t *testing.T) {
		f, v := newTestFlags()
		if err := f.Parse(nil, envFrom(map[string]string{"T_TAGS": " , ,"})); err != nil {
			t.Fatal(err)
		}
		if len(v.tags) != 0 {
			t.Fatalf("tags %q", v.tags)
		}
	})
}

func TestFlagsErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad bool env", nil, map[string]string{"T_VERBOSE": "maybe"}, `T_VERBOSE="maybe": want true or false`},
		{"bad int env", nil, map[string]string{"T_PORT": "eighty"}, `T_PORT="eighty": want a whole number`},
		{"bad duration env", nil, map[string]string{"T_WAIT": "soon"}, `T_WAIT="soon": want a duration`},
		{"bad alias env", nil, map[string]string{"T_NAME_OLD": "ok", "T_PORT": "1.5"}, "T_PORT"},
		{"unknown flag", []string{"--nmae", "x"}, nil, "nmae"},
		{"secret on the command line", []string{"--T_SECRET", "x"}, nil, "T_SECRET"},
		{"stray argument", []string{"--name", "x", "oops"}, nil, `unexpected argument "oops"`},
		{"bad int flag", []string{"--port", "x"}, nil, "port"},
		{"missing value", []string{"--name"}, nil, "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newTestFlags()
			err := f.Parse(tc.args, envFrom(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
			if errors.Is(err, cli.ErrHelp) || errors.Is(err, cli.ErrVersion) {
				t.Fatalf("a mistake reported as a request: %v", err)
			}
		})
	}
	t.Run("a bad env value fails even when the flag is given", func(t *testing.T) {
		f, _ := newTestFlags()
		if err := f.Parse([]string{"--port", "1"}, envFrom(map[string]string{"T_PORT": "x"})); err == nil {
			t.Fatal("a malformed variable must not be silently ignored")
		}
	})
}

func TestFlagsHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--name", "x", "--help"}} {
		f, _ := newTestFlags()
		if err := f.Parse(args, envFrom(nil)); !errors.Is(err, cli.ErrHelp) {
			t.Fatalf("%v: err %v, want ErrHelp", args, err)
		}
	}
	f, _ := newTestFlags()
	if err := f.Parse([]string{"--version"}, envFrom(nil)); !errors.Is(err, cli.ErrVersion) {
		t.Fatalf("err %v, want ErrVersion", err)
	}
	f, _ = newTestFlags()
	if err := f.Parse([]string{"--version", "extra"}, envFrom(nil)); err == nil || errors.Is(err, cli.ErrVersion) {
		t.Fatalf("a stray argument must win over --version, got %v", err)
	}
}

func TestFlagsUsage(t *testing.T) {
	f, _ := newTestFlags()
	// Values from the environment are never shown: only declared defaults.
	if err := f.Parse(nil, envFrom(map[string]string{"T_SECRET": "hush-0123456789", "T_NAME": "env-name"})); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	f.Usage(&b, "prog", "does things")
	out := b.String()
	if !strings.HasPrefix(out, "prog — does things\n\nUsage: prog [flags]\n") {
		t.Fatalf("header %q", strings.SplitN(out, "\n", 4))
	}
	lineOf := func(prefix string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return l
			}
		}
		t.Fatalf("no line starting %q in:\n%s", prefix, out)
		return ""
	}
	checks := map[string][]string{
		"--name value":  {"a name", "[$T_NAME, $T_NAME_OLD]", "(default anon)"},
		"--port value":  {"[$T_PORT]", "(default 80)"},
		"--wait value":  {"[$T_WAIT]", "(default 5s)"},
		"--tag value":   {"[$T_TAGS]"},
		"--verbose":     {"[$T_VERBOSE]"},
		"$T_SECRET":     {"a secret", "environment only"},
		"--version":     {"print version"},
		"--help":        {"print this help"},
		"--path value ": {"[$T_PATHS]"},
	}
	for prefix, wants := range checks {
		l := lineOf(prefix)
		for _, w := range wants {
			if !strings.Contains(l, w) {
				t.Errorf("line %q lacks %q", l, w)
			}
		}
	}
	if strings.Contains(lineOf("--verbose"), "default") || strings.Contains(lineOf("--tag value"), "default") {
		t.Error("false and empty defaults should not be shown")
	}
	if strings.Contains(lineOf("--verbose"), "value") {
		t.Error("a boolean flag takes no value")
	}
	if strings.Contains(out, "hush") || strings.Contains(out, "env-name") {
		t.Fatalf("usage shows environment values:\n%s", out)
	}
	if strings.Contains(out, "--T_SECRET") {
		t.Fatal("a secret is listed as a flag")
	}
	if strings.Index(out, "$T_SECRET") < strings.Index(out, "--path") {
		t.Fatal("environment-only entries should follow the flags")
	}
}

func TestFlagsDuplicatePanics(t *testing.T) {
	f := cli.NewFlags("prog")
	var a, b string
	f.String(&a, "x", nil, "", "")
	defer func() {
		if recover() == nil {
			t.Fatal("registering a flag twice must panic")
		}
	}()
	f.Secret(&b, "x", "")
}

// TestListFlagSplitsCommandLineValue: "--tools a,b" is two names, as the
// help text promises, and repeating the flag adds more.
func TestListFlagSplitsCommandLineValue(t *testing.T) {
	var got []string
	f := cli.NewFlags("x")
	f.List(&got, "tools", "X_TOOLS", ",", "tools")
	if err := f.Parse([]string{"--tools", "a, b", "--tools=c"}, func(string) string { return "z" }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "a|b|c" {
		t.Fatalf("got %q", got)
	}
}

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
