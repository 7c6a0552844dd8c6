// Package testbin builds the servers for the checks' tests into the test's
// own temporary directory. A directory shared between test runs would be
// shared with every other checkout on the machine too, and a test could end
// up running a binary another checkout built.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Server builds servers/<name>/cmd/<name>-mcp as `make build` does (static,
// -trimpath) into dir and returns the binary's path.
func Server(t testing.TB, dir, name string) string {
	t.Helper()
	return ServerVersion(t, dir, name, "", "")
}

// ServerVersion is Server with the version and commit set as `make build`
// sets them (-X on shared/buildinfo's version and commit); empty leaves the
// defaults.
func ServerVersion(t testing.TB, dir, name, version, commit string) string {
	t.Helper()
	out := filepath.Join(dir, name+"-mcp")
	pkg := fmt.Sprintf("github.com/mcp-fleet/mcp-fleet/servers/%s/cmd/%s-mcp", name, name)
	args := []string{"build", "-trimpath", "-o", out}
	if version != "" {
		const v = "github.com/mcp-fleet/mcp-fleet/shared/buildinfo"
		args = append(args, "-ldflags", fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s", v, version, v, commit))
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out
}
