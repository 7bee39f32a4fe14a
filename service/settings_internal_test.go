package service

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The defaults are not exported constants: each Settings field's comment
// states its own, and this test keeps the comments true.
func TestSettingsCommentsStateDefaults(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "settings.go", nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "Settings" {
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				docs[field.Names[0].Name] = strings.Join(strings.Fields(field.Doc.Text()), " ")
			}
		}
		return true
	})
	assert.Contains(t, docs["Populator"], defaultPopulator+" (default)")
	assert.Contains(t, docs["MaxClockBackwardWait"], "0 means "+defaultMaxClockBackwardWait.String())
	assert.Contains(t, docs["EpochMillis"], "intf.DefaultEpochMillis")
}
