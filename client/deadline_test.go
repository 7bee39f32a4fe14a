package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// Calls that start within one window share one deadline context, whose
// deadline gives each of them the call timeout and at most one window
// more; the next window gets a new one; Close (the parent) ends them.
func TestSharedDeadlines(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	start := ctxtime.Monotonic() // real-ish: context.WithDeadline reads the real clock too
	s := sharedDeadlines{parent: parent}
	const d = 500 * time.Millisecond // its window: 10 ms
	require.Equal(t, deadlineWindow, windowOf(d))
	require.Equal(t, time.Hour/64, windowOf(time.Hour), "a long timeout, a longer window: about 65 alive at most")
	first := s.get(start, d)
	for _, step := range []time.Duration{0, time.Millisecond, deadlineWindow - time.Nanosecond} {
		now := start + step
		assert.Same(t, first, s.get(now, d), "within the window: %s", step)
		dl, ok := s.get(now, d).Deadline()
		require.True(t, ok)
		assert.GreaterOrEqual(t, dl.Sub(ctxtime.At(now)), d, "at least the call timeout")
		assert.LessOrEqual(t, dl.Sub(ctxtime.At(now)), d+deadlineWindow, "at most a window more")
	}
	second := s.get(start+deadlineWindow, d)
	assert.NotSame(t, first, second, "a new window")
	cancel()
	assert.True(t, errors.Is(second.Err(), context.Canceled), "the client's Close ends them")
}

// A caller without a deadline (context.Background) still gets the call
// timeout, through the shared deadline, on a server that never answers;
// a cancellable context keeps a deadline of its own.
func TestCallTimeoutWithoutCallerDeadline(t *testing.T) {
	c := newClient(t, []string{silentAddr(t)}, WithCallTimeout(200*time.Millisecond))
	_, err := c.GenId(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = c.GenId(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
