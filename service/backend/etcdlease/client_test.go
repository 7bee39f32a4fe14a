package etcdlease_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// NewWithClient runs on the caller's client, as concurrency.NewSession
// does: the id is claimed and released through it, and the client is still
// the caller's, open, after the service closed.
func TestNewWithClient(t *testing.T) {
	cli := etcdClient(t)
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	lease, err := etcdlease.NewWithClient(cli, etcdlease.Options{
		Common: etcdlease.Common{Prefix: keys.Prefix, TTL: testTTL, NodeName: "given-client", Logger: testLog(t)},
	})
	require.NoError(t, err)
	svc, err := service.New(bg, service.Settings{Lease: lease, NoDataDir: true, Logger: testLog(t)})
	require.NoError(t, err)
	_, err = svc.GenId(bg)
	require.NoError(t, err)
	owner, _, held := get(t, cli, keys.Machine(svc.Stats().Machine))
	require.True(t, held)
	assert.Equal(t, "given-client", owner)

	require.NoError(t, svc.Close())
	_, _, held = get(t, cli, keys.Machine(0)) // get fails the test if cli was closed
	assert.False(t, held, "Close released the id through the caller's client")
}

// Without a client there is nothing to run on; the connection options are
// not needed with one.
func TestNewWithClientOptions(t *testing.T) {
	_, err := etcdlease.NewWithClient(nil, etcdlease.Options{})
	var oe *etcdlease.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "client", oe.Option)

	_, err = etcdlease.NewWithClient(etcdClient(t), etcdlease.Options{Common: etcdlease.Common{Prefix: "has space"}})
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Prefix", oe.Option)

	assert.NoError(t, etcdlease.Options{Endpoints: []string{"127.0.0.1:2379"}}.Validate())
	err = etcdlease.Options{}.Validate()
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Endpoints", oe.Option, "Validate checks what New checks")
}
