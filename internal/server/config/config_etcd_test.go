package config

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// Another provider has no lease. The etcd keys that only tune a lease are
// checked and unused; etcdEndpoints, which says where the id comes from,
// contradicts any other provider: a node meant to lease its id from etcd
// would run with another one.
func TestOtherProvidersHaveNoLease(t *testing.T) {
	c, err := load(t, "--machine", "4", "--etcd-prefix", "/ids", "--etcd-lease-ttl", "4s")
	require.NoError(t, err)
	assert.Nil(t, c.Service.Lease)
	assert.Zero(t, c.Etcd)
	assert.Zero(t, c.Lease)
	assert.Equal(t, int64(4), c.Service.Machine)

	_, err = load(t, "--machine", "4", "--etcd-endpoints", "127.0.0.1:2379")
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Equal(t, `invalid argument: config key etcdEndpoints ("127.0.0.1:2379" from flag --etcd-endpoints) contradicts `+
		`machineProvider ("property", the default): machineProvider property takes the machine id from the machine key, `+
		`so etcdEndpoints would be ignored (set machineProvider etcd to lease the id from etcd); remove one of them`, err.Error())
}

// A maxBorrow longer than a leased node may run ahead of its clock is
// refused, naming both keys: a burst would borrow units the lease's fence
// refuses. Within it, or without a lease, it is taken.
func TestBorrowBeyondTheLeaseIsRefused(t *testing.T) {
	etcd := []string{"--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379"}
	_, err := load(t, append(etcd, "--max-borrow", "30s", "--etcd-lease-ttl", "6s")...)
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, KeyMaxBorrow, ce.Key)
	assert.Equal(t, KeyLeaseTTL, ce.Other)
	assert.ErrorContains(t, err, "at most 2.84s")
	_, err = load(t, "--machine-provider", "postgres", "--machine-dsn", "postgres://db/ids", "--max-borrow", "40s")
	assert.ErrorContains(t, err, `leaseTTL ("1m0s", the default)`, "the default TTL allows 38.4s")
	for _, ok := range [][]string{
		append(etcd, "--max-borrow", "2s", "--etcd-lease-ttl", "6s"),
		append(etcd, "--max-borrow", "30s"),
		{"--machine", "3", "--max-borrow", "30s"},
	} {
		_, err := load(t, ok...)
		assert.NoError(t, err, ok)
	}
}

// The lease keys are named for leases (leasePrefix, --lease-ttl,
// VESTA_LEASE_DIAL_TIMEOUT, ...); their etcd* names are aliases in every
// layer. In one layer the key's own name wins; a higher layer wins over a
// lower one whichever name it uses; an error names the name used.
func TestLeaseKeysTakeTheirEtcdNamesAsAliases(t *testing.T) {
	etcd := []string{"--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379"}
	c, err := load(t, append(etcd, "--lease-prefix", "/a", "--lease-ttl", "4s", "--lease-dial-timeout", "2s", "--lease-node-name", "n1")...)
	require.NoError(t, err)
	assert.Equal(t, Lease{Prefix: "/a", TTL: 4e9, DialTimeout: 2e9, NodeName: "n1", MaxClockSkew: c.Lease.MaxClockSkew}, c.Lease)

	c, err = load(t, append(etcd, "--etcd-prefix", "/b", "--etcd-lease-ttl", "6s", "--etcd-dial-timeout", "3s", "--etcd-node-name", "n2")...)
	require.NoError(t, err)
	assert.Equal(t, Lease{Prefix: "/b", TTL: 6e9, DialTimeout: 3e9, NodeName: "n2", MaxClockSkew: c.Lease.MaxClockSkew}, c.Lease)

	c, err = load(t, append(etcd, "--etcd-prefix", "/old", "--lease-prefix", "/new")...)
	require.NoError(t, err)
	assert.Equal(t, "/new", c.Lease.Prefix, "the key's own flag wins over its alias")

	file := writeFile(t, "vesta.yaml", "machineProvider: etcd\netcdEndpoints: [\"127.0.0.1:2379\"]\netcdPrefix: /f\netcdNodeName: n3\n")
	c, err = load(t, "--config", file)
	require.NoError(t, err, "the aliases are known file keys")
	assert.Equal(t, "/f", c.Lease.Prefix)
	assert.Equal(t, "n3", c.Lease.NodeName)

	t.Setenv("VESTA_ETCD_LEASE_TTL", "8s")
	c, err = load(t, etcd...)
	require.NoError(t, err)
	assert.Equal(t, 8*time.Second, c.Lease.TTL, "the alias's variable")
	t.Setenv("VESTA_LEASE_TTL", "10s")
	c, err = load(t, etcd...)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, c.Lease.TTL, "the key's own variable wins")
	c, err = load(t, append(etcd, "--etcd-lease-ttl", "12s")...)
	require.NoError(t, err)
	assert.Equal(t, 12*time.Second, c.Lease.TTL, "a flag, even the alias's, wins over a variable")

	t.Setenv("VESTA_LEASE_PREFIX", "/env")
	t.Setenv("VESTA_ETCD_PREFIX", "")
	c, err = load(t, etcd...)
	require.NoError(t, err, "an empty alias variable beside a set one is not an empty value")
	assert.Equal(t, "/env", c.Lease.Prefix)
	t.Setenv("VESTA_LEASE_PREFIX", "")
	_, err = load(t, etcd...)
	assert.ErrorContains(t, err, "set but empty", "both empty: refused as an empty prefix")
	require.NoError(t, os.Unsetenv("VESTA_LEASE_PREFIX"))
	require.NoError(t, os.Unsetenv("VESTA_ETCD_PREFIX"))

	_, err = load(t, append(etcd, "--etcd-lease-ttl", "1500ms")...)
	assert.ErrorContains(t, err, `config key leaseTTL: "1500ms" from flag --etcd-lease-ttl`, "the error names the key and the name used")
}
