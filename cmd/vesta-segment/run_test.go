package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/stores"
)

// vs runs the command and returns its exit code and output.
func vs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCreateAndList(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := vs(t, "--data-dir", dir, "create-tag", "order", "--step", "1000", "--initial", "0")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "created tag order: first id 0, step 1000\n", out)

	code, _, errOut = vs(t, "--data-dir", dir, "create-tag", "invoice", "--description", "invoices 2025")
	require.Equal(t, exitOK, code, errOut)

	code, _, errOut = vs(t, "--data-dir", dir, "create-tag", "order")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, `segment tag "order": segment tag already exists`)
	assert.Contains(t, errOut, "its max_id (the next id to hand out) is 0, below --initial 1")

	code, out, errOut = vs(t, "list", "--data-dir", dir)
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, []string{"TAG", "MAX_ID", "STEP", "UPDATED", "(UTC)", "DESCRIPTION"}, strings.Fields(lines[0]))
	inv, ord := strings.Fields(lines[1]), strings.Fields(lines[2])
	assert.Equal(t, []string{"invoice", "1", "1000"}, inv[:3])
	assert.Equal(t, "invoices 2025", strings.Join(inv[5:], " "))
	assert.Equal(t, []string{"order", "0", "1000"}, ord[:3])
}

func TestSQLiteFileFromSegmentDSN(t *testing.T) {
	path := t.TempDir() + "/ids.db"
	code, _, errOut := vs(t, "--segment-dsn", path, "create-tag", "a")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := vs(t, "--segment-dsn", path, "list")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "\na ")
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{"drop-tag", "x"},
		{"create-tag"},
		{"create-tag", "a", "b"},
		{"list", "x"},
		{"list", "--step", "5"},
		{"--segment-store", "mysql", "list"},
		{"--no-such-flag", "list"},
	} {
		code, _, errOut := vs(t, append([]string{"--data-dir", dir}, args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
		assert.NotEmpty(t, errOut, args)
	}
	// PostgreSQL's parser refuses the DSN before any connection is tried.
	code, _, errOut := vs(t, "--segment-store", "postgres", "--segment-dsn", "host=db port=notaport dbname=vesta", "list")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "config key segmentDSN: \"(not shown: it may hold a password)\" from flag --segment-dsn: want a PostgreSQL URL or key=value DSN")
}

func TestRuntimeErrors(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"bad tag":        {"create-tag", "a b"},
		"bad step":       {"create-tag", "a", "--step", "0"},
		"segment off":    {"--segment-store", "off", "list"},
		"db unreachable": {"--segment-store", "postgres", "--segment-dsn", "postgres://127.0.0.1:1/x?connect_timeout=2", "list"},
	} {
		code, _, errOut := vs(t, append([]string{"--data-dir", dir}, args...)...)
		assert.Equal(t, exitError, code, "%s: %s", name, errOut)
		assert.True(t, strings.HasPrefix(errOut, "vesta-segment: "), name)
	}
}

func TestHelp(t *testing.T) {
	code, out, errOut := vs(t, "--help")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errOut, "--help is on stdout")
	assert.True(t, strings.HasPrefix(out, "vesta-segment: creates and lists the tags of segment mode"), out)
	assert.Contains(t, out, "create-tag TAG")
	assert.Contains(t, out, "--segment-store string")
	assert.Contains(t, out, "--step int")
	assert.Contains(t, out, "docs/segment.md")
}

// A usage error says what is wrong and how the command is used, briefly.
func TestUsageErrorSaysHow(t *testing.T) {
	code, out, errOut := vs(t, "--data-dir", t.TempDir(), "drop-tag", "x")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "vesta-segment: unknown command \"drop-tag\"\n\nusage:\n"+
		"  vesta-segment [flags] create-tag TAG [--step N] [--initial N] [--description TEXT]\n"+
		"  vesta-segment [flags] create-tag TAG --group day|month|year --format 'ORD{yyyyMMdd}{seq:6}' [--step N] [--description TEXT]\n"+
		"  vesta-segment [flags] list\n(see --help)\n", errOut)
}

// --help lists the keys vesta-segment reads (the file, the data dir, the
// segment store) and its own flags: nothing of the ID service, etcd, the
// servers or logging.
func TestHelpListsOnlyWhatItReads(t *testing.T) {
	_, out, _ := vs(t, "--help")
	var flags []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(line, "  --") {
			flags = append(flags, f[0])
		}
	}
	assert.Equal(t, []string{"--config", "--data-dir", "--segment-store", "--segment-dsn", "--segment-allow-async-failover",
		"--description", "--format", "--group", "--initial", "--step", "--version"}, flags, "by group, the command's own flags last")
}

// --help says what the keys do for vesta-segment: no high-water mark, no
// segmentStore off, no Vesta property names (it reads none).
func TestHelpTextsAreTrueForTheCommand(t *testing.T) {
	_, text, _ := vs(t, "--help")
	out := strings.Join(strings.Fields(text), " ")
	assert.Contains(t, out, "directory of segments.db")
	assert.Contains(t, out, "sqlite or postgres (default sqlite")
	for _, wrong := range []string{"high-water", "no-data-dir", "or off", "(vesta.", "Vesta's property name"} {
		assert.NotContains(t, out, wrong)
	}
	assert.Contains(t, out, "Precedence, highest first: the flag, the environment variable, the file's key, the default.")
}

// noDataDir, without a flag, is still read from a shared configuration:
// segment mode is then off, and the command says so.
func TestNoDataDirFromTheEnvironment(t *testing.T) {
	code, _, errOut := vs(t, "--no-data-dir", "list")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "unknown flag: --no-data-dir")

	t.Setenv("VESTA_NO_DATA_DIR", "true")
	code, _, errOut = vs(t, "list")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "segment mode is off")
}

// A config file shared with the servers may hold their keys: vesta-segment
// ignores them (and their variables), but refuses an unknown key.
func TestSharedConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vesta.yaml")
	require.NoError(t, os.WriteFile(file, []byte("machine: 7\nmachineProvider: etcd\netcdEndpoints: etcd-0:2379\n"+
		"listen: :8080\nlogLevel: debug\nsegmentTags: order\nsegmentStore: sqlite\ndataDir: "+dir+"\n"), 0o600))
	t.Setenv("VESTA_MACHINE", "not-a-number")
	code, out, errOut := vs(t, "--config", file, "create-tag", "invoice")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "created tag invoice")
	assert.FileExists(t, filepath.Join(dir, "segments.db"), "the data dir comes from the file")

	require.NoError(t, os.WriteFile(file, []byte("segmentStroe: off\n"), 0o600))
	code, _, errOut = vs(t, "--config", file, "list")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "unknown key segmentstroe: did you mean segmentStore?")
}

// create-tag is idempotent, for a deployment step that runs it every time:
// a row that matches what it asks is success (also once the tag is in use
// and its max_id has grown); a row that differs fails, naming every
// difference, and is left as it is.
func TestCreateTagAgain(t *testing.T) {
	dir := t.TempDir()
	create := []string{"--data-dir", dir, "create-tag", "order", "--step", "500", "--initial", "100", "--description", "orders"}
	code, out, errOut := vs(t, create...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "created tag order: first id 100, step 500\n", out)

	code, out, errOut = vs(t, create...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "tag order exists and matches: next id 100, step 500\n", out)
	assert.Empty(t, errOut)

	// The servers took ranges: max_id grew past --initial. Still the same tag.
	ctx := context.Background()
	st, err := stores.OpenStore(ctx, stores.Config{DataDir: dir})
	require.NoError(t, err)
	_, _, err = st.Alloc(ctx, "order", 0)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	code, out, errOut = vs(t, create...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "tag order exists and matches: next id 600, step 500\n", out)

	code, out, errOut = vs(t, "--data-dir", dir, "create-tag", "order", "--step", "1000", "--initial", "5000", "--description", "all orders")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, `vesta-segment: segment tag "order": segment tag already exists, and differs from what create-tag asks: `+
		`its step is 500, --step asks for 1000; its description is "orders", --description asks for "all orders"; `+
		`its max_id (the next id to hand out) is 600, below --initial 5000. The command changes no row: `+
		`run it with the row's values, or change the row with SQL (docs/segment.md)`+"\n", errOut)

	code, out, _ = vs(t, "--data-dir", dir, "list")
	require.Equal(t, exitOK, code)
	assert.Equal(t, []string{"order", "600", "500"}, strings.Fields(strings.Split(out, "\n")[1])[:3], "the row is left as it was")
}

// --version prints the version, as the servers' does (scripts/release.sh
// checks it).
func TestVersion(t *testing.T) {
	code, out, errOut := vs(t, "--version")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `^vesta-segment \S+\n$`, out)
}
