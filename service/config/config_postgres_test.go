package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/pglease"
)

const pgSecret = "pw-n0t-shown"

func TestPostgresProviderKeys(t *testing.T) {
	t.Setenv("VESTA_MACHINE_DSN", "postgres://ids:"+pgSecret+"@db:5432/ids")
	c, err := load(t, "--machine-provider", "postgres", "--machine-table", "ops.vesta_ids", "--etcd-prefix", "/dc1",
		"--etcd-lease-ttl", "30s", "--etcd-node-name", "ids-2", "--machine-range", "0-511", "--max-clock-skew", "2s")
	require.NoError(t, err)
	require.Equal(t, ProviderPostgres, c.MachineProvider)
	assert.Nil(t, c.Service.Lease, "the loader builds nothing: the program makes the lease")
	assert.Zero(t, c.Etcd)
	l, err := pglease.New(c.Postgres)
	require.NoError(t, err, "the options the loader accepted make a lease")
	o := l.Options()
	assert.Equal(t, []any{"ops.vesta_ids", "/dc1", 30 * time.Second, "ids-2", pglease.Range{First: 0, Last: 511}, 2 * time.Second},
		[]any{o.Table, o.Prefix, o.TTL, o.NodeName, *o.MachineRange, o.MaxClockSkew})
	assert.Same(t, c.Service.Logger, o.Logger)

	c, err = load(t, "--machine-provider", "postgres")
	require.NoError(t, err)
	l, err = pglease.New(c.Postgres)
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
		{append(pg, "--etcd-lease-ttl", "1s"), dsn, "etcdLeaseTTL"},
		{append(pg, "--etcd-node-name", "a\nb"), dsn, "etcdNodeName"},
		{append(pg, "--machine-range", "9-3"), dsn, "machineRange"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			t.Setenv("VESTA_MACHINE_DSN", tc.dsn)
			_, err := load(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+tc.key+":")
			assert.NotContains(t, err.Error(), pgSecret, "a DSN is never shown")
		})
	}
}

// machineDSN says where the id comes from: with another provider it
// would be ignored, so it is refused — and not shown.
func TestMachineDSNContradictsOtherProviders(t *testing.T) {
	t.Setenv("VESTA_MACHINE_DSN", "postgres://ids:"+pgSecret+"@db/ids")
	_, err := load(t, "--machine", "4")
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "so machineDSN would be ignored (set machineProvider postgres to lease the id from PostgreSQL)")
	assert.NotContains(t, err.Error(), pgSecret)

	t.Setenv("VESTA_MACHINE_DSN", "")
	_, err = load(t, "--machine-provider", "postgres", "--machine-dsn", "postgres://db/ids", "--etcd-endpoints", "127.0.0.1:2379")
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "etcdEndpoints would be ignored")
}
