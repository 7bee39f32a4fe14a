package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsDecodedIds(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run([]string{"-n", "3", "-machine", "42", "-type", "min-granularity", "-data-dir", t.TempDir()}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	for _, l := range lines {
		assert.Contains(t, l, "machine=42 ")
		assert.Contains(t, l, "type=1 ")
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	assert.ErrorContains(t, run([]string{"-machine", "1024", "-data-dir", t.TempDir()}, &strings.Builder{}), "machine")
	assert.ErrorContains(t, run([]string{"-type", "sideways"}, &strings.Builder{}), "type")
}
