package generatorsuite_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segbuf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// fixture is a Generator on a wrapped store with a fake clock.
type fixture struct {
	db    database
	st    *segtest.Store
	clock *segtest.Clock
	g     *segment.Generator
}

// tag creates a tag directly in the store.
func (f *fixture) tag(t testing.TB, name string, initial, step int64) {
	t.Helper()
	require.NoError(t, f.st.CreateTag(context.Background(), segstore.TagInfo{Tag: name, MaxId: initial, Step: step}))
}

// newFixture opens a store on db, creates tags, and starts a Generator;
// tune adjusts the settings. The Generator is closed when the test ends.
func newFixture(t testing.TB, db database, tune func(*segment.Settings), tags ...segstore.TagInfo) *fixture {
	t.Helper()
	f := &fixture{db: db, st: segtest.Wrap(db.open(t)), clock: segtest.NewClock()}
	for _, tag := range tags {
		f.tag(t, tag.Tag, tag.MaxId, tag.Step)
	}
	s := segment.Settings{Store: f.st, Clock: f.clock, RetryInterval: time.Second, WaitTimeout: time.Minute,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tune != nil {
		tune(&s)
	}
	var err error
	f.g, err = segment.New(context.Background(), s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.g.Close() })
	return f
}

// settle waits until no load of tag is in flight and returns its status.
func settle(t testing.TB, g *segment.Generator, tag string) segbuf.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := g.Status(tag)
		require.NoError(t, err)
		if !st.Loading {
			return st
		}
		require.True(t, time.Now().Before(deadline), "a load of %s never ended: %v", tag, st)
		time.Sleep(time.Millisecond)
	}
}

// take returns n IDs of tag, requiring success.
func take(t testing.TB, g *segment.Generator, tag string, n int) []int64 {
	t.Helper()
	ids, err := g.NextIds(context.Background(), tag, n)
	require.NoError(t, err)
	require.Len(t, ids, n)
	return ids
}

// requireIncreasing fails unless ids are strictly increasing.
func requireIncreasing(t testing.TB, ids []int64) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			require.Failf(t, "not strictly increasing", "ids[%d]=%d after ids[%d]=%d", i, ids[i], i-1, ids[i-1])
		}
	}
}

// span returns first, first+1, ..., first+n-1.
func span(first int64, n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	return ids
}
