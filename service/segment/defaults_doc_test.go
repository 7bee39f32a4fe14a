package segment

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/internal/segdefault"
)

// The defaults are not exported: the comments of Settings' fields state
// them, and NextNumber's comment states the period margin and drift. These
// tests keep the comments and the values in step.

// written is how the comments write a value: durations as 60s, 500ms.
func written(v any) string {
	if d, ok := v.(time.Duration); ok && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	} else if ok {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return fmt.Sprint(v)
}

// fieldDocs are the comments of Settings' fields, by field name.
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "settings.go", nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Settings" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			for _, name := range field.Names {
				docs[name.Name] = strings.Join(strings.Fields(field.Doc.Text()), " ")
			}
		}
		return false
	})
	require.NotEmpty(t, docs)
	return docs
}

func TestSettingsCommentsStateTheDefaults(t *testing.T) {
	applied, err := Settings{Store: nopStore{}}.withDefaults()
	require.NoError(t, err)
	docs := fieldDocs(t)
	for field, def := range map[string]any{
		"MaxStep":             applied.MaxStep,
		"RefreshInterval":     applied.RefreshInterval,
		"LoadTimeout":         applied.LoadTimeout,
		"WaitTimeout":         applied.WaitTimeout,
		"RetryInterval":       applied.RetryInterval,
		"MissRefreshInterval": applied.MissRefreshInterval,
	} {
		re := regexp.MustCompile(`\b0 means ` + regexp.QuoteMeta(written(def)) + `\b`)
		assert.Regexp(t, re, docs[field], "Settings.%s's comment states its default %s", field, written(def))
	}
	// segdefault is the one definition: New applies it.
	assert.Equal(t, int64(segdefault.MaxStep), applied.MaxStep)
	assert.Equal(t, segdefault.LoadTimeout, applied.LoadTimeout)
}

func TestNextNumberCommentStatesTheMargins(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "number.go", nil, parser.ParseComments)
	require.NoError(t, err)
	var doc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "NextNumber" {
			doc = fn.Doc.Text()
		}
	}
	require.NotEmpty(t, doc)
	assert.Contains(t, doc, fmt.Sprintf("a margin of %s and a drift of %d ppm", written(periodClockMargin), periodDriftPPM))
	assert.Contains(t, doc, fmt.Sprintf("dbNow + (T - sent) + %s + (T - sent) * %d / 1e6", written(periodClockMargin), periodDriftPPM))
}
