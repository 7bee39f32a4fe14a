// Package doccomment reads the doc comments of a Go file, for tests that
// keep a comment and a value in step: where a default is not exported,
// the comment of the option or field that takes it states it, and a test
// compares the two.
package doccomment

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// Funcs returns the doc comments of the functions and methods of file, by
// name, each on one line (runs of white space as one space).
func Funcs(file string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	docs := map[string]string{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Doc != nil {
			docs[fn.Name.Name] = oneLine(fn.Doc.Text())
		}
	}
	return docs, nil
}

// Fields returns the doc comments of the fields of struct typeName in
// file, by field name, each on one line.
func Fields(file, typeName string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var docs map[string]string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != typeName {
			return docs == nil
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		docs = map[string]string{}
		for _, field := range st.Fields.List {
			for _, name := range field.Names {
				docs[name.Name] = oneLine(field.Doc.Text())
			}
		}
		return false
	})
	if docs == nil {
		return nil, fmt.Errorf("%s: no struct type %s", file, typeName)
	}
	return docs, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
