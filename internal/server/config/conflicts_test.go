package config

import (
	"bytes"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

// Settings that contradict each other are refused, both named with where
// they were set, rather than one silently ignored.
func TestContradictionsAreRefused(t *testing.T) {
	file := func(body string) []string { return []string{"--config", writeFile(t, "c.yaml", body)} }
	props := func(body string) []string { return []string{"--config", writeFile(t, "v.properties", body)} }
	cases := []struct {
		name       string
		args       []string
		key, other string
		why        string
	}{
		{"machine with provider hostname", []string{"--machine", "5", "--machine-provider", "hostname"},
			KeyMachine, KeyMachineProvider, "machineProvider hostname takes the machine id from the host name's trailing number, so machine would be ignored"},
		{"machine with provider ips", []string{"--machine", "5", "--machine-provider", "ips", "--ips", "10.0.0.1"},
			KeyMachine, KeyMachineProvider, "so machine would be ignored"},
		{"machine with provider etcd", []string{"--machine", "5", "--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379"},
			KeyMachine, KeyMachineProvider, "machineProvider etcd takes the machine id from an etcd lease"},
		{"ips with provider property", []string{"--ips", "10.0.0.1", "--machine-provider", "property"},
			KeyIPs, KeyMachineProvider, "so ips would be ignored"},
		{"ips with provider hostname", []string{"--ips", "10.0.0.1", "--machine-provider", "hostname"},
			KeyIPs, KeyMachineProvider, "so ips would be ignored"},
		{"hostname without provider hostname", []string{"--hostname", "ids-3"},
			KeyHostname, KeyMachineProvider, "machineProvider property takes the machine id from the machine key, so hostname would be ignored"},
		{"etcdEndpoints with provider ips", []string{"--machine-provider", "ips", "--ips", "10.0.0.1", "--etcd-endpoints", "e:2379"},
			KeyEtcdEndpoints, KeyMachineProvider, "set machineProvider etcd to lease the id from etcd"},
		{"machine and ips, no provider", []string{"--machine", "5", "--ips", "10.0.0.1"},
			KeyIPs, KeyMachine, "both give the machine id"},
		{"Vesta's machine and ips in one file", props("vesta.machine=5\nvesta.ips=10.0.0.1\n"),
			VestaIPs, VestaMachine, "set machineProvider to property or ips"},
		{"Vesta's machine with a provider", props("vesta.machine=5\nmachineProvider=hostname\n"),
			VestaMachine, KeyMachineProvider, "so vesta.machine would be ignored"},
		{"dataDir with noDataDir", []string{"--data-dir", "/var/lib/vesta", "--no-data-dir"},
			KeyDataDir, KeyNoDataDir, "noDataDir runs without a data dir, so dataDir would be ignored"},
		{"resetDataDir with noDataDir", []string{"--reset-data-dir", "--no-data-dir", "--segment-store", "off"},
			KeyResetDataDir, KeyNoDataDir, "no mark to reset"},
		{"segmentDSN with segmentStore off", []string{"--segment-store", "off", "--segment-dsn", "/var/lib/ids.db"},
			KeySegmentDSN, KeySegmentStore, "segmentStore off opens no store"},
		{"segmentAllowAsyncFailover without postgres", []string{"--segment-allow-async-failover"},
			KeySegmentAllowAsyncFailover, KeySegmentStore, "only a PostgreSQL store"},
		{"both in a file", file("machine: 5\nmachineProvider: hostname\n"),
			KeyMachine, KeyMachineProvider, "so machine would be ignored"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.args...)
			var ce *ConflictError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Equal(t, []string{tc.key, tc.other}, []string{ce.Key, ce.Other})
			assert.Contains(t, ce.Why, tc.why)
			assert.NotEqual(t, LayerDefault, ce.Source.Layer, "the refused key was set somewhere")
			assert.Contains(t, err.Error(), "config key "+tc.key+" (")
			assert.Contains(t, err.Error(), "remove one of them")
		})
	}
}

// The message of the example.
func TestContradictionMessage(t *testing.T) {
	_, err := load(t, "--machine", "5", "--machine-provider", "hostname")
	require.Error(t, err)
	assert.Equal(t, `invalid argument: config key machine ("5" from flag --machine) contradicts machineProvider `+
		`("hostname" from flag --machine-provider): machineProvider hostname takes the machine id from the host name's `+
		`trailing number, so machine would be ignored; remove one of them`, err.Error())

	t.Setenv("VESTA_ETCD_PASSWORD", "topsecret")
	t.Setenv("VESTA_ETCD_ENDPOINTS", "127.0.0.1:2379")
	_, err = load(t)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "topsecret")
}

// Precedence decides between layers: a setting given at a higher layer
// overrides the lower layer's settings it makes meaningless (a flag over
// a shared file, a one-off run), so those are no contradiction.
func TestHigherLayerOverridesWhatItMakesMeaningless(t *testing.T) {
	c, err := load(t, "--config", writeFile(t, "c.yaml", "machine: 5\n"), "--machine-provider", "hostname", "--hostname", "ids-7")
	require.NoError(t, err)
	assert.Equal(t, machineid.Hostname{Hostname: "ids-7"}, c.Service.MachineProvider)

	t.Setenv("VESTA_MACHINE", "5")
	c, err = load(t, "--ips", "10.0.0.1")
	require.NoError(t, err)
	assert.Equal(t, ProviderIPs, c.MachineProvider, "the flag's ips over the variable's machine id")
	c, err = load(t, "--config", writeFile(t, "c.yaml", "ips: 10.0.0.1\n"))
	require.NoError(t, err)
	assert.Equal(t, ProviderProperty, c.MachineProvider, "the variable's machine id over the file's ips")
	assert.Equal(t, int64(5), c.Service.Machine)

	c, err = load(t, "--config", writeFile(t, "c.yaml", "dataDir: /var/lib/vesta\nsegmentDSN: /var/lib/ids.db\n"),
		"--no-data-dir", "--segment-store", "off")
	require.NoError(t, err)
	assert.True(t, c.Service.NoDataDir)
}

// loadAs loads args as the program with defaults d does, its log in a buffer.
func loadAs(t *testing.T, d Defaults, args ...string) (Config, string, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	l := Register(fs, d)
	var log bytes.Buffer
	l.Stderr = &log
	require.NoError(t, fs.Parse(args))
	c, err := l.Load()
	return c, log.String(), err
}

// Vesta's own vesta-server.properties is read as it is: server-rpc listens
// on vesta.service.port (server-rest ignores it: it is the RPC port), and
// the registry, which vesta-go has none of, is accepted with a warning that
// names where it was set (not its value, which may hold credentials).
func TestVestaServerProperties(t *testing.T) {
	file := writeFile(t, "vesta-server.properties", "vesta.service.register.center=zookeeper://u:pw@zk:2181\n"+
		"vesta.service.port=20999\nvesta.machine=1023\nvesta.genMethod=1\nvesta.type=0\n")
	rpc := Defaults{Listen: ":20880", GenMethod: intf.GenMethodCentral, RPC: true}
	c, log, err := loadAs(t, rpc, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, ":20999", c.Listen)
	assert.Equal(t, int64(1023), c.Service.Machine)
	assert.Equal(t, int64(1), c.Service.GenMethod)
	assert.Contains(t, log, `msg="vesta: config key vesta.service.register.center has no effect: vesta-go registers with no registry; `+
		`give the clients the servers' addresses (client.New, docs/rpc.md)" source="file `+file+` line 1"`)
	assert.NotContains(t, log, "pw@zk")

	c, _, err = loadAs(t, rpc, "--config", file, "--listen", "127.0.0.1:7000")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7000", c.Listen, "listen beats Vesta's port")

	c, log, err = loadAs(t, restDefaults, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, ":8080", c.Listen, "server-rest does not listen on the RPC port")
	assert.Contains(t, log, "vesta.service.register.center has no effect")

	_, _, err = loadAs(t, rpc, "--config", writeFile(t, "v.properties", "vesta.service.port=99999\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config key vesta.service.port: "99999" from file`)

	c, _, err = loadAs(t, rpc, "--config", writeFile(t, "v.properties", "vesta.port=20998\n"))
	require.NoError(t, err)
	assert.Equal(t, ":20998", c.Listen, "vesta.port still serves server-rpc without vesta.service.port")
}
