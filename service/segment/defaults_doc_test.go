package segment

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/doccomment"
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
	docs, err := doccomment.Fields("settings.go", "Settings")
	require.NoError(t, err)
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
	docs, err := doccomment.Funcs("number.go")
	require.NoError(t, err)
	doc := docs["NextNumber"]
	require.NotEmpty(t, doc)
	assert.Contains(t, doc, fmt.Sprintf("a margin of %s and a drift of %d ppm", written(periodClockMargin), periodDriftPPM))
	assert.Contains(t, doc, fmt.Sprintf("dbNow + (T - sent) + %s + (T - sent) * %d / 1e6", written(periodClockMargin), periodDriftPPM))
}
