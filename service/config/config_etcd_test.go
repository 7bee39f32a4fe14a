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
