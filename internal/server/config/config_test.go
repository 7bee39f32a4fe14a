package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
)

var restDefaults = Defaults{Listen: ":8080", GenMethod: intf.GenMethodREST}

// load parses args with a fresh flag set, as a main does.
func load(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	l := Register(fs, restDefaults)
	require.NoError(t, fs.Parse(args))
	return l.Load()
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestDefaults(t *testing.T) {
	c, err := load(t)
	require.NoError(t, err)
	assert.Equal(t, ":8080", c.Listen)
	assert.Equal(t, int64(intf.GenMethodREST), c.Service.GenMethod)
	assert.Equal(t, int64(0), c.Service.Machine)
	assert.Equal(t, intf.MaxPeak, c.Service.Type)
	assert.Equal(t, service.PopulatorLock, c.Service.Populator)
	assert.Equal(t, intf.DefaultEpochMillis, c.Service.EpochMillis)
	assert.Equal(t, 5*time.Second, c.Service.MaxClockBackwardWait)
	assert.Equal(t, DefaultMaxBatch, c.MaxBatch)
	assert.Equal(t, ProviderProperty, c.MachineProvider)
	assert.Equal(t, "default", c.MachineSource.String())
	assert.NotNil(t, c.Service.Logger)
}

func TestFlagsEnvFilePrecedence(t *testing.T) {
	file := writeFile(t, "v.yaml", "machine: 1\ngenMethod: 3\ntype: min-granularity\npopulator: atomic\n")
	t.Setenv("VESTA_MACHINE", "2")
	t.Setenv("VESTA_POPULATOR", "packed")
	c, err := load(t, "--config", file, "--machine", "3")
	require.NoError(t, err)
	assert.Equal(t, int64(3), c.Service.Machine, "flag beats env")
	assert.Equal(t, "flag --machine", c.MachineSource.String(), "the status page says where the id was set")
	assert.Equal(t, service.PopulatorPacked, c.Service.Populator, "env beats file")
	assert.Equal(t, int64(3), c.Service.GenMethod, "file beats default")
	assert.Equal(t, intf.MinGranularity, c.Service.Type)
	assert.Equal(t, file, c.File)
}

func TestAllKeysFromEnv(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"VESTA_MACHINE": "1023", "VESTA_GEN_METHOD": "0", "VESTA_TYPE": "1", "VESTA_VERSION": "1",
		"VESTA_POPULATOR": "sync", "VESTA_EPOCH": "1577836800000", "VESTA_DATA_DIR": dir,
		"VESTA_MAX_CLOCK_BACKWARD_WAIT": "1m", "VESTA_LISTEN": "127.0.0.1:0", "VESTA_MAX_BATCH": "100000",
		"VESTA_LOG_LEVEL": "debug", "VESTA_LOG_FORMAT": "json",
	} {
		t.Setenv(k, v)
	}
	c, err := load(t)
	require.NoError(t, err)
	s := c.Service
	assert.Equal(t, []any{int64(1023), int64(0), intf.MinGranularity, int64(1), "sync", int64(1577836800000), dir, time.Minute},
		[]any{s.Machine, s.GenMethod, s.Type, s.Version, s.Populator, s.EpochMillis, s.DataDir, s.MaxClockBackwardWait})
	assert.Equal(t, "127.0.0.1:0", c.Listen)
	assert.Equal(t, 100000, c.MaxBatch)
	assert.Equal(t, "json", c.LogFormat)
	assert.True(t, c.Service.Logger.Enabled(t.Context(), -4), "debug enabled")
}

func TestVestaPropertiesFile(t *testing.T) {
	file := writeFile(t, "vesta.properties", "vesta.machine=1022\nvesta.genMethod=0\nvesta.type=1\nvesta.port=9999\nvesta.atomic.impl.key=true\n")
	c, err := load(t, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, int64(1022), c.Service.Machine)
	assert.Equal(t, int64(0), c.Service.GenMethod)
	assert.Equal(t, intf.MinGranularity, c.Service.Type)
	assert.Equal(t, ":9999", c.Listen)
	assert.Equal(t, service.PopulatorAtomic, c.Service.Populator)

	file = writeFile(t, "vesta.properties", "vesta.sync.lock.impl.key=on\nvesta.ips=10.0.0.1,10.0.0.2\n")
	c, err = load(t, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, service.PopulatorSync, c.Service.Populator)
	assert.Equal(t, ProviderIPs, c.MachineProvider, "ips alone selects the ips provider")
	assert.Equal(t, "file "+file+" line 2", c.MachineSource.String())
	assert.Equal(t, machineid.IPList{IPs: []string{"10.0.0.1", "10.0.0.2"}}, c.Service.MachineProvider)
}

func TestFileFormats(t *testing.T) {
	for name, body := range map[string]string{
		"c.yaml": "genMethod: 1\nips: [10.0.0.1, 10.0.0.2]\nmachineProvider: ips\n",
		"c.toml": "genMethod = 1\nips = \"10.0.0.1,10.0.0.2\"\nmachineProvider = \"ips\"\n",
		"c.json": `{"genMethod": 1, "ips": "10.0.0.1,10.0.0.2", "machineProvider": "ips"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := load(t, "--config", writeFile(t, name, body))
			require.NoError(t, err)
			assert.Equal(t, int64(1), c.Service.GenMethod)
			assert.Equal(t, machineid.IPList{IPs: []string{"10.0.0.1", "10.0.0.2"}}, c.Service.MachineProvider)
		})
	}
}

func TestMachineProviders(t *testing.T) {
	c, err := load(t, "--machine-provider", "hostname", "--hostname", "ids-5")
	require.NoError(t, err)
	assert.Equal(t, machineid.Hostname{Hostname: "ids-5"}, c.Service.MachineProvider)
	assert.Equal(t, "flag --hostname", c.MachineSource.String())
	c, err = load(t, "--machine-provider", "ips", "--ips", "10.1.1.1")
	require.NoError(t, err)
	assert.Equal(t, machineid.IPList{IPs: []string{"10.1.1.1"}}, c.Service.MachineProvider)
}

func TestInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		key  string
	}{
		{[]string{"--machine", "1024"}, "machine"},
		{[]string{"--machine", "-1"}, "machine"},
		{[]string{"--machine", "abc"}, "machine"},
		{[]string{"--machine", "1.5"}, "machine"},
		{[]string{"--gen-method", "4"}, "genMethod"},
		{[]string{"--type", "2"}, "type"},
		{[]string{"--type", "peak"}, "type"},
		{[]string{"--id-version", "2"}, "version"},
		{[]string{"--populator", "nope"}, "populator"},
		{[]string{"--epoch", "-1"}, "epoch"},
		{[]string{"--epoch", "99999999999999"}, "epoch"},
		{[]string{"--no-data-dir=maybe"}, "noDataDir"},
		{[]string{"--max-clock-backward-wait", "5"}, "maxClockBackwardWait"},
		{[]string{"--max-clock-backward-wait", "-1s"}, "maxClockBackwardWait"},
		{[]string{"--max-clock-backward-wait", "48h"}, "maxClockBackwardWait"},
		{[]string{"--listen", "8080"}, "listen"},
		{[]string{"--listen", ":99999"}, "listen"},
		{[]string{"--max-batch", "0"}, "maxBatch"},
		{[]string{"--max-batch", "100001"}, "maxBatch"},
		{[]string{"--log-level", "loud"}, "logLevel"},
		{[]string{"--log-format", "xml"}, "logFormat"},
		{[]string{"--machine-provider", "dns"}, "machineProvider"},
		{[]string{"--machine-provider", "ips"}, "ips"},
		{[]string{"--epoch", "0"}, "epoch"},
		// Empty values of keys that mean nothing when empty are refused, not
		// taken for the default (an empty --listen would bind every interface).
		{[]string{"--listen="}, "listen"},
		{[]string{"--type="}, "type"},
		{[]string{"--populator="}, "populator"},
		{[]string{"--machine-provider="}, "machineProvider"},
		{[]string{"--max-clock-backward-wait="}, "maxClockBackwardWait"},
		{[]string{"--log-level="}, "logLevel"},
		{[]string{"--segment-store="}, "segmentStore"},
		{[]string{"--segment-store", "off", "--segment-tags", "order"}, "segmentTags"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := load(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+tc.key+":")
		})
	}
}

func TestInvalidEnvNamesKey(t *testing.T) {
	t.Setenv("VESTA_TYPE", "sideways")
	_, err := load(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config key type")
}

// An empty variable of a key whose empty value has a meaning (dataDir,
// segmentDSN, ips, ...) is ignored: it must not silently replace the
// file's value (an empty VESTA_DATA_DIR would move the high-water mark).
func TestEmptyEnvNeverOverridesTheFile(t *testing.T) {
	for _, env := range []string{"VESTA_DATA_DIR", "VESTA_SEGMENT_DSN", "VESTA_IPS"} {
		t.Setenv(env, "")
	}
	dir := t.TempDir()
	c, err := load(t, "--config", writeFile(t, "c.yaml", "dataDir: "+dir+"\nsegmentDSN: "+dir+"/seg.db\nips: 10.1.2.3\n"))
	require.NoError(t, err)
	assert.Equal(t, dir, c.Service.DataDir)
	assert.Equal(t, dir+"/seg.db", c.Segment.DSN)
	assert.Equal(t, machineid.IPList{IPs: []string{"10.1.2.3"}}, c.Service.MachineProvider)

	t.Setenv("VESTA_ETCD_PREFIX", "")
	_, err = load(t, "--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379")
	require.Error(t, err, "an empty etcdPrefix means nothing")
	assert.Contains(t, err.Error(), "config key leasePrefix:")
	assert.Contains(t, err.Error(), `config key leasePrefix: "" from environment variable VESTA_ETCD_PREFIX: want`)
	assert.Contains(t, err.Error(), "the variable is set but empty")
}

func TestEmptyEnvIsNotUnset(t *testing.T) {
	for env, key := range map[string]string{"VESTA_MACHINE": "machine", "VESTA_LISTEN": "listen", "VESTA_POPULATOR": "populator"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "")
			_, err := load(t)
			require.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+key+":")
		})
	}
}

func TestVestaPortErrorsNameIt(t *testing.T) {
	c, err := load(t, "--config", writeFile(t, "v.properties", "vesta.port=9090\n"))
	require.NoError(t, err)
	assert.Equal(t, ":9090", c.Listen)
	_, err = load(t, "--config", writeFile(t, "v.properties", "vesta.port=abc\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config key vesta.port:")
}

func TestInvalidFileValueNamesVestaKey(t *testing.T) {
	_, err := load(t, "--config", writeFile(t, "v.properties", "vesta.machine=5000\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config key vesta.machine")
}

func TestFileErrors(t *testing.T) {
	file := writeFile(t, "c.yaml", "machine: 1\nmachnie: 2\n")
	_, err := load(t, "--config", file)
	require.ErrorIs(t, err, ErrUnknownKey)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Equal(t, "config file "+file+" line 2: unknown key machnie: did you mean machine? Every key is in docs/configuration.md", err.Error())

	_, err = load(t, "--config", writeFile(t, "c.ini", "machine=1\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unsupported extension")

	_, err = load(t, "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml")

	_, err = load(t, "--config", writeFile(t, "c.yaml", "machine: [\n"))
	require.Error(t, err)
}

func TestBareBooleanFlag(t *testing.T) {
	c, err := load(t, "--no-data-dir")
	require.NoError(t, err)
	assert.True(t, c.Service.NoDataDir)
	c, err = load(t, "--no-data-dir=false")
	require.NoError(t, err)
	assert.False(t, c.Service.NoDataDir)
}

// epoch follows service.New's rule (Settings.WithDefaults): 1..now, now by the system clock the
// programs' service runs with.
func TestEpochFollowsTheServiceRule(t *testing.T) {
	recent := time.Now().Add(-time.Minute).UnixMilli()
	c, err := load(t, "--epoch", fmt.Sprint(recent))
	require.NoError(t, err)
	assert.Equal(t, recent, c.Service.EpochMillis)
	_, err = service.Settings{EpochMillis: c.Service.EpochMillis, NoDataDir: true}.WithDefaults()
	assert.NoError(t, err)

	for _, bad := range []int64{0, time.Now().Add(time.Hour).UnixMilli()} {
		_, err = load(t, "--epoch", fmt.Sprint(bad))
		require.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "config key epoch:")
		assert.Contains(t, err.Error(), "not after now")
	}
	_, err = load(t, "--epoch", "soon")
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `config key epoch: "soon" from flag --epoch: want an integer: Unix milliseconds, 1..now`)
}

// JSON logs write durations as the text logs do ("15s"), not in
// nanoseconds; nested in groups too.
func TestJSONLogDurations(t *testing.T) {
	c, err := load(t, "--log-format", "json")
	require.NoError(t, err)
	var b strings.Builder
	c.NewLogger(&b).Info("m", "timeout", 15*time.Second, slog.Group("g", "wait", 1500*time.Millisecond), "n", 7)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(b.String()), &line))
	assert.Equal(t, "15s", line["timeout"])
	assert.Equal(t, map[string]any{"wait": "1.5s"}, line["g"])
	assert.Equal(t, float64(7), line["n"], "other numbers stay numbers")

	c, err = load(t)
	require.NoError(t, err)
	b.Reset()
	c.NewLogger(&b).Info("m", "timeout", 15*time.Second)
	assert.Contains(t, b.String(), " timeout=15s\n", "the text format, as before")
}

// The service keys' defaults are service.New's, read once at start.
func TestServiceDefaultsResolve(t *testing.T) {
	require.NoError(t, serviceDefaultsErr)
	assert.Equal(t, service.PopulatorLock, serviceDefaults.Populator)
	assert.Equal(t, 5*time.Second, serviceDefaults.MaxClockBackwardWait)
}
