package segment_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// The tag list is reread when the Clock reaches each RefreshInterval, not
// before; a refresh late by more than an interval is followed by the next
// one an interval later; Close ends the wait.
func TestRefreshWaitsOnTheClock(t *testing.T) {
	ctx := context.Background()
	clock := segtest.NewClock()
	start := clock.Now()
	mem := segtest.Wrap(segtest.NewMem())
	const every = 10 * time.Second
	g, err := segtest.Open(ctx, mem, []segspec.Tag{{Tag: "a", MaxId: 1, Step: 10}},
		segment.Settings{Logger: quiet, Clock: clock, RefreshInterval: every, MissRefreshInterval: -1})
	require.NoError(t, err)
	reads := mem.TagReads()
	require.NoError(t, mem.CreateTag(ctx, segstore.TagInfo{Tag: "b", MaxId: 1, Step: 10}))

	assert.Equal(t, start.Add(every), clock.NextWait(start.Add(time.Hour)), "the first reread waits one interval")
	clock.Advance(every - time.Nanosecond)
	assert.Equal(t, 1, clock.Waiting(start.Add(every)), "still waiting a nanosecond before")
	_, err = g.NextId(ctx, "b")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	assert.Equal(t, reads, mem.TagReads())

	clock.Advance(time.Nanosecond)
	assert.Equal(t, start.Add(2*every), clock.NextWait(start.Add(time.Hour)), "read once, then the next interval")
	assert.Equal(t, reads+1, mem.TagReads())
	_, err = g.NextId(ctx, "b")
	assert.NoError(t, err)

	clock.Advance(5 * every) // late: one reread, the next an interval after it
	assert.Equal(t, start.Add(7*every), clock.NextWait(start.Add(time.Hour)))
	assert.Equal(t, reads+2, mem.TagReads())

	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the refresh loop's wait")
	}
	assert.Zero(t, clock.Waiting(start.Add(time.Hour)), "no one waits on the clock after Close")
}
