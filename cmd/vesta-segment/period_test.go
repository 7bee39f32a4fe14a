package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreatePeriodTag(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := vs(t, "--data-dir", dir, "create-tag", "order", "--group", "day", "--format", "ORD{yyyyMMdd}{seq:6}")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "created period tag order: numbers from 1 each day, as ORD{yyyyMMdd}{seq:6}, step 100\n", out)

	code, out, errOut = vs(t, "--data-dir", dir, "create-tag", "order", "--group", "day", "--format", "ORD{yyyyMMdd}{seq:6}")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "period tag order exists and matches: each day, as ORD{yyyyMMdd}{seq:6}, step 100\n", out)

	code, _, errOut = vs(t, "--data-dir", dir, "create-tag", "order", "--group", "month", "--format", "ORD{yyyyMM}{seq:6}")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, `its group is "day", --group asks for "month"`)

	code, _, errOut = vs(t, "--data-dir", dir, "create-tag", "plain")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut = vs(t, "--data-dir", dir, "list")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out)
	assert.Equal(t, "plain", strings.Fields(lines[1])[0])
	assert.Equal(t, []string{"PERIOD", "TAG", "GROUP", "FORMAT", "STEP", "DESCRIPTION"}, strings.Fields(lines[3]))
	assert.Equal(t, []string{"order", "day", "ORD{yyyyMMdd}{seq:6}", "100"}, strings.Fields(lines[4]))
}

func TestCreatePeriodTagRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--group", "day"}, "give its --format too"},
		{[]string{"--format", "{yyyy}{seq}"}, "give --group"},
		{[]string{"--group", "week", "--format", "{yyyy}{seq}"}, `--group: invalid argument: group "week"`},
		{[]string{"--group", "day", "--format", "ORD{yyyyMMdd}"}, "--format: invalid argument"},
		{[]string{"--group", "month", "--format", "{yyyyMMdd}{seq}"}, "{dd} is finer than the group month"},
		{[]string{"--group", "day", "--format", "{yyyyMMdd}{seq:19}"}, "width must be 1..18"},
		{[]string{"--group", "day", "--format", "{yyyyMMdd}{hh}{seq}"}, "unknown field {hh}"},
		{[]string{"--group", "day", "--format", "{yyyyMMdd}{seq}", "--initial", "5"}, "--initial does not apply"},
	} {
		code, _, errOut := vs(t, append([]string{"--data-dir", dir, "create-tag", "order"}, c.args...)...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Contains(t, errOut, c.says, c.args)
	}
	code, _, errOut := vs(t, "--data-dir", dir, "list", "--group", "day")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--group belongs to create-tag")
}
