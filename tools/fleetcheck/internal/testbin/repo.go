package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// Servers are the fleet's servers, by their directories under servers/.
var Servers = []string{"avinode", "gmail", "sheets", "supabase", "devtools"}

// Root is the repository's root, as seen from a test of a package directly
// under tools/fleetcheck (go test runs it in the package's directory).
func Root(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}
