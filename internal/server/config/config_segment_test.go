package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

func TestSegmentDefaults(t *testing.T) {
	dir := t.TempDir()
	c, err := load(t, "--data-dir", dir)
	require.NoError(t, err)
	assert.Equal(t, segspec.SQLite, c.Segment.Store)
	assert.Equal(t, dir, c.Segment.DataDir, "the SQLite file goes to the service's data dir")
	assert.Empty(t, c.Segment.DSN)
	assert.Empty(t, c.Segment.Tags)

	c, err = load(t, "--no-data-dir", "true")
	require.NoError(t, err)
	assert.Equal(t, segspec.Off, c.Segment.Store, "no data dir, no file: off unless asked for")

	c, err = load(t, "--no-data-dir", "true", "--segment-dsn", "/var/lib/ids/segments.db")
	require.NoError(t, err)
	assert.Equal(t, segspec.SQLite, c.Segment.Store)
	assert.Equal(t, "/var/lib/ids/segments.db", c.Segment.DSN)
}

func TestSegmentFromEnvFlagsAndFile(t *testing.T) {
	t.Setenv("VESTA_SEGMENT_STORE", "postgres")
	t.Setenv("VESTA_SEGMENT_DSN", "postgres://ids@db:5432/vesta")
	c, err := load(t, "--segment-tags", "order,invoice:1000:500")
	require.NoError(t, err)
	assert.Equal(t, segspec.Postgres, c.Segment.Store)
	assert.Equal(t, "postgres://ids@db:5432/vesta", c.Segment.DSN)
	assert.Equal(t, []segspec.Tag{
		{Tag: "order", MaxId: 1, Step: 1000},
		{Tag: "invoice", MaxId: 1000, Step: 500},
	}, c.Segment.Tags)

	file := writeFile(t, "v.yaml", "segmentStore: off\nsegmentTags: [order, 'coupon:5:10']\n")
	c, err = load(t, "--config", file, "--segment-store", "sqlite")
	require.NoError(t, err)
	assert.Equal(t, segspec.SQLite, c.Segment.Store, "the flag beats the environment and the file")
	assert.Equal(t, []segspec.Tag{{Tag: "order", MaxId: 1, Step: 1000}, {Tag: "coupon", MaxId: 5, Step: 10}}, c.Segment.Tags,
		"a YAML list works too")
}

// A PostgreSQL DSN's syntax is checked with pgstore's parser, which the
// loader does not link, by internal/server/segconfig (TestStoresRefusesABadDSN);
// one with a password is refused as a flag here.
func TestSegmentInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		key  string
	}{
		{[]string{"--segment-store", "mysql"}, KeySegmentStore},
		{[]string{"--segment-store", "postgres"}, KeySegmentDSN},
		{[]string{"--segment-store", "postgres", "--segment-dsn", "postgres://u:topsecret@h:notaport/db"}, KeySegmentDSN},
		{[]string{"--segment-store", "sqlite", "--no-data-dir", "true"}, KeySegmentStore},
		{[]string{"--segment-dsn", "/tmp/x.db?mode=ro"}, KeySegmentDSN},
		{[]string{"--segment-tags", "a b"}, KeySegmentTags},
		{[]string{"--segment-tags", "order:1:0"}, KeySegmentTags},
		{[]string{"--segment-tags", "order,order"}, KeySegmentTags},
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.args[len(tc.args)-1], func(t *testing.T) {
			_, err := load(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "config key "+tc.key+":")
			assert.NotContains(t, err.Error(), "topsecret")
		})
	}
}

// Segment mode is on demand (its file opened once it exists, never
// created unasked) unless a segment key asks for it, from any layer.
func TestSegmentOnDemandUnlessAsked(t *testing.T) {
	c, err := load(t, "--data-dir", t.TempDir())
	require.NoError(t, err)
	assert.True(t, c.Segment.OnDemand, "nothing asked for segment mode")

	for _, args := range [][]string{
		{"--segment-tags", "order"},
		{"--segment-store", "sqlite"},
		{"--segment-dsn", "/var/lib/ids/segments.db"},
		{"--config", writeFile(t, "c.yaml", "segmentTags: order\n")},
		{"--segment-store", "postgres", "--segment-dsn", "postgres://ids@db:5432/vesta"},
	} {
		c, err := load(t, append(args, "--data-dir", t.TempDir())...)
		require.NoError(t, err)
		assert.False(t, c.Segment.OnDemand, "%v asks for segment mode", args)
	}
	t.Setenv("VESTA_SEGMENT_TAGS", "order")
	c, err = load(t, "--data-dir", t.TempDir())
	require.NoError(t, err)
	assert.False(t, c.Segment.OnDemand, "VESTA_SEGMENT_TAGS asks for segment mode")
}

func TestSegmentAllowAsyncFailover(t *testing.T) {
	pg := []string{"--segment-store", "postgres", "--segment-dsn", "postgres://ids@db1:5432,db2:5432/vesta"}
	c, err := load(t, pg...)
	require.NoError(t, err)
	assert.False(t, c.Segment.AllowAsyncFailover, "off by default")

	c, err = load(t, append(pg, "--segment-allow-async-failover")...)
	require.NoError(t, err)
	assert.True(t, c.Segment.AllowAsyncFailover)

	t.Setenv("VESTA_SEGMENT_ALLOW_ASYNC_FAILOVER", "yes")
	c, err = load(t, pg...)
	require.NoError(t, err)
	assert.True(t, c.Segment.AllowAsyncFailover, "from the environment")

	t.Setenv("VESTA_SEGMENT_ALLOW_ASYNC_FAILOVER", "maybe")
	_, err = load(t, pg...)
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.ErrorContains(t, err, "config key segmentAllowAsyncFailover:")
}
