package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/image"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/imagetest"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage:"},
		{[]string{"deploy"}, `unknown command "deploy"`},
		{[]string{"images", "--version", "1"}, "--version, --commit and at least one image are required"},
		{[]string{"images", "--nope"}, "flag provided but not defined"},
		{[]string{"release", "--root", "../../../..", "--config", "../../../../.goreleaser.yaml", "extra"}, "unexpected arguments"},
		{[]string{"release", "--root", "../../../..", "--config", "../../../../.goreleaser.yaml", "--targets", "linux"}, "want os/arch"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCmd(tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("status %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// TestImages runs `fleetcheck images` on an image archive through a
// stand-in for podman that saves the archive and, like this machine's
// sandbox, refuses to start containers.
func TestImages(t *testing.T) {
	const version, commit = "1.0.0-cmdtest", "c0ffee1"
	dir := t.TempDir()
	bin, err := os.ReadFile(testbin.ServerVersion(t, dir, "devtools", version, commit))
	if err != nil {
		t.Fatal(err)
	}
	policyFile := filepath.Join(dir, "acl.yaml")
	policy := []byte("version: 1\nagents:\n  developer:\n    tools: [file_read]\n")
	if err := os.WriteFile(policyFile, policy, 0o644); err != nil {
		t.Fatal(err)
	}
	c, layers := imagetest.ServerImage(bin, image.Want{Program: "devtools-mcp", Version: version, Commit: commit, Policy: policy, Workspace: true})
	archive := imagetest.WriteArchive(t, c, layers)
	engine := imagetest.FakeEngine(t, fmt.Sprintf(`case "$1" in
save) cp %s "$3" ;;
run) echo "Error: crun: setrlimit RLIMIT_NOFILE: Operation not permitted: OCI permission denied" >&2; exit 126 ;;
*) exit 125 ;;
esac`, archive))

	code, out, stderr := runCmd("images", "--engine", engine.Bin, "--policy", policyFile, "--version", version, "--commit", commit, "mcp-fleet/devtools-mcp:"+version)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"mcp-fleet/devtools-mcp:" + version,
		"ok       runs as mcp (65532:65532), not root",
		`ok       the image's binary says "devtools-mcp ` + version + ` (commit ` + commit + `)"`,
		"not run  initialize through `podman run -i`: podman could not start a container on this machine (status 126",
		"images: 1 checked, 0 problems, 1 checks not run on this machine",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, stderr = runCmd("images", "--engine", engine.Bin, "--policy", policyFile, "--version", "2.0.0", "--commit", commit, "mcp-fleet/devtools-mcp:2.0.0")
	if code != 1 || !strings.Contains(out, "FAIL     label org.opencontainers.image.version") || !strings.Contains(stderr, "problems") {
		t.Errorf("a wrong version: status %d\n%s\n%s", code, out, stderr)
	}

	broken := imagetest.FakeEngine(t, `echo "no such image" >&2; exit 125`)
	if code, _, stderr := runCmd("images", "--engine", broken.Bin, "--policy", policyFile, "--version", version, "--commit", commit, "x"); code != 1 || !strings.Contains(stderr, "no such image") {
		t.Errorf("a failing engine: status %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd("images", "--engine", broken.Bin, "--policy", filepath.Join(dir, "none"), "--version", version, "--commit", commit, "x"); code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("a missing policy: status %d, %s", code, stderr)
	}
}

const tinyConfig = `version: 2
project_name: tiny
builds:
  - id: tiny
    main: ./servers/tiny/cmd/tiny-mcp
    binary: tiny-mcp
    env: [CGO_ENABLED=0]
    flags: [-trimpath]
    ldflags: ["-s -w -X github.com/mcp-fleet/mcp-fleet/shared/buildinfo.version={{ .Version }} -X github.com/mcp-fleet/mcp-fleet/shared/buildinfo.commit={{ .ShortCommit }}"]
    goos: [linux, darwin, windows]
    goarch: [amd64, arm64]
archives:
  - id: tiny
    ids: [tiny]
    name_template: "{{ .Binary }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"
    format_overrides:
      - goos: windows
        formats: [zip]
    files: [README.md]
checksum:
  algorithm: %s
`

// TestRelease runs `fleetcheck release` on a repository of one small
// server.
func TestRelease(t *testing.T) {
	root := t.TempDir()
	main, err := os.ReadFile(filepath.Join("..", "..", "release", "testdata", "tiny", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The small server links the fleet's version variables: the package
	// itself, in a module of its own beside the server.
	buildinfo, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "buildinfo", "buildinfo.go"))
	if err != nil {
		t.Fatal(err)
	}
	const shared = "github.com/mcp-fleet/mcp-fleet/shared"
	files := map[string]string{
		"go.mod":                            "module example.com/tiny\n\ngo 1.26.0\n\nrequire " + shared + " v0.0.0\n\nreplace " + shared + " => ./shared\n",
		"shared/go.mod":                     "module " + shared + "\n\ngo 1.26.0\n",
		"shared/buildinfo/buildinfo.go":     string(buildinfo),
		"README.md":                         "tiny\n",
		"servers/tiny/cmd/tiny-mcp/main.go": string(main),
		"good.yaml":                         fmt.Sprintf(tinyConfig, "sha256"),
		"bad.yaml":                          fmt.Sprintf(tinyConfig, "md5"),
		"broken.yaml":                       "builds: [",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	t.Setenv("GOWORK", "off") // the small repository is its own module

	code, out, stderr := runCmd("release", "--root", root, "--config", filepath.Join(root, "good.yaml"), "--targets", host+",windows/amd64")
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"1 servers for [linux darwin windows] × [amd64 arm64]", "built 1 servers for " + host, "built 1 servers for windows/amd64", "release: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCmd("release", "--root", root, "--config", filepath.Join(root, "bad.yaml"))
	if code != 1 || !strings.Contains(out, "checksum: disabled or not sha256") {
		t.Errorf("md5: status %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"--config", filepath.Join(root, "broken.yaml")},
		{"--config", filepath.Join(root, "none.yaml")},
		{"--config", filepath.Join(root, "good.yaml"), "--root", t.TempDir()},
	} {
		if code, _, _ := runCmd(append([]string{"release", "--root", root}, args...)...); code != 1 {
			t.Errorf("%v: status %d, want 1", args, code)
		}
	}
}
