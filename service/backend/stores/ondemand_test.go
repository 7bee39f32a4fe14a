package stores_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Nothing asked for segment mode (OnDemand): no file is created, no tag
// exists; once a tag is created in the file (vesta-segment create-tag, from
// another process), the next request for it opens the file and is served.
func TestOnDemandCreatesNoFileAndOpensAtFirstUse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state", sqlitestore.FileName) // not even the directory exists
	clock := segtest.NewClock()
	s := quiet()
	s.Clock = clock
	cfg := stores.Config{Store: segspec.SQLite, DataDir: filepath.Dir(path), OnDemand: true, Settings: s}

	g, err := stores.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	assert.Empty(t, g.Tags())
	_, err = g.NextId(ctx, "order")
	require.ErrorIs(t, err, intf.ErrUnknownTag)
	_, err = g.Status("order")
	require.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.NoDirExists(t, filepath.Dir(path), "nothing created unasked")

	// vesta-segment create-tag: an explicit request for a tag creates the
	// file, in its own process (its own store).
	admin, err := stores.OpenStore(ctx, cfg)
	require.NoError(t, err)
	assert.NoFileExists(t, path, "opening the store for create-tag creates nothing yet")
	require.NoError(t, admin.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 1, Step: 500}))
	require.NoError(t, admin.Close())
	assert.FileExists(t, path)

	clock.Advance(time.Second) // past the miss reread's interval
	id, err := g.NextId(ctx, "order")
	require.NoError(t, err, "the first request after the tag exists opens the file")
	assert.Equal(t, int64(1), id)
	st, err := g.Status("order")
	require.NoError(t, err)
	assert.Equal(t, int64(500), st.Floor)
}

// A file that exists is opened at start, as without OnDemand: a server
// restarted without segmentTags serves the tags of its earlier runs.
func TestOnDemandOpensAnExistingFileAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tags, err := segspec.ParseTags("order:1:500")
	require.NoError(t, err)
	g, err := stores.Open(ctx, stores.Config{DataDir: dir, Tags: tags, Settings: quiet()})
	require.NoError(t, err)
	_, err = g.NextId(ctx, "order") // the first run holds 1..500
	require.NoError(t, err)
	require.NoError(t, g.Close())

	g, err = stores.Open(ctx, stores.Config{DataDir: dir, OnDemand: true, Settings: quiet()})
	require.NoError(t, err)
	defer g.Close()
	assert.Equal(t, []string{"order"}, g.Tags())
	id, err := g.NextId(ctx, "order")
	require.NoError(t, err)
	assert.Equal(t, int64(501), id, "above the range the first run held")
}

// A bad tag creates no file; a store closed opens none.
func TestOnDemandCreateTagAndClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, sqlitestore.FileName)
	st, err := stores.OpenStore(ctx, stores.Config{DataDir: dir, OnDemand: true})
	require.NoError(t, err)
	require.ErrorIs(t, st.CreateTag(ctx, segstore.TagInfo{Tag: "a b", MaxId: 1, Step: 1}), intf.ErrInvalidArgument)
	assert.NoFileExists(t, path)
	tags, err := st.Tags(ctx)
	require.NoError(t, err)
	assert.Empty(t, tags)
	require.NoError(t, st.Close())
	require.ErrorIs(t, st.CreateTag(ctx, segstore.TagInfo{Tag: "a", MaxId: 1, Step: 1}), intf.ErrClosed)
	assert.NoFileExists(t, path)
	require.NoError(t, st.Close(), "Close twice")
}
