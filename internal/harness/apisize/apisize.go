// Package apisize counts the exported names of a Go package, as go doc
// -all lists them: types, functions, methods, constants and variables. A
// test holds the public packages to their budgets.
package apisize

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// Names returns the exported names of the package in dir (its non-test
// files), methods as Type.Method.
func Names(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	var names []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, spec := range v.Decl.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if id.IsExported() {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	if len(files) > 0 {
		d, err := doc.NewFromFiles(fset, files, dir)
		if err != nil {
			return nil, err
		}
		values(d.Consts)
		values(d.Vars)
		for _, f := range d.Funcs {
			names = append(names, f.Name)
		}
		for _, t := range d.Types {
			names = append(names, t.Name)
			values(t.Consts)
			values(t.Vars)
			for _, f := range t.Funcs {
				names = append(names, f.Name)
			}
			for _, m := range t.Methods {
				names = append(names, t.Name+"."+m.Name)
			}
		}
	}
	return names, nil
}
