package archtest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// publicPackages lists the library packages an importer may use: every
// non-main package outside an internal/ folder, scripts/ and sample/.
func publicPackages(t *testing.T) map[string][]string {
	t.Helper()
	dirs, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}/...").Output()
	require.NoError(t, err)
	args := append([]string{"list", "-json=ImportPath,Name,Dir,GoFiles"}, strings.Fields(string(dirs))...)
	out, err := exec.Command("go", args...).Output()
	require.NoError(t, err, "go list")
	files := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath, Name, Dir string
			GoFiles               []string
		}
		require.NoError(t, dec.Decode(&p))
		rel := strings.TrimPrefix(p.ImportPath, module)
		if p.Name == "main" || strings.Contains(rel+"/", "/internal/") ||
			strings.HasPrefix(rel, "/scripts") || strings.HasPrefix(rel, "/sample") {
			continue
		}
		for _, f := range p.GoFiles {
			files[p.ImportPath] = append(files[p.ImportPath], filepath.Join(p.Dir, f))
		}
	}
	return files
}

// TestPublicAPINamesNoInternalType checks that no exported declaration of
// a public package names a package under internal/: an importer could not
// write the type, so the declaration would be usable only half.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := publicPackages(t)
	require.Contains(t, pkgs, module+"/service")
	var bad []string
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range pkgs {
			if !yield(p) {
				return
			}
		}
	}) {
		for _, file := range pkgs[path] {
			bad = append(bad, internalNames(t, file)...)
		}
	}
	require.Empty(t, bad, "exported declarations that name an internal package")
}

// internalNames lists the exported declarations of file that name a
// package under internal/, as FILE:LINE DECL names PKG.
func internalNames(t *testing.T, file string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	internal := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(p, module+"/") || !strings.Contains(p+"/", "/internal/") {
			continue
		}
		name := filepath.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = p
	}
	if len(internal) == 0 {
		return nil
	}
	var bad []string
	report := func(decl string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					if p, ok := internal[id.Name]; ok {
						bad = append(bad, fmt.Sprintf("%s:%d %s names %s.%s (%s)",
							filepath.Base(file), fset.Position(sel.Pos()).Line, decl, id.Name, sel.Sel.Name, p))
					}
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			report(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						report(s.Name.Name, exportedPart(s.Type))
					}
				case *ast.ValueSpec:
					// A value's type is what an importer writes; a constant
					// or variable set from an internal one has a public type.
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil {
							report(n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return bad
}

// exportedRecv tells whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	e := recv.List[0].Type
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if ix, ok := e.(*ast.IndexExpr); ok {
		e = ix.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedPart is a type expression less its unexported struct fields and
// interface methods, which an importer never sees.
func exportedPart(e ast.Expr) ast.Node {
	var list *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return e
	}
	kept := &ast.FieldList{}
	for _, f := range list.List {
		if len(f.Names) == 0 { // embedded: promoted, seen
			kept.List = append(kept.List, f)
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				kept.List = append(kept.List, f)
				break
			}
		}
	}
	return kept
}
