package service

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vesta-go/vesta/internal/doccomment"
)

// The defaults are not exported constants: each Settings field's comment
// states its own, and this test keeps the comments true.
func TestSettingsCommentsStateDefaults(t *testing.T) {
	docs, err := doccomment.Fields("settings.go", "Settings")
	require.NoError(t, err)
	assert.Contains(t, docs["Populator"], defaultPopulator+" (default)")
	assert.Contains(t, docs["MaxClockBackwardWait"], "0 means "+defaultMaxClockBackwardWait.String())
	assert.Contains(t, docs["EpochMillis"], "intf.DefaultEpochMillis")
}
