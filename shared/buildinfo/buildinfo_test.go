package buildinfo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
)

func TestDefaults(t *testing.T) {
	if v, c := buildinfo.Version(), buildinfo.Commit(); v != "dev" || c != "unknown" {
		t.Fatalf("unlinked build: version %q commit %q, want dev and unknown", v, c)
	}
}

// TestLinkerSetsBoth builds a program with the -X flags the Makefile and
// the release configuration pass: a renamed variable or package would leave
// every release binary saying "dev".
func TestLinkerSetsBoth(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "v")
	const pkg = "github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
	cmd := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X "+pkg+".version=1.2.3 -X "+pkg+".commit=0123abc", "./testdata/printversion")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "1.2.3 0123abc\n" {
		t.Fatalf("linked build prints %q, want %q", out, "1.2.3 0123abc\n")
	}
}
