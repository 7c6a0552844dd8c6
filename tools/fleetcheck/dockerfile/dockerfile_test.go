package dockerfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

func shipped(t *testing.T) ([]Stage, *Ignore) {
	t.Helper()
	stages, err := Parse(filepath.Join(testbin.Root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ig, err := LoadIgnore(filepath.Join(testbin.Root(t), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	return stages, ig
}

// TestSourceStage lays out on this machine exactly the files the
// Dockerfile's source-building stage copies from the context (after
// .dockerignore) and checks that its build works with them: the Makefile's
// build target and every server's packages resolve (every module go.work
// lists is there), offline. The golang base image itself cannot be pulled
// here; everything the stage adds to it is checked.
func TestSourceStage(t *testing.T) {
	stages, ig := shipped(t)
	s, ok := Find(stages, "binaries-source")
	if !ok {
		t.Fatal("no binaries-source stage")
	}
	if !strings.HasPrefix(s.From, "${GO_IMAGE}") || len(s.Runs) != 1 || !strings.Contains(s.Runs[0], `make build VERSION="${VERSION}" COMMIT="${COMMIT}"`) {
		t.Fatalf("the stage is not a golang image running make build: from %q, runs %q", s.From, s.Runs)
	}
	dir := t.TempDir()
	work, err := Lay(s, testbin.Root(t), ig, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(work, "bin")); err == nil {
		t.Error("bin/ reached the source stage")
	}
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=")
	cmd := exec.Command("make", "-n", "build", "VERSION=1.0.0", "COMMIT=abc1234")
	cmd.Dir, cmd.Env = work, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go build -trimpath") {
		t.Errorf("make -n build:\n%s", out)
	}
	for _, s := range testbin.Servers {
		cmd := exec.Command("go", "list", "-deps", "./servers/"+s+"/cmd/"+s+"-mcp")
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not resolve from the stage's files: %v\n%s", s, err, out)
		}
	}
}

// TestContextHoldsWhatStagesCopy: every file a stage copies from the
// context is in it after .dockerignore, for both ways of getting binaries.
func TestContextHoldsWhatStagesCopy(t *testing.T) {
	stages, ig := shipped(t)
	names := map[string]bool{}
	for _, s := range stages {
		names[s.Name] = true
		for _, c := range s.Copies {
			for _, src := range c.Sources {
				if ig.Excluded(src) {
					t.Errorf("stage %s copies %s, which .dockerignore leaves out", s.Name, src)
				}
			}
		}
	}
	for _, want := range append([]string{"binaries-source", "binaries-host", "binaries", "runtime"}, testbin.Servers...) {
		if !names[want] {
			t.Errorf("no stage %s", want)
		}
	}
	host, _ := Find(stages, "binaries-host")
	var copied []string
	for _, c := range host.Copies {
		copied = append(copied, c.Sources...)
	}
	for _, s := range testbin.Servers {
		found := false
		for _, c := range copied {
			found = found || c == "bin/"+s+"-mcp"
		}
		if !found {
			t.Errorf("binaries-host does not copy bin/%s-mcp", s)
		}
	}
	// What must stay out of the context.
	for _, p := range []string{".git/config", "coverage/devtools.out", "tools/sdk-check/node_modules/x/index.js", "bin/kit-testserver", "dist/x"} {
		if !ig.Excluded(p) {
			t.Errorf("%s is in the build context", p)
		}
	}
}

func TestIgnore(t *testing.T) {
	ig, err := ParseIgnore(`
# comment
*
!shared/
!bin/*-mcp
**/node_modules
!keep/**/x.go
/docs?
`)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"Makefile":                      true,
		"shared/kit/kit.go":             false,
		"shared/node_modules/a.js":      true,
		"bin/avinode-mcp":               false,
		"bin/kit-testserver":            true,
		"bin/sub/x-mcp":                 true,
		"keep/a/b/x.go":                 false,
		"keep/x.go":                     false,
		"docs1":                         true,
		"a/b/node_modules/c/index.json": true,
	} {
		if got := ig.Excluded(path); got != want {
			t.Errorf("Excluded(%s) = %v, want %v", path, got, want)
		}
	}
	none, err := LoadIgnore(filepath.Join(t.TempDir(), "none"))
	if err != nil || none.Excluded("anything") {
		t.Errorf("a missing .dockerignore: %v", err)
	}
	if _, err := LoadIgnore(t.TempDir()); err == nil {
		t.Error("a directory read as .dockerignore")
	}
}

// writeDockerfile writes text as dir's Dockerfile, replacing the last one,
// and returns its path.
func writeDockerfile(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "Dockerfile")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParse(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string { return writeDockerfile(t, dir, text) }
	stages, err := Parse(write(`# a comment
ARG X=1
FROM golang AS build
WORKDIR /src
COPY --chown=1:1 a b \
     dest/
RUN go build \
    ./...
FROM scratch
COPY --from=build /out /out
ADD c /c
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{Name: "build", From: "golang", Workdir: "/src", Copies: []Copy{{Sources: []string{"a", "b"}, Dest: "dest/"}}, Runs: []string{"go build ./..."}},
		{From: "scratch", Copies: []Copy{{Sources: []string{"c"}, Dest: "/c"}}},
	}
	if !reflect.DeepEqual(stages, want) {
		t.Errorf("stages:\n got %+v\nwant %+v", stages, want)
	}
	if _, err := Parse(write("COPY a b\n")); err == nil {
		t.Error("COPY before FROM parsed")
	}
	if _, err := Parse(write("FROM x\nCOPY a\n")); err == nil {
		t.Error("COPY without a destination parsed")
	}
	if _, err := Parse(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing Dockerfile parsed")
	}
	if _, ok := Find(stages, "nope"); ok {
		t.Error("found a stage that is not there")
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string { return writeDockerfile(t, dir, text) }
	f, err := ParseFile(write(`ARG BASE=scratch IMAGE
FROM ${BASE} AS one
ARG VERSION=dev
ENTRYPOINT ["/bin/one", "--flag"]
FROM one AS two
ENTRYPOINT exec two
`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Args, []string{"BASE", "IMAGE"}) {
		t.Errorf("global args %q", f.Args)
	}
	if one := f.Stages[0]; !reflect.DeepEqual(one.Args, []string{"VERSION"}) || !reflect.DeepEqual(one.Entrypoint, []string{"/bin/one", "--flag"}) {
		t.Errorf("stage one: %+v", one)
	}
	if two := f.Stages[1]; !reflect.DeepEqual(two.Entrypoint, []string{"/bin/sh", "-c", "exec two"}) {
		t.Errorf("stage two: %+v", two)
	}
	for arg, want := range map[string]bool{"BASE": true, "IMAGE": true, "VERSION": true, "COMMIT": false} {
		if got := f.Declares(arg); got != want {
			t.Errorf("Declares(%s) = %v", arg, got)
		}
	}
	if _, err := ParseFile(write("ENTRYPOINT [\"x\"]\n")); err == nil {
		t.Error("ENTRYPOINT before FROM parsed")
	}
	if _, err := ParseFile(write("FROM x\nENTRYPOINT [\"x\"\n")); err == nil {
		t.Error("a broken exec-form ENTRYPOINT parsed")
	}
	// The shipped Dockerfile: each server stage runs its own binary.
	shippedFile, err := ParseFile(filepath.Join(testbin.Root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range testbin.Servers {
		st, ok := Find(shippedFile.Stages, s)
		if !ok || !reflect.DeepEqual(st.Entrypoint, []string{"/usr/local/bin/" + s + "-mcp"}) {
			t.Errorf("stage %s: entrypoint %q", s, st.Entrypoint)
		}
	}
	if !shippedFile.Declares("BINARIES") || !shippedFile.Declares("VERSION") {
		t.Errorf("the shipped Dockerfile's global args: %q", shippedFile.Args)
	}
}

func TestLay(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{"a.txt": "a", "d/x.go": "x", "d/skip.test": "s", "one": "1"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ig, err := ParseIgnore("**/*.test\nsecret")
	if err != nil {
		t.Fatal(err)
	}
	s := Stage{Workdir: "/w", Copies: []Copy{{Sources: []string{"a.txt", "one"}, Dest: "./"}, {Sources: []string{"d/"}, Dest: "dd/"}, {Sources: []string{"one"}, Dest: "/abs/renamed"}}}
	out := t.TempDir()
	work, err := Lay(s, src, ig, out)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.txt": "a", "one": "1", "dd/x.go": "x"} {
		got, err := os.ReadFile(filepath.Join(work, p))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v", p, got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "dd", "skip.test")); err == nil {
		t.Error("an ignored file was laid out")
	}
	if got, err := os.ReadFile(filepath.Join(out, "abs", "renamed")); err != nil || string(got) != "1" {
		t.Errorf("absolute destination: %q %v", got, err)
	}
	if _, err := Lay(Stage{Copies: []Copy{{Sources: []string{"missing"}, Dest: "x"}}}, src, ig, t.TempDir()); err == nil {
		t.Error("a missing source laid out")
	}
	if err := os.WriteFile(filepath.Join(src, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Lay(Stage{Copies: []Copy{{Sources: []string{"secret"}, Dest: "x"}}}, src, ig, t.TempDir()); err == nil {
		t.Error("an ignored source laid out")
	}
}
