package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pgSecret = "pw-n0t-shown"

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
