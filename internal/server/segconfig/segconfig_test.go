package segconfig

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// load loads args as a server does (every key).
func load(t *testing.T, args ...string) config.Config {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	l := config.Register(fs, config.Defaults{Listen: ":8080", GenMethod: intf.GenMethodREST})
	require.NoError(t, fs.Parse(args))
	c, err := l.Load()
	require.NoError(t, err)
	return c
}

func TestStoresOfTheSegmentKeys(t *testing.T) {
	dir := t.TempDir()
	c := load(t, "--data-dir", dir, "--segment-tags", "order,invoice:1000:500")
	sc, err := Stores(c)
	require.NoError(t, err)
	assert.Equal(t, segspec.SQLite, sc.Store)
	assert.Equal(t, dir, sc.DataDir, "the SQLite file goes to the service's data dir")
	assert.Empty(t, sc.DSN)
	assert.False(t, sc.OnDemand)
	assert.Equal(t, []segspec.Tag{{Tag: "order", MaxId: 1, Step: 1000}, {Tag: "invoice", MaxId: 1000, Step: 500}}, sc.Tags)
	assert.Same(t, c.Service.Logger, sc.Settings.Logger, "segment mode logs with the configured logger")

	c = load(t, "--segment-store", "postgres", "--segment-dsn", "postgres://ids@db1:5432,db2:5432/vesta", "--segment-allow-async-failover")
	sc, err = Stores(c)
	require.NoError(t, err)
	assert.Equal(t, segspec.Postgres, sc.Store)
	assert.Equal(t, "postgres://ids@db1:5432,db2:5432/vesta", sc.DSN)
	assert.True(t, sc.AllowAsyncFailover)
}

// A DSN PostgreSQL's parser refuses is refused as the loader refuses a
// value: naming segmentDSN and where it was set, never the password.
func TestStoresRefusesABadDSN(t *testing.T) {
	t.Setenv("VESTA_SEGMENT_DSN", "postgres://u:topsecret@h:notaport/db") // a password is refused as a flag
	c := load(t, "--segment-store", "postgres")
	_, err := Stores(c)
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "config key "+config.KeySegmentDSN+":")
	assert.Contains(t, err.Error(), "from environment variable VESTA_SEGMENT_DSN")
	assert.Contains(t, err.Error(), "want a PostgreSQL URL or key=value DSN")
	assert.NotContains(t, err.Error(), "topsecret")
	var ve *config.ValueError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, config.KeySegmentDSN, ve.Key)
}
