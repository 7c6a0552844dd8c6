package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/image"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/imagetest"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

const (
	version = "1.2.3-test"
	commit  = "abc1234"
)

var policyYAML = []byte("version: 1\nagents:\n  developer:\n    tools: [file_read]\n")

// A real server binary, built once for these tests.
var (
	binOnce sync.Once
	binData []byte
	binErr  error
)

func serverBinary(t *testing.T) []byte {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fleetcheck-image-test-")
		if err != nil {
			binErr = err
			return
		}
		defer os.RemoveAll(dir)
		binData, binErr = os.ReadFile(testbin.ServerVersion(t, dir, "devtools", version, commit))
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binData
}

type entry = imagetest.Entry

func goodImage(t *testing.T) (image.Config, [][]entry) {
	return imagetest.ServerImage(serverBinary(t), want())
}

func writeArchive(t *testing.T, c image.Config, layers [][]entry) string {
	return imagetest.WriteArchive(t, c, layers)
}

func tarOf(t *testing.T, entries []entry) []byte { return imagetest.Tar(t, entries) }

func caBundle(_ *testing.T, n int) []byte { return imagetest.CABundle(n) }

func fakeEngine(t *testing.T, script string) image.Engine { return imagetest.FakeEngine(t, script) }

func want() image.Want {
	return image.Want{Program: "devtools-mcp", Version: version, Commit: commit, Policy: policyYAML, Workspace: true}
}

func TestGoodImage(t *testing.T) {
	c, layers := goodImage(t)
	im, err := image.ReadArchive(writeArchive(t, c, layers))
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"/etc/leftover", "/var", "/var/a"} {
		if im.Files[gone] != nil {
			t.Errorf("%s survived its whiteout", gone)
		}
	}
	r := image.Check(im, want())
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	checked := strings.Join(r.Checked, "\n")
	for _, s := range []string{"runs as mcp (65532:65532)", "static ELF", "12 CA certificates", "/data owned by the user", "/workspace owned", "the shipped policy", "label version " + version} {
		if !strings.Contains(checked, s) {
			t.Errorf("not checked: %q; checked:\n%s", s, checked)
		}
	}
	h := image.CheckOnHost(context.Background(), im, want(), t.TempDir())
	if len(h.Problems) > 0 || len(h.NotRun) > 0 {
		t.Fatalf("on host: problems %v, not run %v", h.Problems, h.NotRun)
	}
	if !strings.Contains(strings.Join(h.Checked, "\n"), "initialize with the image's binary over stdio: devtools "+version) {
		t.Errorf("checked %v", h.Checked)
	}
}

func TestBadImages(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *image.Config, layers [][]entry)
		want   []string
	}{
		{"root", func(c *image.Config, _ [][]entry) { c.Config.User = "0:0" }, []string{"is root"}},
		{"named user", func(c *image.Config, _ [][]entry) { c.Config.User = "mcp" }, []string{"not numeric"}},
		{"bad group", func(c *image.Config, _ [][]entry) { c.Config.User = "65532:mcp" }, []string{`group "mcp" is not numeric`}},
		{"user without passwd line", func(c *image.Config, _ [][]entry) { c.Config.User = "1000:1000" }, []string{"no /etc/passwd line"}},
		{"entrypoint and command", func(c *image.Config, _ [][]entry) {
			c.Config.Entrypoint = []string{"/bin/sh", "-c"}
			c.Config.Cmd = []string{"--transport", "http"}
			c.Config.Env = append(c.Config.Env, "MCP_TRANSPORT=http")
		}, []string{"entrypoint", "the default must be the stdio server", "MCP_TRANSPORT=http"}},
		{"labels", func(c *image.Config, _ [][]entry) {
			c.Config.Labels = map[string]string{"org.opencontainers.image.version": "dev"}
		}, []string{`version "dev", want "1.2.3-test"`, "revision", "title"}},
		{"environment", func(c *image.Config, _ [][]entry) {
			c.Config.Env = []string{"MCP_DATA_DIR=/var/lib/x"}
			c.Config.WorkingDir = "/"
		}, []string{`MCP_DATA_DIR="/var/lib/x"`, "DEVTOOLS_ROOTS"}},
		{"wrong architecture", func(c *image.Config, _ [][]entry) { c.Architecture = "arm64" }, []string{"is built for"}},
		{"missing and unwritable directories", func(_ *image.Config, l [][]entry) {
			for i := range l[0] {
				if l[0][i].Path == "data/" {
					l[0][i].UID, l[0][i].Mode = 0, 0o555
				}
			}
			l[1] = append(l[1], entry{Path: ".wh.workspace", Type: tar.TypeReg}, entry{Path: ".wh.tmp", Type: tar.TypeReg})
		}, []string{"/data belongs to uid 0", "no directory /workspace", "no directory /tmp"}},
		{"mode without write bit", func(_ *image.Config, l [][]entry) {
			for i := range l[0] {
				if l[0][i].Path == "data/" {
					l[0][i].Mode = 0o555
				}
			}
		}, []string{"/data is not writable"}},
		{"certificates, policy, extras", func(_ *image.Config, l [][]entry) {
			for i := range l[0] {
				switch l[0][i].Path {
				case "etc/ssl/certs/ca-certificates.crt":
					l[0][i].Data = caBundle(t, 2)
				case "etc/mcp-fleet/acl.yaml":
					l[0][i].Data = []byte("version: 1\nagents: {}\n")
				}
			}
			l[1] = append(l[1], entry{Path: "bin/", Type: tar.TypeDir, Mode: 0o755},
				entry{Path: "bin/sh", Type: tar.TypeReg, Mode: 0o755, Data: bytes.Repeat([]byte("x"), image.MaxExtraBytes)})
		}, []string{"holds 2 certificates", "differs from configs/acl.yaml", "unexpected /bin/sh", "bytes besides the binary"}},
		{"no certificates, policy or passwd", func(_ *image.Config, l [][]entry) {
			l[1] = append(l[1], entry{Path: "etc/ssl/certs/.wh.ca-certificates.crt", Type: tar.TypeReg},
				entry{Path: "etc/mcp-fleet/.wh.acl.yaml", Type: tar.TypeReg}, entry{Path: "etc/.wh.passwd", Type: tar.TypeReg})
		}, []string{"no CA certificates", "no shipped policy", "no /etc/passwd line"}},
		{"not executable", func(_ *image.Config, l [][]entry) { l[1][len(l[1])-1].Mode = 0o644 }, []string{"is not executable"}},
		{"not ELF", func(_ *image.Config, l [][]entry) { l[1][len(l[1])-1].Data = []byte("#!/bin/sh\n") }, []string{"is not an ELF executable"}},
		{"no binary", func(_ *image.Config, l [][]entry) { l[1] = l[1][:len(l[1])-1] }, []string{"is not in the image"}},
		{"no version", func(_ *image.Config, l [][]entry) {
			l[1][len(l[1])-1].Data = bytes.ReplaceAll(l[1][len(l[1])-1].Data, []byte(version), []byte("0.0.0-other"))
		}, []string{"does not hold the version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, layers := goodImage(t)
			tt.change(&c, layers)
			im, err := image.ReadArchive(writeArchive(t, c, layers))
			if err != nil {
				t.Fatal(err)
			}
			problems := strings.Join(image.Check(im, want()).Problems, "\n")
			for _, w := range tt.want {
				if !strings.Contains(problems, w) {
					t.Errorf("no problem mentions %q; got:\n%s", w, problems)
				}
			}
		})
	}
}

func TestDynamicBinary(t *testing.T) {
	// A dynamically linked program from this machine: the image would need
	// its loader and libraries.
	dyn, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	c, layers := goodImage(t)
	layers[1][len(layers[1])-1].Data = dyn
	im, err := image.ReadArchive(writeArchive(t, c, layers))
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(image.Check(im, want()).Problems, "\n"); !strings.Contains(p, "dynamically linked") {
		t.Errorf("problems: %s", p)
	}
}

func TestCheckOnHostFindsMismatches(t *testing.T) {
	c, layers := goodImage(t)
	c.Config.ExposedPorts = map[string]struct{}{"3001/tcp": {}}
	im, err := image.ReadArchive(writeArchive(t, c, layers))
	if err != nil {
		t.Fatal(err)
	}
	w := want()
	w.Version, w.Commit = "9.9.9", "fffffff"
	r := image.CheckOnHost(context.Background(), im, w, t.TempDir())
	p := strings.Join(r.Problems, "\n")
	for _, s := range []string{`--version: "devtools-mcp 1.2.3-test (commit abc1234)"`, "want the server's default port 3005/tcp", "server devtools 1.2.3-test, want devtools 9.9.9"} {
		if !strings.Contains(p, s) {
			t.Errorf("no problem mentions %q; got:\n%s", s, p)
		}
	}
	w.Program = "gmail-mcp"
	if r := image.CheckOnHost(context.Background(), im, w, t.TempDir()); len(r.Problems) != 1 {
		t.Errorf("no binary: %v", r.Problems)
	}
	im.Config.Architecture = "s390x"
	if r := image.CheckOnHost(context.Background(), im, want(), t.TempDir()); len(r.NotRun) != 1 || len(r.Problems) != 0 {
		t.Errorf("another platform: %+v", r)
	}
}

func TestReadArchiveErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, members []entry) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, tarOf(t, members), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notTar := filepath.Join(dir, "x")
	if err := os.WriteFile(notTar, bytes.Repeat([]byte("not a tar archive "), 64), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := func(m string) entry { return entry{Path: "manifest.json", Type: tar.TypeReg, Data: []byte(m)} }
	tests := map[string]struct {
		file string
		want string
	}{
		"missing file":    {filepath.Join(dir, "none.tar"), "no such file"},
		"not a tar":       {notTar, "image archive"},
		"no manifest":     {write("a.tar", nil), "no member manifest.json"},
		"bad manifest":    {write("b.tar", []entry{manifest("{")}), "manifest.json"},
		"two images":      {write("c.tar", []entry{manifest(`[{},{}]`)}), "2 images"},
		"no config":       {write("d.tar", []entry{manifest(`[{"Config":"c.json"}]`)}), "no member c.json"},
		"bad config":      {write("e.tar", []entry{manifest(`[{"Config":"c.json"}]`), {Path: "c.json", Type: tar.TypeReg, Data: []byte("[")}}), "config"},
		"no layer":        {write("f.tar", []entry{manifest(`[{"Config":"c.json","Layers":["l.tar"]}]`), {Path: "c.json", Type: tar.TypeReg, Data: []byte("{}")}}), "no member l.tar"},
		"corrupt layer":   {write("g.tar", []entry{manifest(`[{"Config":"c.json","Layers":["l.tar"]}]`), {Path: "c.json", Type: tar.TypeReg, Data: []byte("{}")}, {Path: "l.tar", Type: tar.TypeReg, Data: []byte{0x1f, 0x8b, 0, 0}}}), "layer l.tar"},
		"symlink looping": {write("h.tar", []entry{manifest(`[{"Config":"c.json"}]`), {Path: "c.json", Type: tar.TypeSymlink, Link: "d.json"}, {Path: "d.json", Type: tar.TypeSymlink, Link: "c.json"}}), "no member"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := image.ReadArchive(tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestTryContainer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "devtools-mcp")
	if err := os.WriteFile(bin, serverBinary(t), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	refused := fakeEngine(t, `echo "Error: crun: setrlimit RLIMIT_NOFILE: Operation not permitted: OCI permission denied" >&2; exit 126`)
	r := refused.TryContainer(ctx, "mcp-fleet/devtools-mcp:1", want())
	if len(r.NotRun) != 1 || len(r.Problems) != 0 || !strings.Contains(r.NotRun[0], "status 126: Error: crun") {
		t.Errorf("refused: %+v", r)
	}

	// A runtime that runs the container: here, the server itself.
	runs := fakeEngine(t, fmt.Sprintf(`HOME=%s DEVTOOLS_ROOTS=%s MCP_DATA_DIR=%s exec %s`, dir, dir, dir, bin))
	r = runs.TryContainer(ctx, "mcp-fleet/devtools-mcp:1", want())
	if len(r.Checked) != 1 || len(r.Problems) != 0 || !strings.Contains(r.Checked[0], "through the container: devtools "+version) {
		t.Errorf("runs: %+v", r)
	}

	broken := fakeEngine(t, `echo "panic: the server fell over" >&2; exit 2`)
	r = broken.TryContainer(ctx, "mcp-fleet/devtools-mcp:1", want())
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "status 2") || !strings.Contains(r.Problems[0], "fell over") {
		t.Errorf("broken: %+v", r)
	}

	garbled := fakeEngine(t, `read line; echo "not json"`)
	if r = garbled.TryContainer(ctx, "x", want()); len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "initialize answer") {
		t.Errorf("garbled: %+v", r)
	}
	refusing := fakeEngine(t, `read line; echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}'`)
	if r = refusing.TryContainer(ctx, "x", want()); len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "initialize refused: no") {
		t.Errorf("refusing: %+v", r)
	}
}

func TestSave(t *testing.T) {
	c, layers := goodImage(t)
	archive := writeArchive(t, c, layers)
	argsFile := filepath.Join(t.TempDir(), "args")
	// podman save -o FILE --format docker-archive REF
	e := fakeEngine(t, fmt.Sprintf(`echo "$@" > %s; cp %s "$3"`, argsFile, archive))
	out := filepath.Join(t.TempDir(), "out.tar")
	if err := e.Save(context.Background(), "mcp-fleet/devtools-mcp:1", out); err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(argsFile)
	if got := strings.TrimSpace(string(args)); got != "save -o "+out+" --format docker-archive mcp-fleet/devtools-mcp:1" {
		t.Errorf("podman %s", got)
	}
	if _, err := image.ReadArchive(out); err != nil {
		t.Error(err)
	}
	failing := fakeEngine(t, `echo "no such image" >&2; exit 125`)
	if err := failing.Save(context.Background(), "x", out); err == nil || !strings.Contains(err.Error(), "no such image") {
		t.Errorf("a failed save: %v", err)
	}
}
