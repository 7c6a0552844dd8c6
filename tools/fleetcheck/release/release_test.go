package release

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

// TestShippedConfig holds the repository's .goreleaser.yaml to the rules.
func TestShippedConfig(t *testing.T) {
	c, err := Load(filepath.Join(testbin.Root(t), ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if problems := Check(c, testbin.Root(t), testbin.Servers); len(problems) > 0 {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if len(c.Builds) != len(testbin.Servers) || c.ProjectName != "mcp-fleet" {
		t.Errorf("%d builds, project %q", len(c.Builds), c.ProjectName)
	}
}

func TestCheckFindsMistakes(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"version", func(c *Config) { c.Version = 1 }, []string{"want 2"}},
		{"a server left out", func(c *Config) { c.Builds = c.Builds[1:] }, []string{`no build with id "avinode"`}},
		{"a build that is no server", func(c *Config) { c.Builds = append(c.Builds, Build{ID: "extra"}) }, []string{`"extra" is no server`}},
		{"main and binary", func(c *Config) { c.Builds[0].Main = "./cmd/avinode"; c.Builds[1].Binary = "gmail" }, []string{"builds.avinode: main", `binary "gmail"`}},
		{"main that does not exist", func(c *Config) {
			c.Builds[0].Main = "./servers/avinode/cmd/avinode-mcp"
			c.Builds[0].Dir = "."
			c.Builds[2].Dir = "servers"
		}, []string{"builds.sheets: main"}},
		{"cgo, trimpath, skip", func(c *Config) {
			c.Builds[0].Env = nil
			c.Builds[0].Flags = nil
			c.Builds[1].Skip = true
		}, []string{"lacks CGO_ENABLED=0", "lack -trimpath", "builds.gmail: skipped"}},
		{"ldflags", func(c *Config) {
			c.Builds[0].Ldflags = []string{"-s -w -X " + VersionVar + "=1.0"}
			c.Builds[1].Ldflags = []string{"-X " + VersionVar + "={{ .Version }} -X " + CommitVar + "={{ .ShortCommit }} -X main.date={{ .Date }}"}
			c.Builds[2].Ldflags = []string{"-s -w -X main.version={{ .Version }} -X main.commit={{ .ShortCommit }}"}
		}, []string{"builds.avinode: ldflags \"-s -w -X " + VersionVar + "=1.0\" do not set " + VersionVar,
			"builds.avinode: ldflags \"-s -w -X " + VersionVar + "=1.0\" do not set " + CommitVar, "template {{ .Date }}",
			"builds.sheets: ldflags \"-s -w -X main.version={{ .Version }} -X main.commit={{ .ShortCommit }}\" do not set " + VersionVar}},
		{"platforms", func(c *Config) {
			c.Builds[0].Goos = []string{"linux", "darwin"}
			c.Builds[1].Ignore = append(c.Builds[1].Ignore, struct {
				Goos   string `yaml:"goos"`
				Goarch string `yaml:"goarch"`
			}{Goos: "windows", Goarch: "arm64"})
		}, []string{"builds.avinode: windows/amd64 is not built", "builds.gmail: windows/arm64 is not built"}},
		{"a server without an archive", func(c *Config) { c.Archives = c.Archives[1:] }, []string{"server avinode is in 0 archives"}},
		{"archives", func(c *Config) {
			c.Archives[0].IDs = nil
			c.Archives[1].NameTemplate = "server"
			c.Archives[1].FormatOverrides = nil
			c.Archives[2].Files = []string{"NO-SUCH-FILE"}
			c.Archives[3].IDs = []string{"supabase", "devtools"}
		}, []string{"archives.avinode: no ids", "tells neither the server nor the platform", "Windows archives should be zip",
			"file NO-SUCH-FILE does not exist", "server devtools is in 2 archives"}},
		{"checksum", func(c *Config) { c.Checksum.Algorithm = "md5" }, []string{"checksum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(filepath.Join(testbin.Root(t), ".goreleaser.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			tt.change(c)
			got := strings.Join(Check(c, testbin.Root(t), testbin.Servers), "\n")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("no problem mentions %q; got:\n%s", w, got)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("builds: {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil {
		t.Error("bad YAML loaded")
	}
}

func TestRender(t *testing.T) {
	v := Values{Version: "1.2.3", Commit: "0123456789abcdef", ShortCommit: "0123456", CommitTimestamp: "1700000000"}
	got, err := Render("-X main.version={{ .Version }} -X main.commit={{.ShortCommit}} {{ .Commit }} {{ .FullCommit }} {{ .CommitTimestamp }}", v)
	if err != nil || got != "-X main.version=1.2.3 -X main.commit=0123456 0123456789abcdef 0123456789abcdef 1700000000" {
		t.Errorf("%q %v", got, err)
	}
	for _, s := range []string{"{{ .Env.X }}", "{{ incpatch .Version }}", "{{ .Date }}"} {
		if _, err := Render(s, v); err == nil {
			t.Errorf("%s rendered", s)
		}
	}
}

// TestBuildAndInspect builds a small program for this machine and two
// others with a configuration's flags, and inspects what came out.
func TestBuildAndInspect(t *testing.T) {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{Builds: []Build{{ID: "tiny", Main: "./testdata/tiny", Binary: "tiny-mcp", Env: []string{"CGO_ENABLED=0"},
		Flags: []string{"-trimpath"}, Ldflags: []string{"-s -w -X " + VersionVar + "={{ .Version }} -X " + CommitVar + "={{ .ShortCommit }}"}}}}
	v := Values{Version: "0.0.0-test", Commit: "0123456789abcdef0123456789abcdef01234567", ShortCommit: "0123456"}
	ctx := context.Background()
	out := t.TempDir()
	for _, target := range [][2]string{{runtime.GOOS, runtime.GOARCH}, {"darwin", "arm64"}, {"windows", "amd64"}, {"linux", "arm64"}} {
		built, err := BuildAll(ctx, c, dir, out, target[0], target[1], v)
		if err != nil {
			t.Fatal(err)
		}
		if len(built) != 1 {
			t.Fatalf("%v: built %v", target, built)
		}
		if problems := Inspect(ctx, built[0], v); len(problems) > 0 {
			t.Errorf("%v: %v", target, problems)
		}
		if target[0] == "windows" && !strings.HasSuffix(built[0].Path, ".exe") {
			t.Errorf("windows binary %s", built[0].Path)
		}
	}

	// The same binary judged against other expectations.
	built, err := BuildAll(ctx, c, dir, out, runtime.GOOS, runtime.GOARCH, v)
	if err != nil {
		t.Fatal(err)
	}
	b := built[0]
	other := v
	other.Version, other.ShortCommit = "9.9.9", "fffffff"
	got := strings.Join(Inspect(ctx, b, other), "\n")
	for _, w := range []string{`the version "9.9.9" is not in the binary`, "--version:"} {
		if !strings.Contains(got, w) {
			t.Errorf("no problem mentions %q; got:\n%s", w, got)
		}
	}
	for _, wrong := range []Built{{Server: "tiny", Path: b.Path, GOOS: "darwin", GOARCH: "arm64"}, {Server: "tiny", Path: b.Path, GOOS: "windows", GOARCH: "amd64"},
		{Server: "tiny", Path: b.Path, GOOS: runtime.GOOS, GOARCH: "arm64"}, {Server: "tiny", Path: b.Path, GOOS: "plan9", GOARCH: "amd64"}} {
		if problems := Inspect(ctx, wrong, v); len(problems) == 0 {
			t.Errorf("a %s/%s binary passed as %s/%s", runtime.GOOS, runtime.GOARCH, wrong.GOOS, wrong.GOARCH)
		}
	}
	if problems := Inspect(ctx, Built{Path: filepath.Join(out, "missing")}, v); len(problems) == 0 {
		t.Error("a missing binary passed")
	}

	// Built with cgo allowed and without -trimpath: the build info tells.
	loose := &Config{Builds: []Build{{ID: "tiny", Main: "./testdata/tiny", Binary: "tiny-mcp", Env: []string{"CGO_ENABLED=1"},
		Ldflags: c.Builds[0].Ldflags}}}
	built, err = BuildAll(ctx, loose, dir, t.TempDir(), runtime.GOOS, runtime.GOARCH, v)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Inspect(ctx, built[0], v), "\n"); !strings.Contains(got, "-trimpath=") {
		t.Errorf("problems: %s", got)
	}

	if _, err := BuildAll(ctx, &Config{Builds: []Build{{ID: "x", Main: "./testdata/none", Binary: "x"}}}, dir, out, runtime.GOOS, runtime.GOARCH, v); err == nil {
		t.Error("a build of nothing succeeded")
	}
	if _, err := BuildAll(ctx, &Config{Builds: []Build{{ID: "x", Ldflags: []string{"{{ .Date }}"}}}}, dir, out, runtime.GOOS, runtime.GOARCH, v); err == nil {
		t.Error("a build with an unknown template ran")
	}
}
