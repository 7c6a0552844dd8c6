// Package release checks the GoReleaser configuration (.goreleaser.yaml)
// without GoReleaser: Load reads the parts that decide what is built and
// shipped, Check holds them to the fleet's rules (every server, every
// platform, static builds with version and commit, one archive per server,
// checksums), and Build compiles every server for a chosen platform with
// exactly the configuration's environment, flags and rendered ldflags, the
// way GoReleaser's Go builder does.
package release

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// VersionVar and CommitVar are the variables every server reads its version
// and commit from; the ldflags set them with -X.
const (
	VersionVar = "github.com/mcp-fleet/mcp-fleet/shared/buildinfo.version"
	CommitVar  = "github.com/mcp-fleet/mcp-fleet/shared/buildinfo.commit"
)

// Config is the part of a GoReleaser v2 configuration these checks read.
type Config struct {
	Version     int       `yaml:"version"`
	ProjectName string    `yaml:"project_name"`
	Builds      []Build   `yaml:"builds"`
	Archives    []Archive `yaml:"archives"`
	Checksum    struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
		Disable      bool   `yaml:"disable"`
	} `yaml:"checksum"`
}

// Build is one entry of builds.
type Build struct {
	ID      string   `yaml:"id"`
	Dir     string   `yaml:"dir"`
	Main    string   `yaml:"main"`
	Binary  string   `yaml:"binary"`
	Env     []string `yaml:"env"`
	Flags   []string `yaml:"flags"`
	Ldflags []string `yaml:"ldflags"`
	Goos    []string `yaml:"goos"`
	Goarch  []string `yaml:"goarch"`
	Ignore  []struct {
		Goos   string `yaml:"goos"`
		Goarch string `yaml:"goarch"`
	} `yaml:"ignore"`
	Skip    bool   `yaml:"skip"`
	Builder string `yaml:"builder"`
}

// Archive is one entry of archives.
type Archive struct {
	ID              string   `yaml:"id"`
	IDs             []string `yaml:"ids"`
	NameTemplate    string   `yaml:"name_template"`
	Formats         []string `yaml:"formats"`
	FormatOverrides []struct {
		Goos    string   `yaml:"goos"`
		Formats []string `yaml:"formats"`
	} `yaml:"format_overrides"`
	Files []string `yaml:"files"`
}

// Load reads a configuration file.
func Load(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// The platforms every server is released for.
var (
	Platforms = []string{"linux", "darwin", "windows"}
	Arches    = []string{"amd64", "arm64"}
)

// Check holds the configuration to the fleet's rules; servers are the
// servers' names and root the repository (for mains and archived files).
func Check(c *Config, root string, servers []string) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if c.Version != 2 {
		fail("version: %d, want 2 (GoReleaser v2)", c.Version)
	}
	byID := map[string]Build{}
	for _, b := range c.Builds {
		byID[b.ID] = b
	}
	for _, s := range servers {
		b, ok := byID[s]
		if !ok {
			fail("builds: no build with id %q", s)
			continue
		}
		delete(byID, s)
		want := fmt.Sprintf("./servers/%s/cmd/%s-mcp", s, s)
		if b.Main != want || (b.Dir != "" && b.Dir != ".") {
			fail("builds.%s: main %q (dir %q), want %q from the repository root (the workspace)", s, b.Main, b.Dir, want)
		} else if _, err := os.Stat(filepath.Join(root, want, "main.go")); err != nil {
			fail("builds.%s: %v", s, err)
		}
		if b.Binary != s+"-mcp" {
			fail("builds.%s: binary %q, want %q", s, b.Binary, s+"-mcp")
		}
		if b.Skip || (b.Builder != "" && b.Builder != "go") {
			fail("builds.%s: skipped or not the Go builder", s)
		}
		if !slices.Contains(b.Env, "CGO_ENABLED=0") {
			fail("builds.%s: env %v lacks CGO_ENABLED=0 (static binaries)", s, b.Env)
		}
		if !slices.Contains(b.Flags, "-trimpath") {
			fail("builds.%s: flags %v lack -trimpath", s, b.Flags)
		}
		ld := strings.Join(b.Ldflags, " ")
		for _, sym := range []string{VersionVar, CommitVar} {
			if !regexp.MustCompile(`-X ` + regexp.QuoteMeta(sym) + `=\{\{\s*\.\w+\s*\}\}`).MatchString(ld) {
				fail("builds.%s: ldflags %q do not set %s from a template (-X %s={{ .Version }})", s, ld, sym, sym)
			}
		}
		if _, err := Render(ld, Values{}); err != nil {
			fail("builds.%s: %v", s, err)
		}
		for _, goos := range Platforms {
			for _, arch := range Arches {
				if !b.targets(goos, arch) {
					fail("builds.%s: %s/%s is not built", s, goos, arch)
				}
			}
		}
	}
	for id := range byID {
		fail("builds: %q is no server", id)
	}
	archived := map[string]int{}
	for _, a := range c.Archives {
		for _, id := range a.IDs {
			archived[id]++
		}
		if len(a.IDs) == 0 {
			fail("archives.%s: no ids: it would hold every server's binaries", a.ID)
		}
		if !strings.Contains(a.NameTemplate, ".Binary") && !strings.Contains(a.NameTemplate, ".Os") {
			fail("archives.%s: name %q tells neither the server nor the platform", a.ID, a.NameTemplate)
		}
		zip := false
		for _, o := range a.FormatOverrides {
			zip = zip || (o.Goos == "windows" && slices.Contains(o.Formats, "zip"))
		}
		if !zip {
			fail("archives.%s: Windows archives should be zip", a.ID)
		}
		for _, f := range a.Files {
			if m, _ := filepath.Glob(filepath.Join(root, f)); len(m) == 0 {
				fail("archives.%s: file %s does not exist", a.ID, f)
			}
		}
	}
	for _, s := range servers {
		if archived[s] != 1 {
			fail("archives: server %s is in %d archives, want 1", s, archived[s])
		}
	}
	if c.Checksum.Disable || (c.Checksum.Algorithm != "" && c.Checksum.Algorithm != "sha256") {
		fail("checksum: disabled or not sha256")
	}
	return problems
}

func (b Build) targets(goos, goarch string) bool {
	if !slices.Contains(b.Goos, goos) || !slices.Contains(b.Goarch, goarch) {
		return false
	}
	for _, ig := range b.Ignore {
		if (ig.Goos == "" || ig.Goos == goos) && (ig.Goarch == "" || ig.Goarch == goarch) {
			return false
		}
	}
	return true
}

// Values fill a build's templates.
type Values struct {
	Version, Commit, ShortCommit, CommitTimestamp string
}

var tmplField = regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)
var anyTemplate = regexp.MustCompile(`\{\{.*?\}\}`)

// Render fills the templates of a build field ({{ .Version }},
// {{ .ShortCommit }}, {{ .Commit }}, {{ .FullCommit }},
// {{ .CommitTimestamp }}); any other template is an error, so a check
// never builds with a template it did not understand.
func Render(s string, v Values) (string, error) {
	var bad string
	out := tmplField.ReplaceAllStringFunc(s, func(m string) string {
		switch tmplField.FindStringSubmatch(m)[1] {
		case "Version":
			return v.Version
		case "ShortCommit":
			return v.ShortCommit
		case "Commit", "FullCommit":
			return v.Commit
		case "CommitTimestamp":
			return v.CommitTimestamp
		}
		bad = m
		return m
	})
	if bad == "" {
		bad = anyTemplate.FindString(out)
	}
	if bad != "" {
		return "", fmt.Errorf("template %s: these checks render only .Version, .Commit, .ShortCommit, .FullCommit and .CommitTimestamp", bad)
	}
	return out, nil
}

// Built is one binary Build made.
type Built struct {
	Server, Path, GOOS, GOARCH string
}

// BuildAll compiles every build of c for goos/goarch into dir, with the
// build's env, flags and ldflags rendered with v, from root.
func BuildAll(ctx context.Context, c *Config, root, dir, goos, goarch string, v Values) ([]Built, error) {
	var out []Built
	for _, b := range c.Builds {
		ld, err := Render(strings.Join(b.Ldflags, " "), v)
		if err != nil {
			return nil, err
		}
		bin := filepath.Join(dir, goos+"_"+goarch, b.Binary)
		if goos == "windows" {
			bin += ".exe"
		}
		args := append([]string{"build"}, b.Flags...)
		args = append(args, "-ldflags", ld, "-o", bin, b.Main)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		cmd.Env = append(append(os.Environ(), b.Env...), "GOOS="+goos, "GOARCH="+goarch)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s for %s/%s: go %s: %w\n%s", b.ID, goos, goarch, strings.Join(args, " "), err, msg)
		}
		out = append(out, Built{Server: b.ID, Path: bin, GOOS: goos, GOARCH: goarch})
	}
	return out, nil
}

// Inspect checks a built binary: the executable format and machine of its
// platform, built without cgo and with -trimpath, holding the version; on
// this machine's platform it also runs --version.
func Inspect(ctx context.Context, b Built, v Values) []string {
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s %s/%s: ", b.Server, b.GOOS, b.GOARCH)+fmt.Sprintf(format, args...))
	}
	data, err := os.ReadFile(b.Path)
	if err != nil {
		return []string{err.Error()}
	}
	if err := format(data, b.GOOS, b.GOARCH); err != nil {
		fail("%v", err)
	}
	info, err := buildinfo.ReadFile(b.Path)
	if err != nil {
		fail("build info: %v", err)
	} else {
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || settings["GOOS"] != b.GOOS || settings["GOARCH"] != b.GOARCH {
			fail("built with CGO_ENABLED=%s -trimpath=%s GOOS=%s GOARCH=%s", settings["CGO_ENABLED"], settings["-trimpath"], settings["GOOS"], settings["GOARCH"])
		}
	}
	if !bytes.Contains(data, []byte(v.Version)) {
		fail("the version %q is not in the binary: the ldflags did not set it", v.Version)
	}
	if b.GOOS == runtime.GOOS && b.GOARCH == runtime.GOARCH {
		out, err := exec.CommandContext(ctx, b.Path, "--version").Output()
		want := fmt.Sprintf("%s-mcp %s (commit %s)", b.Server, v.Version, v.ShortCommit)
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			fail("--version: %q (%v), want %q", got, err, want)
		}
	}
	return problems
}

func format(data []byte, goos, goarch string) error {
	r := bytes.NewReader(data)
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return fmt.Errorf("not ELF: %w", err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want {
			return fmt.Errorf("ELF for %v", f.Machine)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return fmt.Errorf("not Mach-O: %w", err)
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want {
			return fmt.Errorf("Mach-O for %v", f.Cpu)
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return fmt.Errorf("not PE: %w", err)
		}
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want {
			return fmt.Errorf("PE for machine %#x", f.Machine)
		}
	default:
		return fmt.Errorf("no check for %s", goos)
	}
	return nil
}
