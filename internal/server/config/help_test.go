package config

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// help returns the --help of a program registering groups, with one flag
// of its own.
func help(t *testing.T, d Defaults, groups ...Group) string {
	t.Helper()
	fs := pflag.NewFlagSet("prog", pflag.ContinueOnError)
	l := Register(fs, d, groups...)
	fs.Bool("version", false, "print the version and exit")
	var b bytes.Buffer
	require.NoError(t, l.WriteHelp(&b, "prog", Help{Summary: "does one thing.", Docs: []string{"docs/prog.md"}}))
	return b.String()
}

// helpEntries splits a --help into its flags' entries: "--name type" and
// the description, its wrapped lines joined.
func helpEntries(t *testing.T, text string) map[string][2]string {
	t.Helper()
	entries := map[string][2]string{}
	var last string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "  --"):
			left, rest, _ := strings.Cut(strings.TrimSpace(line), "  ")
			name := strings.Fields(left)[0]
			require.NotContains(t, entries, name, "one entry per flag")
			entries[name] = [2]string{left, strings.TrimSpace(rest)}
			last = name
		case strings.HasPrefix(line, "      ") && last != "":
			e := entries[last]
			e[1] = strings.TrimSpace(e[1] + " " + strings.TrimSpace(line))
			entries[last] = e
		default:
			last = ""
		}
	}
	return entries
}

// --help names each key's type: int, duration, string list, string, and
// a boolean flag alone. The types are true: a value that is not one is
// refused, naming the key.
func TestHelpTypes(t *testing.T) {
	entries := helpEntries(t, help(t, restDefaults))
	for flag, want := range map[string]string{
		"--machine": "--machine int", "--gen-method": "--gen-method int", "--epoch": "--epoch int",
		"--max-batch": "--max-batch int", "--lease-ttl": "--lease-ttl duration",
		"--max-borrow": "--max-borrow duration", "--no-data-dir": "--no-data-dir", "--reset-data-dir": "--reset-data-dir",
		"--ips": "--ips strings", "--etcd-endpoints": "--etcd-endpoints strings", "--segment-tags": "--segment-tags strings",
		"--type": "--type string", "--listen": "--listen string", "--data-dir": "--data-dir string", "--version": "--version",
	} {
		assert.Equal(t, want, entries[flag][0], flag)
	}
	for _, k := range Keys() {
		e, ok := entries["--"+k.Flag]
		require.True(t, ok, "--%s in --help", k.Flag)
		var bad string
		switch typ := strings.TrimPrefix(strings.TrimPrefix(e[0], "--"+k.Flag), " "); typ {
		case typeInt:
			bad = "1x"
		case typeDuration:
			bad = "5" // no unit
		case "": // bool
			bad = "maybe"
		default:
			continue
		}
		_, err := load(t, "--data-dir", t.TempDir(), "--"+k.Flag+"="+bad)
		require.ErrorIs(t, err, intf.ErrInvalidArgument, "--%s=%s", k.Flag, bad)
		assert.Contains(t, err.Error(), "config key "+k.Name+": ", "--%s=%s", k.Flag, bad)
	}
}

// Each key's entry gives one default — the program's — and its variable
// and file key.
func TestHelpDefaultsOnce(t *testing.T) {
	text := help(t, restDefaults)
	entries := helpEntries(t, text)
	fs := pflag.NewFlagSet("prog", pflag.ContinueOnError)
	l := Register(fs, restDefaults)
	defaultWord := regexp.MustCompile(`\bdefault\b`)
	for _, k := range Keys() {
		desc := entries["--"+k.Flag][1]
		assert.LessOrEqual(t, len(defaultWord.FindAllString(desc, -1)), 1, "--%s: one default: %s", k.Flag, desc)
		def := l.defaultOf(k)
		switch {
		case def == "false":
			assert.NotContains(t, desc, "default", "--%s: a boolean is off unless given", k.Flag)
		case def != "":
			assert.Contains(t, desc, "(default "+def+")", "--%s", k.Flag)
		}
		where := "[" + k.Env + ", key " + k.Name + "]"
		if k.Name == KeyConfig {
			where = "[" + k.Env + "]"
		}
		assert.True(t, strings.HasSuffix(desc, where), "--%s names its variable and key: %s", k.Flag, desc)
	}
	assert.Contains(t, entries["--listen"][1], "(default :8080)")
	assert.Contains(t, entries["--gen-method"][1], "(default 2)")
	assert.Contains(t, helpEntries(t, help(t, Defaults{Listen: ":20880", GenMethod: 1}))["--listen"][1], "(default :20880)")
}

// --help begins with what the program does and its usage and ends with
// how settings are given: variables, precedence, where the docs are.
func TestHelpHeaderAndFooter(t *testing.T) {
	text := help(t, restDefaults)
	assert.True(t, strings.HasPrefix(text, "prog: does one thing.\n\nUsage:\n  prog [flags]\n"), text)
	assert.Contains(t, text, "\nOther flags:\n  --version ")
	flat := strings.Join(strings.Fields(text), " ")
	for _, s := range []string{
		"A flag with brackets is a setting: they name its environment variable and its key in the config file",
		"Precedence, highest first: the flag, the environment variable, the file's key, Vesta's property name in the file (vesta.machine, ...), the default.",
		"A VESTA_* variable or a file key that is no setting is refused",
		"A boolean flag alone means true (--reset-data-dir); --reset-data-dir=false turns it off.",
		"Documentation: docs/configuration.md (every setting), docs/prog.md",
	} {
		assert.Contains(t, flat, s)
	}
	for _, line := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, len(line), helpWidth, "line %q", line)
	}
}

func TestHelpListsOnlyTheGroups(t *testing.T) {
	entries := helpEntries(t, help(t, Defaults{}, segmentOnly...))
	var flags []string
	for f := range entries {
		flags = append(flags, f)
	}
	assert.ElementsMatch(t, []string{"--config", "--data-dir", "--no-data-dir", "--segment-allow-async-failover", "--segment-dsn", "--segment-store", "--version"}, flags)
	text := help(t, Defaults{}, segmentOnly...)
	assert.Contains(t, text, "\nData dir:\n")
	assert.NotContains(t, text, "\nID service:\n")
}

// A boolean key's flag takes the next argument as its value when that is
// a boolean, or, in a program without arguments, any word: --no-data-dir
// maybe is refused exactly as --no-data-dir=maybe.
func TestBoolFlagValueAsNextArgument(t *testing.T) {
	parse := func(takesArgs bool, args ...string) (Config, []string, error) {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		l := Register(fs, restDefaults)
		l.TakesArgs = takesArgs
		if err := l.Parse(append([]string{"--segment-store", "off"}, args...)); err != nil { // Load touches no disk
			return Config{}, nil, err
		}
		c, err := l.Load()
		return c, fs.Args(), err
	}
	_, _, joined := parse(false, "--no-data-dir=maybe")
	require.ErrorIs(t, joined, intf.ErrInvalidArgument)
	_, args, apart := parse(false, "--no-data-dir", "maybe")
	require.Error(t, apart)
	assert.Equal(t, joined.Error(), apart.Error())
	assert.Empty(t, args)
	assert.Contains(t, apart.Error(), `config key noDataDir: "maybe" from flag --no-data-dir: want true or false`)

	for _, tc := range []struct {
		takesArgs bool
		args      []string
		want      bool
		rest      []string
	}{
		{false, []string{"--no-data-dir"}, true, nil},
		{false, []string{"--no-data-dir", "false"}, false, nil},
		{false, []string{"--no-data-dir", "OFF", "--machine", "3"}, false, nil},
		{false, []string{"--no-data-dir", "--machine", "3"}, true, nil},
		{true, []string{"--no-data-dir", "list"}, true, []string{"list"}},
		{true, []string{"--no-data-dir", "no", "list"}, false, []string{"list"}},
		{true, []string{"list", "--no-data-dir", "yes"}, true, []string{"list"}},
		{true, []string{"--", "--no-data-dir", "false"}, false, []string{"--no-data-dir", "false"}},
		{true, []string{"--machine", "--no-data-dir"}, false, nil}, // --machine's value
	} {
		c, rest, err := parse(tc.takesArgs, tc.args...)
		if tc.args[0] == "--machine" {
			require.Error(t, err, "%v: --no-data-dir is --machine's value", tc.args)
			assert.Contains(t, err.Error(), `config key machine: "--no-data-dir" from flag --machine`)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, c.Service.NoDataDir, "%v", tc.args)
		assert.Equal(t, tc.rest, append([]string(nil), rest...), "%v", tc.args)
	}
}

// An unknown flag names the nearest real one, when one is near.
func TestUnknownFlagSuggestion(t *testing.T) {
	for args, want := range map[string]string{
		"--machien=3":     "unknown flag: --machien: did you mean --machine?",
		"--data-dri":      "unknown flag: --data-dri: did you mean --data-dir?",
		"--no-datadir":    "unknown flag: --no-datadir: did you mean --no-data-dir?",
		"--frobnicate":    "unknown flag: --frobnicate",
		"--etcd-lease-tl": "unknown flag: --etcd-lease-tl: did you mean --lease-ttl?",
		"--lease-tl":      "unknown flag: --lease-tl: did you mean --lease-ttl?",
	} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		err := Register(fs, restDefaults).Parse([]string{args})
		require.Error(t, err, args)
		assert.Equal(t, want, err.Error())
	}
}

// A program's Usage replaces a key's text in its --help only; a FileOnly
// key has no flag and no entry, but is still read from the environment
// and the file. With no key that has a Vesta property name, the footer
// names none.
func TestHelpTailoredToTheProgram(t *testing.T) {
	d := Defaults{Usage: map[string]string{KeyDataDir: "directory of segments.db"}, FileOnly: []string{KeyNoDataDir}}
	text := help(t, d, segmentOnly...)
	entries := helpEntries(t, text)
	assert.Equal(t, "directory of segments.db [VESTA_DATA_DIR, key dataDir]", entries["--data-dir"][1])
	assert.NotContains(t, entries, "--no-data-dir")
	assert.NotContains(t, text, "vesta.machine")
	assert.NotContains(t, helpEntries(t, help(t, restDefaults))["--data-dir"][1], "directory of segments.db",
		"the table's text elsewhere")

	fs := pflag.NewFlagSet("prog", pflag.ContinueOnError)
	l := Register(fs, d, segmentOnly...)
	assert.Nil(t, fs.Lookup("no-data-dir"))
	require.Error(t, fs.Parse([]string{"--no-data-dir"}))
	t.Setenv("VESTA_NO_DATA_DIR", "true")
	c, err := l.Load()
	require.NoError(t, err)
	assert.True(t, c.Service.NoDataDir, "read from the environment")
	assert.Equal(t, segspec.Off, c.Segment.Store)
}
