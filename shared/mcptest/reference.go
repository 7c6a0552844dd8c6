package mcptest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// Markers around the generated reference in a server's docs page.
const (
	ReferenceBegin = "<!-- BEGIN GENERATED REFERENCE: `<server>-mcp docs` writes this section; edit the code, then run `make docs` -->"
	ReferenceEnd   = "<!-- END GENERATED REFERENCE -->"
)

// CheckReference fails the test when the reference section of the Markdown
// file at path differs from what spec's `docs` subcommand prints, so a
// server's docs page cannot drift from its definitions. With update set it
// rewrites the section instead (go test -run TestDocs -args -update).
func CheckReference(t testing.TB, spec kit.Spec, path string, update bool) {
	t.Helper()
	var gen bytes.Buffer
	if err := kit.WriteReference(context.Background(), &gen, spec); err != nil {
		t.Fatalf("generate the reference: %v", err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	begin := strings.ReplaceAll(ReferenceBegin, "<server>", spec.Name)
	doc := string(page)
	i := strings.Index(doc, begin)
	j := strings.Index(doc, ReferenceEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated reference section; add the lines\n%s\n%s", path, begin, ReferenceEnd)
	}
	current := doc[i+len(begin) : j]
	want := "\n" + gen.String() + "\n"
	if current == want {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the generated reference is stale; run `make docs` (or go test with -args -update) and review the diff", path)
}
