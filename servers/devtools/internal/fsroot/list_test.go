package fsroot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// tree builds a small project used by List, Search and Delete tests.
func tree(t *testing.T, lim Limits) *fixture {
	fx := newFixture(t, lim)
	for p, c := range map[string]string{
		"README.md":             "r",
		"go.mod":                "m",
		"cmd/app/main.go":       "package main",
		"cmd/tool/main.go":      "package main",
		"internal/a/a.go":       "package a",
		"internal/a/a_test.go":  "package a",
		"internal/a/b/c/d/e.go": "package e",
		"a-b.txt":               "sorts before a/ byte-wise, after it in tree order",
		".hidden/secret.go":     "package secret",
		".env":                  "X=1",
	} {
		fx.write(t, p, c)
	}
	mustMkdir(t, fx.in("empty"))
	fx.symlink(t, "internal", "link-internal")
	fx.symlink(t, "../outside", "link-out")
	return fx
}

func TestList(t *testing.T) {
	fx := tree(t, Limits{})
	for _, tc := range []struct {
		name string
		p    string
		opt  ListOptions
		want []string
	}{
		{"top", "", ListOptions{}, []string{"README.md", "a-b.txt", "cmd", "empty", "go.mod", "internal", "link-internal", "link-out"}},
		{"dot equals empty", ".", ListOptions{}, []string{"README.md", "a-b.txt", "cmd", "empty", "go.mod", "internal", "link-internal", "link-out"}},
		{"hidden", fx.root, ListOptions{IncludeHidden: true}, []string{".env", ".hidden", "README.md", "a-b.txt", "cmd", "empty", "go.mod", "internal", "link-internal", "link-out"}},
		{"subdir relative entries", "cmd", ListOptions{Recursive: true}, []string{"app", "app/main.go", "tool", "tool/main.go"}},
		{"depth 2", "internal", ListOptions{Recursive: true, MaxDepth: 2}, []string{"a", "a/a.go", "a/a_test.go", "a/b"}},
		{"full depth", "internal", ListOptions{Recursive: true}, []string{"a", "a/a.go", "a/a_test.go", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/e.go"}},
		{"depth ignored without recursive", "internal", ListOptions{MaxDepth: 5}, []string{"a"}},
		{"empty dir", "empty", ListOptions{Recursive: true}, nil},
		{"symlinked dir as path", "link-internal/a", ListOptions{}, []string{"a.go", "a_test.go", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := fx.fs.List(tc.p, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := entryPaths(res.Entries); !slices.Equal(got, tc.want) {
				t.Errorf("entries = %v\nwant      %v", got, tc.want)
			}
			if res.Truncated || res.Root != fx.root || res.Entries == nil {
				t.Errorf("result = %+v", res)
			}
		})
	}

	t.Run("entry fields", func(t *testing.T) {
		res, err := fx.fs.List("", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		types := map[string]string{}
		for _, e := range res.Entries {
			types[e.Name] = e.Type
			if e.ModTime.IsZero() || e.Mode == "" {
				t.Errorf("entry %+v lacks fields", e)
			}
		}
		for name, want := range map[string]string{"README.md": TypeFile, "cmd": TypeDir, "link-out": TypeSymlink} {
			if types[name] != want {
				t.Errorf("%s type = %q, want %q", name, types[name], want)
			}
		}
		if res.Entries[0].Size != 1 || res.Entries[0].Mode != "-rw-r--r--" {
			t.Errorf("README.md = %+v", res.Entries[0])
		}
	})

	t.Run("truncated", func(t *testing.T) {
		small := tree(t, Limits{MaxListEntries: 3})
		res, err := small.fs.List("", ListOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Entries) != 3 {
			t.Errorf("got %d entries, truncated=%v", len(res.Entries), res.Truncated)
		}
		res, err = small.fs.List("cmd/app", ListOptions{})
		if err != nil || res.Truncated {
			t.Errorf("exactly-at-limit listing: %+v, %v", res, err)
		}
	})

	t.Run("depth limit clamps", func(t *testing.T) {
		shallow := tree(t, Limits{MaxDepth: 1})
		res, err := shallow.fs.List("internal", ListOptions{Recursive: true, MaxDepth: 50})
		if err != nil || !slices.Equal(entryPaths(res.Entries), []string{"a"}) {
			t.Errorf("got %v, %v", res, err)
		}
	})

	for _, tc := range []struct {
		name  string
		p     string
		opt   ListOptions
		code  mcperr.Code
		field string
	}{
		{"file", "go.mod", ListOptions{}, mcperr.Validation, "path"},
		{"missing", "nope", ListOptions{}, mcperr.NotFound, ""},
		{"escaping link", "link-out", ListOptions{}, mcperr.PermissionDeny, ""},
		{"negative depth", "", ListOptions{MaxDepth: -1}, mcperr.Validation, "max_depth"},
	} {
		t.Run("error/"+tc.name, func(t *testing.T) {
			_, err := fx.fs.List(tc.p, tc.opt)
			if fe := wantCode(t, err, tc.code); fe.Field != tc.field || fe.Op != "list" || fe.Path != tc.p {
				t.Errorf("error = %+v", fe)
			}
		})
	}
}

func TestSearch(t *testing.T) {
	fx := tree(t, Limits{})
	for _, tc := range []struct {
		name    string
		p       string
		pattern string
		opt     SearchOptions
		want    []string
	}{
		{"basename any depth", "", "*.go", SearchOptions{}, []string{"cmd/app/main.go", "cmd/tool/main.go", "internal/a/a.go", "internal/a/a_test.go", "internal/a/b/c/d/e.go"}},
		{"basename hidden", "", "*.go", SearchOptions{IncludeHidden: true}, []string{".hidden/secret.go", "cmd/app/main.go", "cmd/tool/main.go", "internal/a/a.go", "internal/a/a_test.go", "internal/a/b/c/d/e.go"}},
		{"doublestar middle", "", "cmd/**/main.go", SearchOptions{}, []string{"cmd/app/main.go", "cmd/tool/main.go"}},
		{"doublestar leading", "", "**/a/*.go", SearchOptions{}, []string{"internal/a/a.go", "internal/a/a_test.go"}},
		{"doublestar zero segments", "internal", "a/**/a.go", SearchOptions{}, []string{"a/a.go"}},
		{"anchored path", "", "cmd/*/main.go", SearchOptions{}, []string{"cmd/app/main.go", "cmd/tool/main.go"}},
		{"anchored top only", "", "./*.md", SearchOptions{}, []string{"README.md"}},
		{"anchored name", "", "./main.go", SearchOptions{}, nil},
		{"unanchored name", "", "main.go", SearchOptions{}, []string{"cmd/app/main.go", "cmd/tool/main.go"}},
		{"double doublestar", "", "**/b/**/*.go", SearchOptions{}, []string{"internal/a/b/c/d/e.go"}},
		{"dirs match too", "", "a", SearchOptions{}, []string{"internal/a"}},
		{"symlinks match, not followed", "", "link-*", SearchOptions{}, []string{"link-internal", "link-out"}},
		{"in subdir", "internal/a", "*_test.go", SearchOptions{}, []string{"a_test.go"}},
		{"depth limited", "", "*.go", SearchOptions{MaxDepth: 3}, []string{"cmd/app/main.go", "cmd/tool/main.go", "internal/a/a.go", "internal/a/a_test.go"}},
		{"class", "", "[Rg]*", SearchOptions{}, []string{"README.md", "go.mod"}},
		{"no match", "", "*.rs", SearchOptions{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := fx.fs.Search(tc.p, tc.pattern, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := entryPaths(res.Matches); !slices.Equal(got, tc.want) {
				t.Errorf("matches = %v\nwant      %v", got, tc.want)
			}
			if res.Truncated || res.Pattern != tc.pattern || res.Scanned == 0 || res.Matches == nil {
				t.Errorf("result = %+v", res)
			}
		})
	}

	t.Run("truncated", func(t *testing.T) {
		res, err := fx.fs.Search("", "*.go", SearchOptions{MaxResults: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Matches) != 2 {
			t.Errorf("got %v truncated=%v", entryPaths(res.Matches), res.Truncated)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := fx.fs.SearchContext(ctx, "", "*", SearchOptions{})
		wantCode(t, err, mcperr.Cancelled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})

	for _, tc := range []struct {
		name, p, pattern string
		opt              SearchOptions
		code             mcperr.Code
		field            string
	}{
		{"empty pattern", "", "", SearchOptions{}, mcperr.Validation, "pattern"},
		{"only slashes", "", "//", SearchOptions{}, mcperr.Validation, "pattern"},
		{"absolute pattern", "", "/etc/*", SearchOptions{}, mcperr.Validation, "pattern"},
		{"dotdot pattern", "", "../*", SearchOptions{}, mcperr.Validation, "pattern"},
		{"bad glob", "", "[a-", SearchOptions{}, mcperr.Validation, "pattern"},
		{"bad glob segment", "", "a/[", SearchOptions{}, mcperr.Validation, "pattern"},
		{"negative results", "", "*", SearchOptions{MaxResults: -1}, mcperr.Validation, "max_results"},
		{"negative depth", "", "*", SearchOptions{MaxDepth: -1}, mcperr.Validation, "max_depth"},
		{"file", "go.mod", "*", SearchOptions{}, mcperr.Validation, "path"},
		{"outside", "../outside", "*", SearchOptions{}, mcperr.PermissionDeny, ""},
	} {
		t.Run("error/"+tc.name, func(t *testing.T) {
			_, err := fx.fs.Search(tc.p, tc.pattern, tc.opt)
			if fe := wantCode(t, err, tc.code); fe.Field != tc.field || fe.Op != "search" || fe.Path != tc.p {
				t.Errorf("error = %+v", fe)
			}
		})
	}
}

func TestMatchSegs(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"**", "a/b/c", true},
		{"**/c", "c", true},
		{"a/**", "a", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/*/b", "a/x/y/b", false},
		{"**/**/**/**/**/**/z", strings.Repeat("d/", 30) + "y", false},
		{"*.go", "x/y.go", false},
	} {
		if got := matchSegs(strings.Split(tc.pat, "/"), strings.Split(tc.name, "/")); got != tc.want {
			t.Errorf("matchSegs(%q, %q) = %v", tc.pat, tc.name, got)
		}
	}
}

func TestDelete(t *testing.T) {
	fx := tree(t, Limits{})
	fx.write(t, "keep/inner.txt", "k")

	for _, tc := range []struct {
		name      string
		p         string
		recursive bool
		typ       string
		removed   int
		gone      string
	}{
		{"file", "README.md", false, TypeFile, 1, "README.md"},
		{"file recursive flag", "go.mod", true, TypeFile, 1, "go.mod"},
		{"empty dir", "empty", false, TypeDir, 1, "empty"},
		{"symlink only", "link-internal", true, TypeSymlink, 1, "link-internal"},
		{"escaping symlink only", "link-out", false, TypeSymlink, 1, "link-out"},
		{"tree", "internal", true, TypeDir, 8, "internal"},
		{"tree with hidden", ".hidden", true, TypeDir, 2, ".hidden"},
		{"absolute", filepath.Join(fx.root, "a-b.txt"), false, TypeFile, 1, "a-b.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := fx.fs.Delete(tc.p, tc.recursive)
			if err != nil {
				t.Fatal(err)
			}
			want := DeleteResult{Path: tc.gone, Root: fx.root, Type: tc.typ, Removed: tc.removed}
			if *res != want {
				t.Errorf("result = %+v, want %+v", *res, want)
			}
			if _, err := os.Lstat(fx.in(tc.gone)); !os.IsNotExist(err) {
				t.Errorf("%s still exists", tc.gone)
			}
		})
	}
	// The symlinks' targets survive.
	for _, p := range []string{filepath.Join(fx.base, "outside/secret.txt")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	for _, tc := range []struct {
		name      string
		p         string
		recursive bool
		code      mcperr.Code
		msg       string
	}{
		{"non-empty without recursive", "keep", false, mcperr.Conflict, "set recursive"},
		{"missing", "nope", false, mcperr.NotFound, "does not exist"},
		{"root dot", ".", true, mcperr.PermissionDeny, "root"},
		{"root empty", "", true, mcperr.PermissionDeny, "root"},
		{"root slash", "/", true, mcperr.PermissionDeny, "outside the allowed roots"},
		{"root absolute", fx.root, true, mcperr.PermissionDeny, "root"},
		{"root absolute slash", fx.root + "/", true, mcperr.PermissionDeny, "root"},
		{"root unclean", "keep/..", true, mcperr.PermissionDeny, "root"},
		{"root unclean absolute", fx.root + "/keep/..", true, mcperr.PermissionDeny, "root"},
		{"parent", "..", true, mcperr.PermissionDeny, "escapes"},
		{"sibling", fx.root + "-evil", true, mcperr.PermissionDeny, "outside"},
	} {
		t.Run("error/"+tc.name, func(t *testing.T) {
			_, err := fx.fs.Delete(tc.p, tc.recursive)
			if fe := wantCode(t, err, tc.code); !strings.Contains(fe.Msg, tc.msg) || fe.Op != "delete" || fe.Path != tc.p {
				t.Errorf("error = %+v", fe)
			}
		})
	}
	if got := fx.read(t, "keep/inner.txt"); got != "k" {
		t.Error("keep/inner.txt damaged")
	}
	if _, err := os.Stat(filepath.Join(fx.base, "proj-evil/secret.txt")); err != nil {
		t.Error("sibling damaged")
	}
}

// TestDeleteThroughLink: a path crossing an escaping directory link is
// refused and nothing outside disappears.
func TestDeleteThroughLink(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.symlink(t, "../outside", "out")
	for _, rec := range []bool{false, true} {
		for _, p := range []string{"out/secret.txt", "out/dir", "out/dir/inner.txt"} {
			_, err := fx.fs.Delete(p, rec)
			wantCode(t, err, mcperr.PermissionDeny)
		}
	}
	// A tree holding links to the outside loses the links, not their targets.
	fx.symlink(t, "../../outside", "box/out")
	fx.symlink(t, "../../outside/secret.txt", "box/secret")
	res, err := fx.fs.Delete("box", true)
	if err != nil || res.Removed != 3 {
		t.Errorf("Delete(box) = %+v, %v", res, err)
	}
	for _, p := range []string{"outside/secret.txt", "outside/dir/inner.txt"} {
		if _, err := os.Stat(filepath.Join(fx.base, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestStat(t *testing.T) {
	fx := tree(t, Limits{})
	fx.symlink(t, "dangling-target", "dangling")
	for _, tc := range []struct {
		p               string
		path, name, typ string
		target          string
		size            int64
	}{
		{"go.mod", "go.mod", "go.mod", TypeFile, "", 1},
		{"cmd", "cmd", "cmd", TypeDir, "", -1},
		{"", ".", "proj", TypeDir, "", -1},
		{".", ".", "proj", TypeDir, "", -1},
		{fx.root, ".", "proj", TypeDir, "", -1},
		{"link-internal", "link-internal", "link-internal", TypeSymlink, "internal", 8},
		{"link-out", "link-out", "link-out", TypeSymlink, "", 10},
		{"dangling", "dangling", "dangling", TypeSymlink, "", 15},
		{"cmd/app/../app/main.go", "cmd/app/main.go", "main.go", TypeFile, "", 12},
	} {
		t.Run(tc.p, func(t *testing.T) {
			info, err := fx.fs.Stat(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if info.Path != tc.path || info.Name != tc.name || info.Type != tc.typ || info.Target != tc.target ||
				info.Root != fx.root || (tc.size >= 0 && info.Size != tc.size) || info.Mode == "" || info.ModTime.IsZero() {
				t.Errorf("Stat(%q) = %+v", tc.p, info)
			}
		})
	}
	for p, c := range map[string]mcperr.Code{"nope": mcperr.NotFound, "../outside": mcperr.PermissionDeny,
		"link-out/secret.txt": mcperr.PermissionDeny, "go.mod/x": mcperr.Validation} {
		_, err := fx.fs.Stat(p)
		wantCode(t, err, c)
	}
}
