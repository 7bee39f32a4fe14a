// Package apicount counts the exported names of a Go package, the measure
// of a public surface: scripts/apisize prints it per package and
// internal/archtest bounds the surface an embedder reads.
package apicount

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
)

// Count is the number of exported names of the package in dir as go/doc
// sees them: constants, variables, functions, types, methods, and the
// exported fields of structs and methods of interfaces (test files
// aside).
func Count(dir string) (int, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return 0, err
	}
	n := 0
	for name, p := range pkgs {
		if strings.HasSuffix(name, "_test") {
			continue
		}
		d := doc.New(p, dir, 0)
		n += values(d.Consts) + values(d.Vars) + len(d.Funcs)
		for _, t := range d.Types {
			n += 1 + values(t.Consts) + values(t.Vars) + len(t.Funcs) + len(t.Methods)
			n += members(t.Decl)
		}
	}
	return n, nil
}

// values counts the exported names of const or var groups.
func values(vs []*doc.Value) int {
	n := 0
	for _, v := range vs {
		for _, name := range v.Names {
			if ast.IsExported(name) {
				n++
			}
		}
	}
	return n
}

// members counts a type's exported struct fields or interface methods.
func members(decl *ast.GenDecl) int {
	n := 0
	for _, spec := range decl.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok {
			continue
		}
		var list *ast.FieldList
		switch t := ts.Type.(type) {
		case *ast.StructType:
			list = t.Fields
		case *ast.InterfaceType:
			list = t.Methods
		}
		if list == nil {
			continue
		}
		for _, f := range list.List {
			if len(f.Names) == 0 { // embedded
				if id := embeddedName(f.Type); id != "" && ast.IsExported(id) {
					n++
				}
				continue
			}
			for _, name := range f.Names {
				if name.IsExported() {
					n++
				}
			}
		}
	}
	return n
}

func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.IndexExpr:
		return embeddedName(t.X)
	}
	return ""
}
