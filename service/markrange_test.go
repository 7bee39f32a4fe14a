package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// endMs is the Unix millisecond at which typ's time field runs out with
// the default epoch.
func endMs(t *testing.T, typ intf.IdType) int64 {
	l := layoutOf(t, typ)
	return intf.DefaultEpochMillis + (l.Time.Max()+1)*l.Unit.Milliseconds()
}

// A mark that no ID of the layout can reach (past the end of the time
// field, or negative) is corrupt: New refuses it at once, naming the file,
// instead of overflowing the time arithmetic and hanging the first GenId.
func TestMarkOutOfRange(t *testing.T) {
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		for _, mark := range []int64{9223372036854775807, endMs(t, typ) + 1, -1, -9223372036854775808} {
			t.Run(fmt.Sprintf("%s/%d", typ, mark), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "highwater")
				require.NoError(t, os.WriteFile(path, []byte(strconv.FormatInt(mark, 10)+"\n"), 0o600))
				ctx, cancel := context.WithTimeout(bg, 10*time.Second)
				defer cancel()
				_, err := service.New(ctx, service.Settings{DataDir: dir, Type: typ, Clock: newFakeClock(testStart), Logger: discardLog})
				require.Error(t, err)
				assert.ErrorIs(t, err, service.ErrCorruptMark)
				assert.NotErrorIs(t, err, context.DeadlineExceeded, "refused, not timed out")
				assert.Contains(t, err.Error(), path)
				assert.Contains(t, err.Error(), strconv.FormatInt(mark, 10))
			})
		}
	}
}

// The last mark any ID can reach is still accepted: it only bounds.
func TestMarkAtTheEndIsValid(t *testing.T) {
	dir := t.TempDir()
	end := endMs(t, intf.MinGranularity)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "highwater"), []byte(strconv.FormatInt(end, 10)), 0o600))
	// The clock is just past the end: New refuses for the lifetime, not
	// the mark.
	_, err := newDirService(dir, newFakeClock(time.UnixMilli(end+5)), service.Settings{Type: intf.MinGranularity})
	assert.ErrorIs(t, err, intf.ErrTimeOverflow)
	assert.NotErrorIs(t, err, service.ErrCorruptMark)
}

// A previous holder's mark from a lease that no ID can reach is refused by
// Hold (the lease then releases that id), never waited for.
func TestHoldRefusesOutOfRangeMark(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 5)
	for _, mark := range []int64{9223372036854775807, endMs(t, intf.MaxPeak) + 1, -1} {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		err := h.Hold(ctx, 9, h.Now()+int64(time.Hour), mark)
		cancel()
		require.Error(t, err, "mark %d", mark)
		assert.ErrorIs(t, err, service.ErrCorruptMark)
		assert.Contains(t, err.Error(), "machine 9")
		_, err = svc.GenId(bg)
		assert.ErrorIs(t, err, intf.ErrFenced, "nothing is issued while no id is held")
	}
	require.NoError(t, h.Hold(bg, 9, h.Now()+int64(time.Hour), 0))
	_, err := svc.GenId(bg)
	require.NoError(t, err)
}

// stalledClock never moves: a wait for the next unit lasts until its
// context ends.
type stalledClock struct{ *fakeClock }

func (c stalledClock) WaitUntil(ctx context.Context, t int64) error {
	if c.NowNanos() >= t {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// A caller waiting for the next unit (here forever: the clock is stalled)
// never keeps Close from finishing, with every populator; the waiter gets
// ErrClosed and no ID, and a restart repeats nothing.
func TestCloseEndsWaiters(t *testing.T) {
	t.Parallel() // own data dir and fake clock; among the slowest here
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			l := layoutOf(t, intf.MinGranularity)
			dir := t.TempDir()
			clk := stalledClock{newFakeClock(testStart)}
			svc := startDir(t, dir, clk, service.Settings{Populator: pop, Type: intf.MinGranularity})
			first, err := svc.GenIds(bg, int(l.Seq.Max()+1)) // the whole unit
			require.NoError(t, err)

			const waiters = 8
			errs := make(chan error, waiters)
			for range waiters {
				go func() {
					_, err := svc.GenId(bg) // no deadline: waits until Close
					errs <- err
				}()
			}
			// Close must return although the waiters would wait forever
			// (and with lock and sync, one of them holds the populator).
			closed := make(chan error, 1)
			go func() { closed <- svc.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("Close is blocked by callers waiting for the next unit")
			}
			for range waiters {
				select {
				case err := <-errs:
					assert.ErrorIs(t, err, intf.ErrClosed)
				case <-time.After(30 * time.Second):
					t.Fatal("a waiter was not released by Close")
				}
			}
			clk.Advance(time.Millisecond)
			svc = startDir(t, dir, newFakeClock(clk.Now()), service.Settings{Populator: pop, Type: intf.MinGranularity})
			defer svc.Close()
			second := genN(t, svc, 10)
			_, err = checkUnique(l, [][]intf.Id{first, second})
			require.NoError(t, err)
		})
	}
}
