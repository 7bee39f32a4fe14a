package ctxtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errCause = errors.New("callTimeout reached")

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A call that never waits sees the deadline through Err alone, with the
// cause, and Done then is closed.
func TestDeadlineWithoutWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := WithTimeoutCause(context.Background(), time.Second, errCause)
		defer ctx.Stop()
		assert.NoError(t, ctx.Err())
		d, ok := ctx.Deadline()
		assert.True(t, ok)
		assert.True(t, time.Now().Add(time.Second).Equal(d), "deadline %v", d)
		assert.Equal(t, fresh, ctx.state.Load(), "no timer made by Err or Deadline")

		time.Sleep(time.Second - time.Nanosecond)
		assert.NoError(t, ctx.Err(), "a nanosecond before the deadline")
		time.Sleep(time.Nanosecond)
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		assert.Equal(t, errCause, context.Cause(ctx))
		assert.True(t, closed(ctx.Done()))
	})
}

// A call that waits on Done is woken at the deadline, as by
// context.WithTimeoutCause.
func TestDeadlineWakesAWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := WithTimeoutCause(context.Background(), time.Second, errCause)
		defer ctx.Stop()
		start := time.Now()
		<-ctx.Done()
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		assert.Equal(t, errCause, context.Cause(ctx))
	})
}

// The parent's cancellation and earlier deadline come through.
func TestDeadlineFollowsItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), errCause, "v"))
		ctx := WithTimeoutCause(parent, time.Hour, errCause)
		defer ctx.Stop()
		assert.Equal(t, "v", ctx.Value(errCause))
		cancel()
		assert.ErrorIs(t, ctx.Err(), context.Canceled, "before Done was asked")
		assert.True(t, closed(ctx.Done()))
		assert.Equal(t, "v", ctx.Value(errCause), "after Done was asked")

		soon, stop := context.WithTimeout(context.Background(), time.Minute)
		defer stop()
		ctx = WithTimeoutCause(soon, time.Hour, errCause)
		defer ctx.Stop()
		d, _ := ctx.Deadline()
		assert.True(t, time.Now().Add(time.Minute).Equal(d), "the parent's earlier deadline, not %v", d)
		<-ctx.Done()
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		assert.NotEqual(t, errCause, context.Cause(ctx), "the parent's deadline, not this one's")
	})
}

// Stop cancels, whether or not a timer was made, and releases the timer.
func TestDeadlineStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unmade := WithTimeoutCause(context.Background(), time.Hour, errCause)
		unmade.Stop()
		assert.ErrorIs(t, unmade.Err(), context.Canceled)
		assert.True(t, closed(unmade.Done()))
		unmade.Stop() // twice is fine

		waited := WithTimeoutCause(context.Background(), time.Hour, errCause)
		done := waited.Done()
		waited.Stop()
		assert.True(t, closed(done))
		assert.ErrorIs(t, waited.Err(), context.Canceled)
		synctest.Wait() // no timer left running: the bubble would block on it at the end
	})
}

// Done, Err and Stop from many goroutines at once agree (run with -race).
func TestDeadlineConcurrentUse(t *testing.T) {
	for range 200 {
		ctx := WithTimeoutCause(context.Background(), time.Hour, errCause)
		var wg sync.WaitGroup
		chans := make([]<-chan struct{}, 4)
		for i := range chans {
			wg.Go(func() { chans[i] = ctx.Done(); _ = ctx.Err() })
		}
		wg.Go(ctx.Stop)
		wg.Wait()
		for _, ch := range chans {
			require.True(t, closed(ch), "every Done closed after Stop")
			require.Equal(t, chans[0], ch, "one channel")
		}
		require.ErrorIs(t, ctx.Err(), context.Canceled)
	}
}

// The cost of a call timeout around a call that does not wait, as a
// server pays it per request: made, checked, released.
func BenchmarkCallTimeout(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background()) // a request's context
	defer cancel()
	b.Run("context.WithTimeoutCause", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, stop := context.WithTimeoutCause(parent, time.Second, errCause)
			if ctx.Done() == nil || ctx.Err() != nil {
				b.Fatal("done")
			}
			stop()
		}
	})
	b.Run("ctxtime.WithTimeoutCause", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx := WithTimeoutCause(parent, time.Second, errCause)
			if ctx.Err() != nil {
				b.Fatal("done")
			}
			ctx.Stop()
		}
	})
}

// A deadline from a reading the caller took counts from that reading.
func TestDeadlineFromStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := Monotonic()
		time.Sleep(400 * time.Millisecond) // the call's work before its deadline was made
		ctx := WithTimeoutCauseFrom(context.Background(), start, time.Second, errCause)
		defer ctx.Stop()
		d, _ := ctx.Deadline()
		assert.True(t, time.Now().Add(600*time.Millisecond).Equal(d), "deadline %v", d)
		time.Sleep(600*time.Millisecond - time.Nanosecond)
		assert.NoError(t, ctx.Err())
		time.Sleep(time.Nanosecond)
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		assert.ErrorIs(t, context.Cause(ctx), errCause)
		<-ctx.Done()
	})
}
