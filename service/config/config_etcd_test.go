package config

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/etcdlease"
)

// etcdOptions returns the options, defaults filled in, of the etcd lease
// made from c, as the programs make it.
func etcdOptions(t *testing.T, c Config) etcdlease.Options {
	t.Helper()
	require.Equal(t, ProviderEtcd, c.MachineProvider)
	assert.Nil(t, c.Service.Lease, "the loader builds nothing: the program makes the lease")
	l, err := etcdlease.New(c.Etcd)
	require.NoError(t, err, "the options the loader accepted make a lease")
	return l.Options()
}

func TestEtcdProviderDefaults(t *testing.T) {
	c, err := load(t, "--machine-provider", "etcd", "--etcd-endpoints", "10.0.0.1:2379, https://etcd-1:2379")
	require.NoError(t, err)
	o := etcdOptions(t, c)
	assert.Equal(t, []string{"10.0.0.1:2379", "https://etcd-1:2379"}, o.Endpoints)
	assert.Equal(t, etcdlease.DefaultPrefix, o.Prefix)
	assert.Equal(t, etcdlease.DefaultTTL, o.TTL)
	assert.Equal(t, etcdlease.DefaultDialTimeout, o.DialTimeout)
	assert.Equal(t, etcdlease.DefaultMaxClockSkew, o.MaxClockSkew)
	assert.NotEmpty(t, o.NodeName)
	assert.Same(t, c.Service.Logger, o.Logger, "the lease logs with the configured logger")
	assert.Nil(t, c.Service.MachineProvider)
}

func TestEtcdKeysFromEnv(t *testing.T) {
	for k, v := range map[string]string{
		"VESTA_MACHINE_PROVIDER": "etcd", "VESTA_ETCD_ENDPOINTS": "127.0.0.1:2379", "VESTA_ETCD_PREFIX": "/ids",
		"VESTA_ETCD_LEASE_TTL": "4s", "VESTA_ETCD_DIAL_TIMEOUT": "2s", "VESTA_ETCD_USERNAME": "vesta",
		"VESTA_ETCD_PASSWORD": "secret", "VESTA_ETCD_NODE_NAME": "ids-3", "VESTA_MAX_CLOCK_SKEW": "250ms",
	} {
		t.Setenv(k, v)
	}
	c, err := load(t)
	require.NoError(t, err)
	o := etcdOptions(t, c)
	assert.Equal(t, []any{[]string{"127.0.0.1:2379"}, "/ids", 4 * time.Second, 2 * time.Second, "vesta", "secret", "ids-3", 250 * time.Millisecond},
		[]any{o.Endpoints, o.Prefix, o.TTL, o.DialTimeout, o.Username, o.Password, o.NodeName, o.MaxClockSkew})
}

func TestEtcdKeysFromFile(t *testing.T) {
	file := writeFile(t, "vesta.yaml", `machineProvider: etcd
etcdEndpoints: [etcd-0:2379, etcd-1:2379, etcd-2:2379]
etcdLeaseTTL: 6s
etcdNodeName: ids-1
maxClockSkew: 500ms
`)
	c, err := load(t, "--config", file, "--etcd-lease-ttl", "8s")
	require.NoError(t, err)
	o := etcdOptions(t, c)
	assert.Equal(t, []string{"etcd-0:2379", "etcd-1:2379", "etcd-2:2379"}, o.Endpoints, "a YAML list works")
	assert.Equal(t, 8*time.Second, o.TTL, "the flag beats the file")
	assert.Equal(t, "ids-1", o.NodeName)
	assert.Equal(t, 500*time.Millisecond, o.MaxClockSkew)
}

// Another provider has no lease. The etcd keys that only tune a lease are
// checked and unused; etcdEndpoints, which says where the id comes from,
// contradicts any other provider: a node meant to lease its id from etcd
// would run with another one.
func TestOtherProvidersHaveNoLease(t *testing.T) {
	c, err := load(t, "--machine", "4", "--etcd-prefix", "/ids", "--etcd-lease-ttl", "4s")
	require.NoError(t, err)
	assert.Nil(t, c.Service.Lease)
	assert.Zero(t, c.Etcd)
	assert.Equal(t, int64(4), c.Service.Machine)

	_, err = load(t, "--machine", "4", "--etcd-endpoints", "127.0.0.1:2379")
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Equal(t, `invalid argument: config key etcdEndpoints ("127.0.0.1:2379" from flag --etcd-endpoints) contradicts `+
		`machineProvider ("property", the default): machineProvider property takes the machine id from the machine key, `+
		`so etcdEndpoints would be ignored (set machineProvider etcd to lease the id from etcd); remove one of them`, err.Error())
}

func TestEtcdInvalidValues(t *testing.T) {
	etcd := []string{"--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379"}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	cases := []struct {
		args []string
		key  string
	}{
		{[]string{"--machine-provider", "etcd"}, "etcdEndpoints"},
		{[]string{"--machine-provider", "etcd", "--etcd-endpoints", "etcd-without-port"}, "etcdEndpoints"},
		{append(etcd, "--etcd-prefix", "/"), "etcdPrefix"},
		{append(etcd, "--etcd-lease-ttl", "1s"), "etcdLeaseTTL"},
		{append(etcd, "--etcd-lease-ttl", "2500ms"), "etcdLeaseTTL"},
		{append(etcd, "--etcd-lease-ttl", "ten"), "etcdLeaseTTL"},
		{append(etcd, "--etcd-dial-timeout", "0s"), "etcdDialTimeout"},
		{append(etcd, "--etcd-username", "vesta"), "etcdPassword"},
		{append(etcd, "--etcd-ca-cert", missing), "etcdCACert"},
		{append(etcd, "--etcd-cert", missing), "etcdKey"},
		{append(etcd, "--etcd-cert", missing, "--etcd-key", missing), "etcdCert"},
		{append(etcd, "--etcd-node-name", "a/b"), "etcdNodeName"},
		{append(etcd, "--max-clock-skew", "-1s"), "maxClockSkew"},
		{[]string{"--etcd-lease-ttl", "soon"}, "etcdLeaseTTL"}, // checked whatever the provider
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.args[len(tc.args)-1], func(t *testing.T) {
			_, err := load(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+tc.key+":")
		})
	}
}
