package mcptest

import (
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
)

// ShippedPolicy loads the checkout's configs/acl.yaml with the opt-in grant
// files named (files in configs/acl.d), as a deployment would.
func ShippedPolicy(t testing.TB, grants ...string) *acl.Policy {
	t.Helper()
	var files []string
	for _, g := range grants {
		files = append(files, RepoFile(t, "configs", "acl.d", g))
	}
	p, err := acl.Load(RepoFile(t, "configs", "acl.yaml"), files...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
