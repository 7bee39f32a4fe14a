package segopen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// store is a segment store that counts its closes.
type store struct {
	mu     sync.Mutex
	closed int
}

func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
	return nil
}

func (s *store) closes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// opener fails with errs in turn (an ErrUnavailable while the list lasts
// when unreachable), then opens st; it records when each attempt was made.
type opener struct {
	mu       sync.Mutex
	start    time.Time
	at       []time.Duration
	failures int // how many attempts fail
	err      func(attempt int) error
	st       *store
}

func (o *opener) open(context.Context) (*store, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.at = append(o.at, time.Since(o.start))
	if n := len(o.at); n <= o.failures {
		return nil, o.err(n)
	}
	return o.st, nil
}

func (o *opener) attempts() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Duration(nil), o.at...)
}

func unreachable(n int) error {
	return fmt.Errorf("dial tcp 127.0.0.1:1: connection refused (%d): %w", n, intf.ErrUnavailable)
}

// The back-off is 1 s, doubling, at most 30 s (on synctest's clock): the
// attempts are made at 0, 1, 3, 7, 15, 31, 61, 91, 121 s; meanwhile Down says
// why; then the store is open and Down is nil.
func TestBackOffOneToThirtySeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &opener{start: time.Now(), failures: 8, err: unreachable, st: &store{}}
		var logs bytes.Buffer
		m := New(o.open, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Answer: "test: 503"})
		require.NoError(t, m.Start(context.Background()))
		_, open := m.Open()
		assert.False(t, open)
		assert.False(t, m.Off())
		d := m.Down()
		require.NotNil(t, d)
		assert.ErrorIs(t, d, intf.ErrUnavailable)
		assert.Equal(t, "segment store unreachable: dial tcp 127.0.0.1:1: connection refused (1): unavailable (retrying in the background)",
			strings.Replace(d.Error(), intf.ErrUnavailable.Error(), "unavailable", 1))

		time.Sleep(3 * time.Minute) // the fake clock: every timer fires
		synctest.Wait()
		sec := time.Second
		assert.Equal(t, []time.Duration{0, 1 * sec, 3 * sec, 7 * sec, 15 * sec, 31 * sec, 61 * sec, 91 * sec, 121 * sec}, o.attempts())
		st, open := m.Open()
		assert.True(t, open)
		assert.Same(t, o.st, st)
		assert.Nil(t, m.Down())
		assert.Contains(t, logs.String(), "segment store unreachable at start: serving IDs; segment calls answer unavailable (test: 503)")
		assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning: the failures after it are alike")

		require.NoError(t, m.Close())
		assert.Equal(t, 1, o.st.closes())
		require.NoError(t, m.Close(), "later calls return nil")
		assert.Equal(t, 1, o.st.closes())
	})
}

// A change in the kind of failure (unreachable → refused) is a warning;
// Down then names it, still matching intf.ErrUnavailable.
func TestKindChangeIsWarned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := errors.New("password authentication failed")
		o := &opener{start: time.Now(), failures: 3, st: &store{}, err: func(n int) error {
			if n == 1 {
				return unreachable(n)
			}
			return refused
		}}
		var logs bytes.Buffer
		m := New(o.open, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, m.Start(context.Background()))
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		d := m.Down()
		require.NotNil(t, d)
		assert.ErrorIs(t, d, refused)
		assert.ErrorIs(t, d, intf.ErrUnavailable)
		assert.False(t, d.Unreachable())
		assert.True(t, strings.HasPrefix(d.Error(), "segment store failing to open: password authentication failed"), d.Error())
		assert.Equal(t, 2, strings.Count(logs.String(), "level=WARN"))
		require.NoError(t, m.Close())
	})
}

// Only unreachability is retried: another error fails the start at once.
func TestPermanentErrorFailsStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("password authentication failed")
		o := &opener{start: time.Now(), failures: 1, err: func(int) error { return boom }}
		m := New(o.open, Options{})
		require.ErrorIs(t, m.Start(context.Background()), boom)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, o.attempts(), 1)
		require.NoError(t, m.Close())
	})
}

// Close ends the retries: no attempt after it, however long.
func TestCloseStopsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &opener{start: time.Now(), failures: 1 << 30, err: unreachable}
		m := New(o.open, Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, m.Start(context.Background()))
		time.Sleep(4 * time.Second)
		synctest.Wait()
		require.Len(t, o.attempts(), 3, "at 0, 1 and 3 s")
		require.NoError(t, m.Close())
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, o.attempts(), 3)
		require.ErrorIs(t, m.Start(context.Background()), intf.ErrClosed, "no start after Close")
	})
}

// A store opened while Close runs is closed, not published.
func TestOpenedDuringCloseIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &store{}
		first := true
		m := New(func(ctx context.Context) (*store, error) {
			if first {
				first = false
				return nil, unreachable(1)
			}
			<-ctx.Done() // Close began while the store was opening
			return st, nil
		}, Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, m.Start(context.Background()))
		time.Sleep(2 * time.Second)
		synctest.Wait() // the retry is opening
		require.NoError(t, m.Close())
		assert.Equal(t, 1, st.closes())
		_, open := m.Open()
		assert.False(t, open)
	})
}

// The zero store is segment mode off, at start or from a retry.
func TestOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := New(func(context.Context) (*store, error) { return nil, nil }, Options{})
		require.NoError(t, m.Start(context.Background()))
		assert.True(t, m.Off())
		require.NoError(t, m.Close())

		o := &opener{start: time.Now(), failures: 1, err: unreachable} // then opens nil: off
		m = New(o.open, Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, m.Start(context.Background()))
		assert.False(t, m.Off())
		time.Sleep(time.Second)
		synctest.Wait()
		assert.True(t, m.Off())
		assert.Nil(t, m.Down())
		require.NoError(t, m.Close())
	})
}

// Options: a RetryMax below RetryMin means RetryMin; zero means the
// defaults.
func TestOptions(t *testing.T) {
	open := func(context.Context) (*store, error) { return nil, nil }
	m := New(open, Options{})
	assert.Equal(t, DefaultRetryMin, m.min)
	assert.Equal(t, DefaultRetryMax, m.max)
	m = New(open, Options{RetryMin: time.Minute})
	assert.Equal(t, time.Minute, m.max)
	m = New(open, Options{RetryMin: 2 * time.Second, RetryMax: time.Second})
	assert.Equal(t, 2*time.Second, m.max)
}
