package app

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/pglease"
)

// The lease keys as a command sees them: loaded and validated by Setup
// (the loader checks each value, the lease library the options they make
// up), then made into a lease.

// setup loads args as a server does (every key; server-rest's defaults).
func setup(t *testing.T, args ...string) (config.Config, error) {
	t.Helper()
	p := Program{Name: "test", Defaults: config.Defaults{Listen: ":8080", GenMethod: intf.GenMethodREST},
		Stdout: io.Discard, Stderr: io.Discard}
	cfg, _, err := p.Setup(args)
	return cfg, err
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// etcdLeaseOptions returns the options, defaults filled in, of the etcd lease
// made from c, as the programs make it.
func etcdLeaseOptions(t *testing.T, c config.Config) etcdlease.Options {
	t.Helper()
	require.Equal(t, config.ProviderEtcd, c.MachineProvider)
	assert.Nil(t, c.Service.Lease, "the loader builds nothing: the program makes the lease")
	l, err := etcdlease.New(etcdOptions(c))
	require.NoError(t, err, "the options the loader accepted make a lease")
	return l.Options()
}

func TestEtcdProviderDefaults(t *testing.T) {
	c, err := setup(t, "--machine-provider", "etcd", "--etcd-endpoints", "10.0.0.1:2379, https://etcd-1:2379")
	require.NoError(t, err)
	o := etcdLeaseOptions(t, c)
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
	c, err := setup(t)
	require.NoError(t, err)
	o := etcdLeaseOptions(t, c)
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
	c, err := setup(t, "--config", file, "--etcd-lease-ttl", "8s")
	require.NoError(t, err)
	o := etcdLeaseOptions(t, c)
	assert.Equal(t, []string{"etcd-0:2379", "etcd-1:2379", "etcd-2:2379"}, o.Endpoints, "a YAML list works")
	assert.Equal(t, 8*time.Second, o.TTL, "the flag beats the file")
	assert.Equal(t, "ids-1", o.NodeName)
	assert.Equal(t, 500*time.Millisecond, o.MaxClockSkew)
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
		{append(etcd, "--etcd-prefix", "/"), "leasePrefix"},
		{append(etcd, "--etcd-lease-ttl", "1s"), "leaseTTL"},
		{append(etcd, "--etcd-lease-ttl", "2500ms"), "leaseTTL"},
		{append(etcd, "--etcd-lease-ttl", "ten"), "leaseTTL"},
		{append(etcd, "--etcd-dial-timeout", "0s"), "leaseDialTimeout"},
		{append(etcd, "--etcd-username", "vesta"), "etcdPassword"},
		{append(etcd, "--etcd-ca-cert", missing), "etcdCACert"},
		{append(etcd, "--etcd-cert", missing), "etcdKey"},
		{append(etcd, "--etcd-cert", missing, "--etcd-key", missing), "etcdCert"},
		{append(etcd, "--etcd-node-name", "a/b"), "leaseNodeName"},
		{append(etcd, "--max-clock-skew", "-1s"), "maxClockSkew"},
		{[]string{"--etcd-lease-ttl", "soon"}, "leaseTTL"}, // checked whatever the provider
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.args[len(tc.args)-1], func(t *testing.T) {
			_, err := setup(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+tc.key+":")
		})
	}
}

const pgSecret = "pw-n0t-shown"

func TestPostgresProviderKeys(t *testing.T) {
	t.Setenv("VESTA_MACHINE_DSN", "postgres://ids:"+pgSecret+"@db:5432/ids")
	c, err := setup(t, "--machine-provider", "postgres", "--machine-table", "ops.vesta_ids", "--etcd-prefix", "/dc1",
		"--etcd-lease-ttl", "30s", "--etcd-node-name", "ids-2", "--machine-range", "0-511", "--max-clock-skew", "2s")
	require.NoError(t, err)
	require.Equal(t, config.ProviderPostgres, c.MachineProvider)
	assert.Nil(t, c.Service.Lease, "the loader builds nothing: the program makes the lease")
	assert.Zero(t, c.Etcd)
	l, err := pglease.New(postgresOptions(c))
	require.NoError(t, err, "the options the loader accepted make a lease")
	o := l.Options()
	assert.Equal(t, []any{"ops.vesta_ids", "/dc1", 30 * time.Second, "ids-2", pglease.Range{First: 0, Last: 511}, 2 * time.Second},
		[]any{o.Table, o.Prefix, o.TTL, o.NodeName, *o.MachineRange, o.MaxClockSkew})
	assert.Same(t, c.Service.Logger, o.Logger)

	c, err = setup(t, "--machine-provider", "postgres")
	require.NoError(t, err)
	l, err = pglease.New(postgresOptions(c))
	require.NoError(t, err)
	assert.Equal(t, pglease.DefaultTable, l.Options().Table, "the default table")
	assert.Equal(t, pglease.DefaultTTL, l.Options().TTL)
}

func TestPostgresInvalidValues(t *testing.T) {
	pg := []string{"--machine-provider", "postgres"}
	dsn := "postgres://ids:" + pgSecret + "@db/ids" // in the environment: a flag may not hold a password
	cases := []struct {
		args []string
		dsn  string
		key  string
	}{
		{pg, "", "machineDSN"},
		{pg, "postgres://ids:" + pgSecret + "@db:port/ids", "machineDSN"},
		{append(pg, "--machine-table", "x;drop"), dsn, "machineTable"},
		{append(pg, "--etcd-lease-ttl", "1s"), dsn, "leaseTTL"},
		{append(pg, "--etcd-node-name", "a\nb"), dsn, "leaseNodeName"},
		{append(pg, "--machine-range", "9-3"), dsn, "machineRange"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			t.Setenv("VESTA_MACHINE_DSN", tc.dsn)
			_, err := setup(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+tc.key+":")
			assert.NotContains(t, err.Error(), pgSecret, "a DSN is never shown")
		})
	}
}

// A lease option the lease library refuses is refused as the loader
// refuses a value: a *config.ValueError naming the key and where it was
// set, never showing a secret.
func TestLeaseErrorsNameTheKeyAndItsSource(t *testing.T) {
	_, err := setup(t, "--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379", "--etcd-node-name", "a/b")
	var ve *config.ValueError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, config.Source{Layer: config.LayerFlag, Name: "--etcd-node-name"}, ve.Source)
	assert.Equal(t, `invalid argument: config key leaseNodeName: "a/b" from flag --etcd-node-name: want a name without '/' or spaces`, err.Error())
}

// A secret's value appears in no error, whichever layer set it (the
// segment DSN: internal/server/config's TestSecretsAreNotShown).
func TestSecretsAreNotShown(t *testing.T) {
	t.Setenv("VESTA_ETCD_PASSWORD", "hunter2")
	_, err := setup(t, "--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379")
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "config key etcdPassword: \"(not shown)\" from environment variable VESTA_ETCD_PASSWORD")
	assert.NotContains(t, err.Error(), "hunter2")
	assert.Equal(t, `invalid argument: config key etcdPassword: "(not shown)" from environment variable VESTA_ETCD_PASSWORD: want Username and Password together`, err.Error())
}

// StartService makes the lease from the same options, and names the key
// of one the lease refuses even for a Config that did not come through
// Setup.
func TestStartServiceNamesTheKeyOfAWrongLeaseOption(t *testing.T) {
	c, err := setup(t, "--machine-provider", "postgres", "--machine-dsn", "postgres://db/ids", "--no-data-dir")
	require.NoError(t, err)
	c.Postgres.Table = "x;drop"
	_, err = StartService(t.Context(), c)
	var ve *config.ValueError
	require.ErrorAs(t, err, &ve)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Equal(t, config.KeyMachineTable, ve.Key)
	assert.Contains(t, err.Error(), "postgres lease: invalid argument: config key machineTable:")
}
