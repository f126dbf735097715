// Command callers-go is the Go reference of ops/bench/callers.py: it
// type-checks a Go module with the standard library's go/types and prints
// every call whose callee it resolves to a function or method, one JSON
// object per line (def_path is empty for a callee outside the module):
//
//	{"path":"mux.go","line":80,"col":9,"name":"handle","def_path":"mux.go","def_line":412}
//
// Packages of the module are type-checked from source; the standard library
// is imported from its export data; other modules are left unresolved, so a
// call into them is simply not reported. Only the go/types resolution of the
// call's identifier counts: a call through an interface reaches the
// interface's method, not a concrete one, because that is what the code
// names statically.
//
// Usage: go run . MODULE_DIR
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
)

type call struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Name    string `json:"name"`
	DefPath string `json:"def_path"`
	DefLine int    `json:"def_line"`
}

type module struct {
	root, path string
	fset       *token.FileSet
	std        types.Importer
	done       map[string]*types.Package
}

// Import type-checks an in-module package from its directory (its non-test
// files), and asks the standard library's export data for anything else.
func (m *module) Import(path string) (*types.Package, error) {
	if p, ok := m.done[path]; ok {
		return p, nil
	}
	if path == m.path || strings.HasPrefix(path, m.path+"/") {
		dir := filepath.Join(m.root, strings.TrimPrefix(strings.TrimPrefix(path, m.path), "/"))
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			return nil, err
		}
		files := m.parse(dir, bp.GoFiles)
		pkg, _ := m.check(path, files, nil)
		m.done[path] = pkg
		return pkg, nil
	}
	return m.std.Import(path)
}

func (m *module) parse(dir string, names []string) []*ast.File {
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(m.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err == nil {
			files = append(files, f)
		}
	}
	return files
}

// check type-checks files, tolerating errors: a package that does not
// fully type-check here still resolves most of its calls.
func (m *module) check(path string, files []*ast.File, info *types.Info) (*types.Package, error) {
	conf := types.Config{Importer: m, Error: func(error) {}}
	return conf.Check(path, m.fset, files, info)
}

func (m *module) rel(pos token.Pos) (string, int, bool) {
	p := m.fset.Position(pos)
	r, err := filepath.Rel(m.root, p.Filename)
	if err != nil || strings.HasPrefix(r, "..") || p.Filename == "" {
		return "", 0, false
	}
	return filepath.ToSlash(r), p.Line, true
}

func modulePath(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	return ""
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: callers-go MODULE_DIR")
		os.Exit(2)
	}
	root, _ := filepath.Abs(os.Args[1])
	fset := token.NewFileSet()
	// The standard library's positions must live in the same file set, or
	// they would be read as positions in the module's files.
	m := &module{root: root, path: modulePath(root), fset: fset,
		std: importer.ForCompiler(fset, "gc", nil), done: map[string]*types.Package{}}
	if m.path == "" {
		fmt.Fprintln(os.Stderr, "callers-go: no module line in go.mod")
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	filepath.WalkDir(root, func(dir string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		name := d.Name()
		if dir != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, dir)
		path := m.path
		if rel != "." {
			path += "/" + filepath.ToSlash(rel)
		}
		// The package with its in-package tests, then its external tests,
		// each checked with the calls recorded.
		groups := [][]string{append(append([]string{}, bp.GoFiles...), bp.TestGoFiles...), bp.XTestGoFiles}
		for k, names := range groups {
			if len(names) == 0 {
				continue
			}
			files := m.parse(dir, names)
			info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
			p := path
			if k == 1 {
				p += "_test"
			}
			m.check(p, files, info)
			for _, f := range files {
				ast.Inspect(f, func(n ast.Node) bool {
					c, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					fun := unparen(c.Fun)
					switch x := fun.(type) {
					case *ast.IndexExpr:
						fun = x.X
					case *ast.IndexListExpr:
						fun = x.X
					}
					var id *ast.Ident
					switch x := fun.(type) {
					case *ast.Ident:
						id = x
					case *ast.SelectorExpr:
						id = x.Sel
					default:
						return true
					}
					fn, ok := info.Uses[id].(*types.Func)
					if !ok {
						return true
					}
					// A callee outside the module is recorded too (with an
					// empty def_path): the call was judged, and it is not a
					// call of anything in the module.
					dp, dl, _ := m.rel(fn.Origin().Pos())
					cp, cl, ok := m.rel(id.Pos())
					if !ok {
						return true
					}
					enc.Encode(call{Path: cp, Line: cl, Col: m.fset.Position(id.Pos()).Column,
						Name: id.Name, DefPath: dp, DefLine: dl})
					return true
				})
			}
		}
		return nil
	})
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
