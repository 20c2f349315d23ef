// Package apisize counts the exported names of a Go package, as go doc
// -all lists them: types, functions, methods, constants and variables. A
// test holds the public packages to their budgets.
package apisize

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
)

// Names returns the exported names of the package in dir (its non-test
// files), methods as Type.Method.
func Names(dir string) ([]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return nil, err
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
	for _, p := range pkgs {
		d := doc.New(p, dir, 0)
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
