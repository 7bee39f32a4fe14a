package config

import (
	"sort"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// loadGroups parses args with a fresh flag set registering only groups.
func loadGroups(t *testing.T, groups []Group, args ...string) (Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	l := Register(fs, Defaults{}, groups...)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	return l.Load()
}

var segmentOnly = []Group{GroupDataDir, GroupSegment}

func flagNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	return names
}

func TestRegisterOnlyTheGroups(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	Register(fs, Defaults{}, segmentOnly...)
	assert.Equal(t, []string{"config", "data-dir", "no-data-dir", "segment-allow-async-failover", "segment-dsn", "segment-store"}, flagNames(fs),
		"the file key always, then only the groups' keys")

	fs = pflag.NewFlagSet("test", pflag.ContinueOnError)
	Register(fs, restDefaults)
	aliases := 0
	for _, k := range Keys() {
		if k.Alias.Flag != "" {
			aliases++
		}
	}
	assert.Len(t, flagNames(fs), len(Keys())+aliases, "no groups: every key (ServerGroups), and each alias's flag")
	for _, k := range Keys() {
		assert.Contains(t, ServerGroups(), k.Group, "key %s is in a group the servers read", k.Name)
	}
}

// A file or environment shared by several programs may hold the keys of
// groups a program does not read: it ignores them, even when their values
// are wrong, but still refuses unknown keys.
func TestOtherGroupsKeysAreIgnored(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VESTA_MACHINE", "not-a-number")
	t.Setenv("VESTA_LISTEN", "")
	file := writeFile(t, "shared.yaml", "machine: 5000\nlisten: nowhere\netcdEndpoints: etcd-0:2379\nlogLevel: loud\n"+
		"segmentTags: 'a b'\nsegmentStore: sqlite\ndataDir: "+dir+"\n")
	c, err := loadGroups(t, segmentOnly, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, segspec.SQLite, c.Segment.Store)
	assert.Equal(t, dir, c.Segment.DataDir)
	assert.Empty(t, c.Segment.Tags, "segmentTags is not read")
	assert.Zero(t, c.Service.Machine)

	_, err = loadGroups(t, segmentOnly, "--config", writeFile(t, "typo.yaml", "segmentStroe: off\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown key segmentstroe: did you mean segmentStore?")

	t.Setenv("VESTA_SEGMENT_STORE", "mysql")
	_, err = loadGroups(t, segmentOnly)
	require.ErrorIs(t, err, intf.ErrInvalidArgument, "the program's own keys are still read strictly")
	assert.Contains(t, err.Error(), "config key segmentStore:")

	_, err = loadGroups(t, segmentOnly, "--machine", "1")
	require.Error(t, err, "no flag for a key the program does not read")
}

func TestProviderEtcdNeedsTheEtcdGroup(t *testing.T) {
	_, err := loadGroups(t, []Group{GroupService}, "--machine-provider", "etcd")
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "config key machineProvider:")
	assert.Contains(t, err.Error(), "no etcd keys")
}

// Each key's documented default (Key.Default, also the flag's default in
// --help) is the default the loader applies: giving it explicitly changes
// nothing. Program defaults (listen, genMethod) are the Defaults given.
func TestKeyDefaultsAreTheLoadersDefaults(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--data-dir", dir}
	plain, err := load(t, base...)
	require.NoError(t, err)
	plain = comparable(plain)
	for _, k := range Keys() {
		def := k.Default
		switch k.Name {
		case KeyListen:
			def = restDefaults.Listen
		case KeyGenMethod:
			def = num(restDefaults.GenMethod)
		}
		if def == "" {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			c, err := load(t, append(base, "--"+k.Flag+"="+def)...)
			require.NoError(t, err)
			assert.Equal(t, plain, comparable(c))
		})
	}
	assert.Equal(t, "5m", dur(5*time.Minute))
	assert.Equal(t, "1h", dur(time.Hour))
	assert.Equal(t, "1h30m", dur(90*time.Minute))
	assert.Equal(t, "10s", dur(10*time.Second))
}

// comparable drops what differs between two loads of the same values.
func comparable(c Config) Config {
	c.Service.Logger = nil
	c.MachineSource, c.sources = Source{}, nil // where values were set, not what they are
	return c
}
