package kit_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The kit is what a server author reads; the protocol engine lives in
// kit/internal/engine (docs/architecture.md, "The kit's house"). These tests
// keep it that way:
//
//   - the kit's API — its exported package-level names plus the exported
//     methods of its exported types (an alias's too: they are the author's
//     to read) — stays under maxKitAPI;
//   - the kit's files depend on each other in one direction: no two files
//     reach each other, directly or around a circle, so each file can be
//     read knowing only the files below it.
const maxKitAPI = 90

// checkedKit type-checks the non-test files of shared/kit, with its imports
// read from the compiler's export data (go list -export).
func checkedKit(t *testing.T) (*token.FileSet, []*ast.File, *types.Package, *types.Info) {
	t.Helper()
	const kitPath = "github.com/mcp-fleet/mcp-fleet/shared/kit"
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Dir,GoFiles", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	var names []string // the kit's non-test files, as the build sees them
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath, Export, Dir string
			GoFiles                 []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == kitPath {
			for _, f := range p.GoFiles {
				names = append(names, filepath.Join(p.Dir, f))
			}
		}
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check(kitPath, fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	return fset, files, pkg, info
}

// kitAPI lists the kit's exported names: "Name" for package-level ones and
// "Type.Method" for methods.
func kitAPI(pkg *types.Package) []string {
	var api []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		api = append(api, name)
		tn, ok := obj.(*types.TypeName)
		if !ok {
			continue
		}
		mset := types.NewMethodSet(types.NewPointer(tn.Type()))
		for i := 0; i < mset.Len(); i++ {
			m := mset.At(i).Obj()
			// Methods promoted from embedded fields of other packages'
			// types count where they are declared.
			if m.Exported() && len(mset.At(i).Index()) == 1 {
				api = append(api, name+"."+m.Name())
			}
		}
	}
	return api
}

func TestKitAPIIsSmall(t *testing.T) {
	_, _, pkg, _ := checkedKit(t)
	api := kitAPI(pkg)
	t.Logf("shared/kit exports %d names: %s", len(api), strings.Join(api, " "))
	if len(api) >= maxKitAPI {
		t.Errorf("shared/kit exports %d names (at most %d): what only the engine needs belongs in kit/internal/engine", len(api), maxKitAPI-1)
	}
}

func TestKitFilesHaveNoCircles(t *testing.T) {
	fset, files, pkg, info := checkedKit(t)
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.File(pos).Name()) }
	// Where each of the package's objects (and methods) is declared.
	declared := map[types.Object]string{}
	for id, obj := range info.Defs {
		if obj != nil && obj.Pkg() == pkg && obj.Parent() == pkg.Scope() || isMethodOrField(obj, pkg) {
			declared[obj] = fileOf(id.Pos())
		}
	}
	deps := map[string]map[string]bool{}
	for _, f := range files {
		deps[fileOf(f.Pos())] = map[string]bool{}
	}
	for id, obj := range info.Uses {
		if to, ok := declared[obj]; ok {
			if from := fileOf(id.Pos()); from != to {
				deps[from][to] = true
			}
		}
	}
	var edges int
	for _, to := range deps {
		edges += len(to)
	}
	t.Logf("shared/kit: %d files, %d file-to-file dependencies", len(deps), edges)
	for _, circle := range circles(deps) {
		t.Errorf("files of shared/kit reach each other: %s", strings.Join(circle, " → "))
		for _, f := range circle[:len(circle)-1] {
			t.Logf("  %s uses %s", f, strings.Join(slices.Sorted(maps.Keys(deps[f])), ", "))
		}
	}
}

func isMethodOrField(obj types.Object, pkg *types.Package) bool {
	if obj == nil || obj.Pkg() != pkg {
		return false
	}
	switch o := obj.(type) {
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// circles returns one circle per strongly connected group of more than one
// file (Tarjan), each as the files in it, the first repeated at the end.
func circles(deps map[string]map[string]bool) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range slices.Sorted(maps.Keys(deps[v])) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var group []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				group = append(group, w)
				if w == v {
					break
				}
			}
			if len(group) > 1 {
				sort.Strings(group)
				out = append(out, append(group, group[0]))
			}
		}
	}
	for _, v := range slices.Sorted(maps.Keys(deps)) {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return out
}
