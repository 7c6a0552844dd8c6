package kit_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The fleet speaks MCP through the kit's own protocol engine
// (docs/architecture.md, "Why the fleet has its own protocol engine"). mcp-go
// stays a dependency for two things only: its protocol types and version
// list (github.com/mark3labs/mcp-go/mcp, used by the kit) and its client,
// which tests drive servers with (shared/mcptest, or directly in _test.go
// files). These tests hold that line:
//
//   - no non-test Go file under servers/ imports any mcp-go package;
//   - no non-test Go file of shared/kit imports an mcp-go package other than
//     mcpTypes;
//   - nothing a server builds (go list -deps of its packages, tests
//     excluded) reaches an mcp-go package other than mcpTypes, so mcp-go's
//     server, client and transports never end up in a binary.
const (
	mcpGo    = "github.com/mark3labs/mcp-go"
	mcpTypes = mcpGo + "/mcp"
)

// isMCPGo reports whether an import path is mcp-go or one of its packages.
func isMCPGo(path string) bool {
	return path == mcpGo || strings.HasPrefix(path, mcpGo+"/")
}

// mcpGoImports lists, as "file: path", every import of an mcp-go package by a
// non-test Go file under root that allowed refuses.
func mcpGoImports(t *testing.T, root string, allowed func(string) bool) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if isMCPGo(p) && !allowed(p) {
				found = append(found, path+": "+p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return found
}

func never(string) bool { return false }

func onlyTypes(p string) bool { return p == mcpTypes }

// serverModules lists the server modules under the repository's servers/.
func serverModules(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "..", "servers", "*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no server modules under ../../servers: the kit's tests run inside the repository")
	}
	for i, m := range dirs {
		dirs[i] = filepath.Dir(m)
	}
	return dirs
}

func TestServersDoNotImportMCPGo(t *testing.T) {
	for _, dir := range serverModules(t) {
		if bad := mcpGoImports(t, dir, never); len(bad) > 0 {
			t.Errorf("servers speak MCP through shared/kit; production code imports mcp-go:\n%s", strings.Join(bad, "\n"))
		}
	}
}

func TestKitUsesOnlyMCPGoTypes(t *testing.T) {
	if bad := mcpGoImports(t, ".", onlyTypes); len(bad) > 0 {
		t.Errorf("shared/kit may import only %s from mcp-go:\n%s", mcpTypes, strings.Join(bad, "\n"))
	}
}

func TestServerBuildsLinkOnlyMCPGoTypes(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list the servers' dependencies: %v", err)
	}
	for _, dir := range serverModules(t) {
		cmd := exec.Command("go", "list", "-deps", "./...")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go list -deps in %s: %v\n%s", dir, err, stderr)
		}
		var bad []string
		for _, p := range strings.Fields(string(out)) {
			if isMCPGo(p) && p != mcpTypes {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s builds mcp-go packages beyond %s: %s", dir, mcpTypes, strings.Join(bad, ", "))
		}
	}
}

// TestMCPGoImportCheckFinds shows the check fails on what it is meant to
// catch: a server file importing mcp-go's server, and a kit file importing
// anything of mcp-go but its types.
func TestMCPGoImportCheckFinds(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cmd/x/main.go", "package main\n\nimport (\n\t_ \"fmt\"\n\tsrv \"github.com/mark3labs/mcp-go/server\"\n)\n\nvar _ = srv.NewMCPServer\n")
	write("internal/tools/types.go", "package tools\n\nimport _ \"github.com/mark3labs/mcp-go/mcp\"\n")
	write("internal/tools/tools_test.go", "package tools\n\nimport _ \"github.com/mark3labs/mcp-go/client\"\n")

	got := mcpGoImports(t, root, never)
	want := []string{
		filepath.Join(root, "cmd/x/main.go") + ": github.com/mark3labs/mcp-go/server",
		filepath.Join(root, "internal/tools/types.go") + ": " + mcpTypes,
	}
	if !slices.Equal(got, want) {
		t.Errorf("server rule found %q, want %q", got, want)
	}
	got = mcpGoImports(t, root, onlyTypes)
	if !slices.Equal(got, want[:1]) {
		t.Errorf("kit rule found %q, want %q", got, want[:1])
	}
}
