package config

import (
	"testing"

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
	assert.Equal(t, KeyEtcdLeaseTTL, ce.Other)
	assert.ErrorContains(t, err, "at most 2.84s")
	_, err = load(t, "--machine-provider", "postgres", "--machine-dsn", "postgres://db/ids", "--max-borrow", "40s")
	assert.ErrorContains(t, err, `etcdLeaseTTL ("1m0s", the default)`, "the default TTL allows 38.4s")
	for _, ok := range [][]string{
		append(etcd, "--max-borrow", "2s", "--etcd-lease-ttl", "6s"),
		append(etcd, "--max-borrow", "30s"),
		{"--machine", "3", "--max-borrow", "30s"},
	} {
		_, err := load(t, ok...)
		assert.NoError(t, err, ok)
	}
}
