package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// Restart safety: the time high-water mark in the data dir. Every test
// here runs on a fake clock, which only moves when the test or a wait moves
// it, so a restart "in the same unit" is certain rather than likely.

// startDir starts a Service on dir with the fake clock, failing the test on
// error. The caller closes it.
func startDir(t *testing.T, dir string, clk service.Clock, s service.Settings) *service.Service {
	t.Helper()
	svc, err := newDirService(dir, clk, s)
	require.NoError(t, err)
	return svc
}

func newDirService(dir string, clk service.Clock, s service.Settings) (*service.Service, error) {
	s.DataDir, s.Clock = dir, clk
	if s.Logger == nil {
		s.Logger = discardLog
	}
	return service.New(bg, s)
}

// readMark returns the mark stored in dir, in Unix ms.
func readMark(t *testing.T, dir string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "highwater"))
	require.NoError(t, err)
	ms, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(t, err, "mark file content %q", b)
	return ms
}

// unitStartMs is the Unix ms at which unit u of l begins (default epoch).
func unitStartMs(l intf.Layout, u int64) int64 {
	return intf.DefaultEpochMillis + u*l.Unit.Milliseconds()
}

// genN takes n IDs one by one.
func genN(t *testing.T, svc *service.Service, n int) []intf.Id {
	t.Helper()
	ids := make([]intf.Id, 0, n)
	for range n {
		id, err := svc.GenId(bg)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// maxUnit is the largest time field among ids.
func maxUnit(l intf.Layout, ids []intf.Id) int64 {
	m := int64(-1)
	for _, id := range ids {
		u, _ := unitSeq(l, id)
		m = max(m, u)
	}
	return m
}

func minUnit(l intf.Layout, ids []intf.Id) int64 {
	m := int64(1) << 62
	for _, id := range ids {
		u, _ := unitSeq(l, id)
		m = min(m, u)
	}
	return m
}

func TestMarkWrittenAheadAndExactOnClose(t *testing.T) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			dir := t.TempDir()
			clk := newFakeClock(testStart.Add(123 * time.Millisecond))
			svc := startDir(t, dir, clk, service.Settings{Type: typ})
			// New stores a mark ahead of the clock before issuing.
			mark := readMark(t, dir)
			assert.Greater(t, mark, clk.Now().UnixMilli(), "the mark is ahead of the clock")
			assert.LessOrEqual(t, mark, clk.Now().Add(10*time.Second).UnixMilli(), "but not absurdly far")
			assert.Equal(t, mark, svc.Stats().HighWaterMillis)

			ids := genN(t, svc, 10)
			clk.Advance(l.Unit) // one unit later
			ids = append(ids, genN(t, svc, 10)...)
			last := maxUnit(l, ids)
			require.NoError(t, svc.Close())
			// Close stores exactly the start of the last unit issued.
			assert.Equal(t, unitStartMs(l, last), readMark(t, dir))
			assert.Equal(t, unitStartMs(l, last), svc.Stats().HighWaterMillis)
		})
	}
}

func TestCloseWithoutIdsKeepsMarkSafe(t *testing.T) {
	// A first run that issued nothing drops the mark it stored ahead, so a
	// quick restart does not wait it out.
	dir := t.TempDir()
	clk := newFakeClock(testStart)
	svc := startDir(t, dir, clk, service.Settings{})
	ahead := readMark(t, dir)
	assert.Greater(t, ahead, clk.Now().UnixMilli())
	require.NoError(t, svc.Close())
	assert.NoFileExists(t, filepath.Join(dir, "highwater"))
	assert.Zero(t, svc.Stats().HighWaterMillis)
	svc = startDir(t, dir, clk, service.Settings{})
	assert.Zero(t, clk.waits.Load(), "the restart did not wait")

	// A run that issued IDs, then one that issued nothing: the mark stays
	// at the last unit the first run issued, never lower.
	id, err := svc.GenId(bg)
	require.NoError(t, err)
	require.NoError(t, svc.Close())
	issued := unitStartMs(layoutOf(t, intf.MaxPeak), layoutOf(t, intf.MaxPeak).Time.Get(uint64(id)))
	assert.Equal(t, issued, readMark(t, dir))
	svc = startDir(t, dir, clk, service.Settings{})
	require.NoError(t, svc.Close())
	assert.Equal(t, issued, readMark(t, dir))
}

func TestRestartAfterCloseIssuesAbove(t *testing.T) {
	t.Parallel() // own data dir and fake clock; among the slowest here
	for _, typ := range bothTypes {
		for _, pop := range service.Populators() {
			t.Run(typ.String()+"/"+pop, func(t *testing.T) {
				l := layoutOf(t, typ)
				dir := t.TempDir()
				clk := newFakeClock(testStart)
				s := service.Settings{Type: typ, Populator: pop, Machine: 9}
				svc := startDir(t, dir, clk, s)
				first := genN(t, svc, 100)
				require.NoError(t, svc.Close())
				waitsBefore, before := clk.waits.Load(), clk.Now()
				// Same dir at once, the clock still in the same unit: the
				// next unit is handed out at once, a little ahead of the clock.
				svc = startDir(t, dir, clk, s)
				defer svc.Close()
				assert.Equal(t, waitsBefore, clk.waits.Load(), "New did not wait")
				assert.Equal(t, before, clk.Now())
				second := genN(t, svc, 100)
				assert.Greater(t, minUnit(l, second), maxUnit(l, first), "every ID after the restart is later in time")
				assert.Equal(t, maxUnit(l, first)+1, minUnit(l, second), "the unit right after the last one issued")
				n, err := checkUnique(l, [][]intf.Id{first, second})
				require.NoError(t, err)
				assert.Equal(t, 200, n)
			})
		}
	}
}

func TestRestartClockBehindWithinBound(t *testing.T) {
	t.Parallel() // own data dir and fake clock; among the slowest here
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			dir := t.TempDir()
			clk := newFakeClock(testStart)
			svc := startDir(t, dir, clk, service.Settings{Type: typ})
			first := genN(t, svc, 50)
			require.NoError(t, svc.Close())
			mark := readMark(t, dir)
			// The clock is 2 s behind when the service starts again: the
			// unit after the mark begins within the marks' 3 s lead, so it
			// is handed out at once.
			clk.Advance(-2 * time.Second)
			before := clk.Now()
			logs := &logBuffer{}
			svc = startDir(t, dir, clk, service.Settings{Type: typ, MaxClockBackwardWait: 3 * time.Second, Logger: logs.logger()})
			second := genN(t, svc, 50)
			assert.Equal(t, before, clk.Now(), "no wait")
			assert.Greater(t, minUnit(l, second), maxUnit(l, first))
			assert.Equal(t, maxUnit(l, first)+1, minUnit(l, second))
			_, err := checkUnique(l, [][]intf.Id{first, second})
			require.NoError(t, err)
			require.NoError(t, svc.Close())

			// 5 s behind (within the bound), the unit after the mark is
			// beyond the lead (3 s, plus the unit itself): New waits until
			// it is within it.
			clk.Set(time.UnixMilli(mark).Add(-5 * time.Second))
			svc = startDir(t, dir, clk, service.Settings{Type: typ, MaxClockBackwardWait: 6 * time.Second, Logger: logs.logger()})
			defer svc.Close()
			assert.Contains(t, logs.String(), "waiting for the clock to pass the high-water mark")
			third := genN(t, svc, 50)
			lastUnitStart := unitStartMs(l, maxUnit(l, second)+1)
			assert.GreaterOrEqual(t, clk.Now().UnixMilli(), lastUnitStart-3000-l.Unit.Milliseconds(), "waited until the next unit is within the lead and a unit")
			assert.Less(t, clk.Now().UnixMilli(), lastUnitStart-2000, "and not longer")
			_, err = checkUnique(l, [][]intf.Id{first, second, third})
			require.NoError(t, err)
		})
	}
}

func TestRestartClockBehindBeyondBound(t *testing.T) {
	dir := t.TempDir()
	clk := newFakeClock(testStart)
	svc := startDir(t, dir, clk, service.Settings{})
	genN(t, svc, 5)
	require.NoError(t, svc.Close())
	// The mark is at the start of testStart's second; the service may
	// resume one second later. Behind by 10 s, that is 11 s away.
	clk.Advance(-10 * time.Second)
	before := clk.Now()
	_, err := newDirService(dir, clk, service.Settings{MaxClockBackwardWait: 5 * time.Second})
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrClockBehind)
	assert.Contains(t, err.Error(), "11s behind", "the error says how far behind")
	assert.Contains(t, err.Error(), filepath.Join(dir, "highwater"))
	assert.Contains(t, err.Error(), "maxClockBackwardWait 5s")
	assert.Equal(t, before, clk.Now(), "no wait")
	// The failed start released the dir: a patient start works.
	svc, err = newDirService(dir, clk, service.Settings{MaxClockBackwardWait: 12 * time.Second})
	require.NoError(t, err)
	require.NoError(t, svc.Close())
	// The default bound is 5 s.
	clk.Advance(-20 * time.Second)
	_, err = newDirService(dir, clk, service.Settings{})
	assert.ErrorIs(t, err, intf.ErrClockBehind)
}

func TestRestartAfterCrash(t *testing.T) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			l := layoutOf(t, typ)
			dir := t.TempDir()
			clk := newFakeClock(testStart)
			svc := startDir(t, dir, clk, service.Settings{Type: typ})
			first := genN(t, svc, 50)
			clk.Advance(l.Unit)
			first = append(first, genN(t, svc, 50)...)
			// A crash leaves the mark that was stored ahead while the
			// service ran, not the exact one Close stores. The lock is
			// per open file, so the "crash" is simulated: copy the mark
			// now, close, and put the copy back.
			ahead, err := os.ReadFile(filepath.Join(dir, "highwater"))
			require.NoError(t, err)
			aheadMs := readMark(t, dir)
			require.Greater(t, aheadMs, clk.Now().UnixMilli())
			require.NoError(t, svc.Close())
			require.Less(t, readMark(t, dir), aheadMs)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "highwater"), ahead, 0o600))

			// The restart serves at once (no stall of up to the 3 s lead):
			// its IDs carry a time at most the lead ahead.
			before := clk.Now()
			svc = startDir(t, dir, clk, service.Settings{Type: typ})
			defer svc.Close()
			second := genN(t, svc, 50)
			floor := (aheadMs - intf.DefaultEpochMillis) / l.Unit.Milliseconds()
			assert.Greater(t, minUnit(l, second), floor, "the new service starts above the crashed one's mark")
			assert.Equal(t, floor+1, minUnit(l, second))
			assert.Equal(t, before, clk.Now(), "no wait")
			assert.LessOrEqual(t, unitStartMs(l, floor+1)-clk.Now().UnixMilli(), int64(3000), "at most the lead ahead")
			_, err = checkUnique(l, [][]intf.Id{first, second})
			require.NoError(t, err)
		})
	}
}

// TestCloseRacingGenId checks that an ID issued by a GenId that races with
// Close is covered by the mark Close stores: a restart on the same dir
// right after Close repeats no ID. A clock that blocks one read holds a
// GenId inside the populator while Close runs; then the clock moves to the
// next unit and the GenId resumes.
func TestCloseRacingGenId(t *testing.T) {
	t.Parallel() // own data dir and fake clock; among the slowest here
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			l := layoutOf(t, intf.MaxPeak)
			dir := t.TempDir()
			clk := &blockingClock{fakeClock: newFakeClock(testStart)}
			svc := startDir(t, dir, clk, service.Settings{Populator: pop})
			first := genN(t, svc, 3)

			entered, release := clk.blockNext()
			type result struct {
				id  intf.Id
				err error
			}
			racer := make(chan result, 1)
			go func() {
				id, err := svc.GenId(bg)
				racer <- result{id, err}
			}()
			<-entered
			closed := make(chan error, 1)
			go func() { closed <- svc.Close() }()
			// Lock-based populators make Close wait for the GenId; the
			// lock-free ones let it finish first.
			select {
			case err := <-closed:
				require.NoError(t, err)
				closed <- nil
			case <-time.After(50 * time.Millisecond):
			}
			clk.Advance(l.Unit)
			close(release)
			r := <-racer
			require.NoError(t, <-closed)
			if r.err == nil {
				first = append(first, r.id)
			} else {
				assert.ErrorIs(t, r.err, intf.ErrClosed)
			}

			svc = startDir(t, dir, clk, service.Settings{Populator: pop})
			defer svc.Close()
			second := genN(t, svc, 3)
			_, err := checkUnique(l, [][]intf.Id{first, second})
			require.NoError(t, err, "an ID issued while closing was repeated after the restart")
		})
	}
}

// blockingClock is a fakeClock whose next read, once armed, waits until the
// test releases it.
type blockingClock struct {
	*fakeClock
	mu      sync.Mutex
	entered chan struct{}
	release chan struct{}
}

func (c *blockingClock) blockNext() (entered, release chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entered, c.release = make(chan struct{}), make(chan struct{})
	return c.entered, c.release
}

func (c *blockingClock) NowNanos() int64 {
	c.mu.Lock()
	entered, release := c.entered, c.release
	c.entered, c.release = nil, nil
	c.mu.Unlock()
	if entered != nil {
		close(entered)
		<-release
	}
	return c.fakeClock.NowNanos()
}

func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	clk := newFakeClock(testStart)
	svc := startDir(t, dir, clk, service.Settings{})
	_, err := newDirService(dir, clk, service.Settings{})
	require.Error(t, err)
	assert.ErrorIs(t, err, service.ErrDataDirLocked)
	assert.Contains(t, err.Error(), dir)
	// The first service is unaffected.
	_, err = svc.GenId(bg)
	require.NoError(t, err)
	require.NoError(t, svc.Close())
	svc, err = newDirService(dir, clk, service.Settings{})
	require.NoError(t, err, "after Close the dir is free")
	require.NoError(t, svc.Close())
}

// A mark before the epoch (the epoch was moved later since) bounds
// nothing: every populator starts and issues at once.
func TestMarkBeforeTheEpoch(t *testing.T) {
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "highwater"), []byte("1000\n"), 0o600)) // 1970
			svc, err := newDirService(dir, newFakeClock(testStart), service.Settings{Populator: pop})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(bg, 2*time.Second)
			defer cancel()
			ids, err := svc.GenIds(ctx, 3)
			require.NoError(t, err)
			assert.Less(t, ids[0], ids[1])
			require.NoError(t, svc.Close())
		})
	}
}

func TestCorruptMark(t *testing.T) {
	for _, content := range []string{"garbage\n", "", "12.5", "0x10"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "highwater")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		_, err := newDirService(dir, newFakeClock(testStart), service.Settings{})
		require.Error(t, err, "%q", content)
		assert.Contains(t, err.Error(), path, "the error names the file")
		assert.ErrorIs(t, err, service.ErrCorruptMark)
		// The failed start released the lock and left the file alone.
		b, rerr := os.ReadFile(path)
		require.NoError(t, rerr)
		assert.Equal(t, content, string(b))
		require.NoError(t, os.Remove(path))
		svc, err := newDirService(dir, newFakeClock(testStart), service.Settings{})
		require.NoError(t, err)
		require.NoError(t, svc.Close())
	}
}

func TestUnwritableDataDir(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "not-a-dir")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	// The data dir is a regular file.
	_, err := newDirService(file, newFakeClock(testStart), service.Settings{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "data dir")
	// The data dir lies below a regular file.
	_, err = newDirService(filepath.Join(file, "sub"), newFakeClock(testStart), service.Settings{})
	require.Error(t, err)
	// The mark's place is taken by a directory: it cannot be read.
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "highwater"), 0o700))
	_, err = newDirService(dir, newFakeClock(testStart), service.Settings{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "high-water mark")
}

func TestNoDataDirWritesNothing(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("HOME", state)
	dir := t.TempDir()
	logs := &logBuffer{}
	svc, err := service.New(bg, service.Settings{NoDataDir: true, DataDir: dir, Clock: newFakeClock(testStart), Logger: logs.logger()})
	require.NoError(t, err)
	ids := genN(t, svc, 1000)
	_, err = checkUnique(layoutOf(t, intf.MaxPeak), [][]intf.Id{ids})
	require.NoError(t, err)
	assert.Zero(t, svc.Stats().HighWaterMillis)
	require.NoError(t, svc.Close())
	for _, d := range []string{dir, state} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		assert.Empty(t, entries, "%s stays empty", d)
	}
	assert.Contains(t, logs.String(), "without a data dir", "the risk is logged")
}

func TestDefaultDataDir(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	d := filepath.Join(state, "vesta-go")
	svc, err := service.New(bg, service.Settings{Clock: newFakeClock(testStart), Logger: discardLog})
	require.NoError(t, err)
	assert.Equal(t, d, svc.Settings().DataDir)
	assert.FileExists(t, filepath.Join(d, "highwater"))
	require.NoError(t, svc.Close())

	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", home)
	s, err := service.Settings{}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".local", "state", "vesta-go"), s.DataDir)
}

func TestErrClosedAndCloseTwice(t *testing.T) {
	for _, pop := range service.Populators() {
		t.Run(pop, func(t *testing.T) {
			dir := t.TempDir()
			svc := startDir(t, dir, newFakeClock(testStart), service.Settings{Populator: pop})
			_, err := svc.GenId(bg)
			require.NoError(t, err)
			require.NoError(t, svc.Close())
			_, err = svc.GenId(bg)
			assert.ErrorIs(t, err, intf.ErrClosed)
			_, err = svc.GenIds(bg, 10)
			assert.ErrorIs(t, err, intf.ErrClosed)
			assert.NoError(t, svc.Close(), "a second Close returns the first result")
			// Decoding and encoding need no running generator.
			_, err = svc.ExpId(bg, 1)
			assert.NoError(t, err)
			_, err = svc.MakeId(bg, intf.MakeIdRequest{Time: 1, Seq: 1})
			assert.NoError(t, err)
		})
	}
	t.Run("NoDataDir", func(t *testing.T) {
		svc, err := service.New(bg, service.Settings{NoDataDir: true, Logger: discardLog})
		require.NoError(t, err)
		require.NoError(t, svc.Close())
		_, err = svc.GenId(bg)
		assert.ErrorIs(t, err, intf.ErrClosed)
		assert.NoError(t, svc.Close())
	})
}

func TestCloseErrorIsSticky(t *testing.T) {
	// Close cannot store the exact mark when the data dir is gone: it
	// reports that, and a second Close returns the very same error.
	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	svc := startDir(t, dir, newFakeClock(testStart), service.Settings{})
	_, err := svc.GenId(bg)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(dir))
	err1 := svc.Close()
	require.Error(t, err1)
	assert.Contains(t, err1.Error(), filepath.Join(dir, "highwater"))
	err2 := svc.Close()
	assert.Same(t, err1, err2)
}

func TestCloseConcurrent(t *testing.T) {
	svc := startDir(t, t.TempDir(), newFakeClock(testStart), service.Settings{})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = svc.Close() })
	}
	wg.Wait()
	assert.NoError(t, errors.Join(errs...))
}

func TestLifetime(t *testing.T) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			// Epoch 1 ms after the Unix epoch: both time fields (about 34
			// years) ran out in 2004.
			_, err := service.New(bg, service.Settings{Type: typ, EpochMillis: 1, NoDataDir: true,
				Clock: newFakeClock(testStart), Logger: discardLog})
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrTimeOverflow)
			assert.Contains(t, err.Error(), "ran out at 2004-")

			// A clock before the epoch.
			_, err = service.New(bg, service.Settings{Type: typ, NoDataDir: true,
				Clock: newFakeClock(time.Date(2014, 6, 1, 0, 0, 0, 0, time.UTC)), Logger: discardLog})
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrTimeOverflow)
			assert.Contains(t, err.Error(), "before the epoch")

			// With a data dir, nothing is created for a refused start.
			dir := filepath.Join(t.TempDir(), "d")
			_, err = newDirService(dir, newFakeClock(testStart), service.Settings{Type: typ, EpochMillis: 1})
			assert.ErrorIs(t, err, intf.ErrTimeOverflow)
			assert.NoDirExists(t, dir)
		})
	}
}

func TestLifetimeEndsWhileRunning(t *testing.T) {
	// The clock starts two units before the end of the min-granularity
	// time field: the service warns, issues the last two units, then
	// refuses with ErrTimeOverflow instead of wrapping the time field.
	typ := intf.MinGranularity
	l := layoutOf(t, typ)
	clk := newFakeClock(testStart)
	epoch := testStart.UnixMilli() - (l.Time.Max() - 1)
	logs := &logBuffer{}
	svc := newSvc(t, service.Settings{Type: typ, EpochMillis: epoch, Clock: clk, Logger: logs.logger()})
	assert.Contains(t, logs.String(), "runs out soon")
	ids, err := svc.GenIds(bg, 2*int(l.Seq.Max()+1))
	require.NoError(t, err)
	assert.Equal(t, l.Time.Max(), maxUnit(l, ids))
	_, err = svc.GenId(bg)
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrTimeOverflow)
	_, err = svc.GenIds(bg, 5)
	assert.ErrorIs(t, err, intf.ErrTimeOverflow)
	// Nothing wrapped around to time 0.
	assert.Equal(t, l.Time.Max()-1, minUnit(l, ids))
}
