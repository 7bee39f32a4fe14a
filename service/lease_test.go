package service_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
)

// fakeLease is a machineid.Lease driven by the test: Run hands the holder to
// the test and waits for ctx; StoreMark records every mark.
type fakeLease struct {
	holders  chan machineid.Holder
	runErr   error // returned by Run at once when set
	mu       sync.Mutex
	marks    map[int64]int64 // machine → last mark stored
	released chan struct{}
}

func newFakeLease() *fakeLease {
	return &fakeLease{holders: make(chan machineid.Holder, 1), marks: map[int64]int64{}, released: make(chan struct{})}
}

func (l *fakeLease) Run(ctx context.Context, h machineid.Holder) error {
	if l.runErr != nil {
		return l.runErr
	}
	l.holders <- h
	<-ctx.Done()
	close(l.released)
	return ctx.Err()
}

func (l *fakeLease) StoreMark(_ context.Context, machine, ms int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.marks[machine] = ms
	return nil
}

func (l *fakeLease) mark(machine int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.marks[machine]
}

// startLeased starts a service on a fake lease and holds machine for it.
func startLeased(t *testing.T, clock *fakeClock, lease *fakeLease, machine int64) (*service.Service, machineid.Holder) {
	t.Helper()
	type result struct {
		svc *service.Service
		err error
	}
	done := make(chan result, 1)
	go func() {
		svc, err := service.New(bg, service.Settings{Lease: lease, Clock: clock, NoDataDir: true, Logger: discardLog})
		done <- result{svc, err}
	}()
	h := <-lease.holders
	select {
	case <-done:
		t.Fatal("New returned before the lease held an id")
	case <-time.After(20 * time.Millisecond):
	}
	require.NoError(t, h.Hold(bg, machine, h.Now()+int64(time.Hour), 0))
	r := <-done
	require.NoError(t, r.err)
	t.Cleanup(func() { _ = r.svc.Close() })
	return r.svc, h
}

func TestLeaseHoldLoseAndTakeOver(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 5)
	l := layoutOf(t, intf.MaxPeak)

	id, err := svc.GenId(bg)
	require.NoError(t, err)
	assert.Equal(t, int64(5), l.Machine.Get(uint64(id)))
	assert.Greater(t, lease.mark(5), clock.Now().UnixMilli(), "the lease mark is stored ahead of the clock")
	assert.True(t, svc.Stats().LeaseHeld)

	h.Lost()
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrFenced)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	_, err = svc.GenIds(bg, 10)
	assert.ErrorIs(t, err, intf.ErrFenced)
	assert.False(t, svc.Stats().LeaseHeld)
	assert.Equal(t, uint64(1), svc.Stats().Fences)

	// Take over machine 9, whose previous holder issued up to 2 s ahead of
	// our clock: the service waits past that mark and issues only above it.
	prevMark := clock.Now().Add(2 * time.Second).UnixMilli()
	require.NoError(t, h.Hold(bg, 9, h.Now()+int64(time.Hour), prevMark))
	id, err = svc.GenId(bg)
	require.NoError(t, err)
	assert.Equal(t, int64(9), l.Machine.Get(uint64(id)))
	assert.Equal(t, int64(9), svc.Stats().Machine)
	prevUnit := (prevMark - intf.DefaultEpochMillis) / 1000
	assert.Greater(t, l.Time.Get(uint64(id)), prevUnit, "issues only above the previous holder's mark")
}

func TestLeaseFenceByValidity(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 1)

	h.Lost()
	require.NoError(t, h.Hold(bg, 1, h.Now()+int64(1500*time.Millisecond), 0))
	h.Renewed(h.Now() + int64(time.Second)) // an earlier validity never shortens it
	_, err := svc.GenId(bg)
	require.NoError(t, err, "valid for 1.5 s more")
	clock.Advance(2 * time.Second)
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrFenced, "not renewed: fenced before the lease could expire")
	h.Renewed(h.Now() + int64(time.Hour))
	_, err = svc.GenId(bg)
	assert.NoError(t, err, "renewed again")
}

func TestLeaseHoldRefusesFarMark(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 1)
	err := h.Hold(bg, 2, h.Now()+int64(time.Hour), clock.Now().Add(time.Hour).UnixMilli())
	assert.ErrorIs(t, err, intf.ErrClockBehind)
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrFenced, "not issuing after a refused hold")
	err = h.Hold(bg, 1024, h.Now()+int64(time.Hour), 0)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
}

func TestLeaseCloseStoresExactMarkAndReleases(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, _ := startLeased(t, clock, lease, 3)
	id, err := svc.GenId(bg)
	require.NoError(t, err)
	require.NoError(t, svc.Close())
	<-lease.released
	unit := layoutOf(t, intf.MaxPeak).Time.Get(uint64(id))
	assert.Equal(t, intf.DefaultEpochMillis+unit*1000, lease.mark(3), "exact last unit stored")
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrClosed)
}

func TestLeaseRunFailsBeforeHold(t *testing.T) {
	lease := newFakeLease()
	lease.runErr = intf.ErrUnavailable
	_, err := service.New(bg, service.Settings{Lease: lease, NoDataDir: true, Logger: discardLog})
	assert.ErrorIs(t, err, intf.ErrUnavailable)
}

func TestLeaseNewHonoursContext(t *testing.T) {
	t.Parallel() // waits out a 50 ms deadline
	lease := newFakeLease()
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	_, err := service.New(ctx, service.Settings{Lease: lease, NoDataDir: true, Logger: discardLog})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestLeaseMarkCoversValidity(t *testing.T) {
	// The lease mark reaches the lease's validity, so an etcd outage does
	// not stop issuing before the fence does (the mark alone is 3 s ahead).
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 4)
	validUntil := h.Now() + int64(time.Hour)
	assert.GreaterOrEqual(t, lease.mark(4), validUntil/int64(time.Millisecond), "mark stored at Hold covers the validity")
	clock.Advance(30 * time.Minute) // far past the 3 s lead, within the validity; no mark written since
	_, err := svc.GenId(bg)
	assert.NoError(t, err, "issuing goes on while the lease is surely valid")
	clock.Advance(31 * time.Minute)
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrFenced)
}

// TestLeaseLeftCountsDown checks Stats.LeaseLeftMillis, the status page's
// TTL left: the validity less the service clock, renewed by Renewed, 0
// once lost.
func TestLeaseLeftCountsDown(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 5)
	assert.Equal(t, time.Hour.Milliseconds(), svc.Stats().LeaseLeftMillis, "the validity Hold was given")
	clock.Advance(10 * time.Minute)
	assert.Equal(t, (50 * time.Minute).Milliseconds(), svc.Stats().LeaseLeftMillis)
	h.Renewed(h.Now() + int64(2*time.Hour))
	assert.Equal(t, (2 * time.Hour).Milliseconds(), svc.Stats().LeaseLeftMillis)
	h.Lost()
	assert.Zero(t, svc.Stats().LeaseLeftMillis)
	plain, err := service.New(bg, service.Settings{Clock: clock, NoDataDir: true, Logger: discardLog})
	require.NoError(t, err)
	defer plain.Close()
	assert.Zero(t, plain.Stats().LeaseLeftMillis, "no lease, nothing left")
}

func TestLeaseMarkFollowsRenewal(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	_, h := startLeased(t, clock, lease, 6)
	later := h.Now() + 2*int64(time.Hour)
	h.Renewed(later)
	require.Eventually(t, func() bool { return lease.mark(6) >= later/int64(time.Millisecond) },
		900*time.Millisecond, 5*time.Millisecond, "the mark follows a renewal before the next 1 s tick")
}

// Close racing a loss and a new hold of another machine id must not store
// its exact last time as the new id's mark: that would lower the mark the
// id's previous holder left, which the next holder waits past. A hold that
// comes after Close began is refused.
func TestCloseRacingANewHoldLowersNoMark(t *testing.T) {
	t.Parallel() // own data dir and fake clock; among the slowest here
	for i := range 50 {
		clock := newFakeClock(testStart)
		lease := newFakeLease()
		done := make(chan *service.Service, 1)
		go func() {
			svc, err := service.New(bg, service.Settings{Lease: lease, Clock: clock, DataDir: t.TempDir(), Logger: discardLog})
			assert.NoError(t, err)
			done <- svc
		}()
		h := <-lease.holders
		require.NoError(t, h.Hold(bg, 5, h.Now()+int64(time.Hour), 0))
		svc := <-done
		require.NotNil(t, svc)
		_, err := svc.GenId(bg)
		require.NoError(t, err)

		prevMark := clock.Now().Add(2 * time.Second).UnixMilli() // machine 9's previous holder
		holdErr := make(chan error, 1)
		go func() {
			h.Lost()
			holdErr <- h.Hold(bg, 9, h.Now()+int64(time.Hour), prevMark)
		}()
		require.NoError(t, svc.Close())
		if err := <-holdErr; err != nil {
			require.ErrorIs(t, err, intf.ErrClosed, "iteration %d", i)
		}
		if m := lease.mark(9); m != 0 {
			require.GreaterOrEqual(t, m, prevMark-prevMark%1000, "iteration %d: machine 9's mark lowered", i)
		}
		require.ErrorIs(t, h.Hold(bg, 9, h.Now()+int64(time.Hour), 0), intf.ErrClosed, "no hold after Close")
	}
}

// LeaseHeld tells whether the node can issue now: it turns false the moment
// the lease's validity runs out without a renewal (etcd unreachable: no
// Lost comes), together with GenId failing, and true again on a renewal.
func TestLeaseHeldFollowsTheFence(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 5)
	h.Renewed(h.Now() + int64(2*time.Second))
	// The hold's own validity was an hour: a shorter renewal never
	// shortens it. Lose and hold again with a short validity.
	h.Lost()
	require.NoError(t, h.Hold(bg, 5, h.Now()+int64(2*time.Second), 0))
	_, err := svc.GenId(bg)
	require.NoError(t, err)
	assert.True(t, svc.Stats().LeaseHeld)

	clock.Advance(3 * time.Second) // past the validity, no renewal
	_, err = svc.GenId(bg)
	assert.ErrorIs(t, err, intf.ErrFenced)
	assert.False(t, svc.Stats().LeaseHeld, "fenced: not held for issuing")

	h.Renewed(h.Now() + int64(time.Minute))
	_, err = svc.GenId(bg)
	require.NoError(t, err)
	assert.True(t, svc.Stats().LeaseHeld, "renewed: issuing again")
}

// A hold whose floor is within the lead ahead of the clock (a resumed
// claim starts above now + lead) is served at once, its first IDs a little
// ahead of the clock, when that unit ends within the validity; with a
// validity that ends sooner, Hold waits for the clock instead (the fence
// would refuse the unit).
func TestHoldWithinTheLeadServesAtOnceInsideTheValidity(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	svc, h := startLeased(t, clock, lease, 5)
	l := layoutOf(t, intf.MaxPeak)
	h.Lost()
	waits := clock.waits.Load()
	floor := clock.Now().Add(2 * time.Second).UnixMilli()
	require.NoError(t, h.Hold(bg, 5, h.Now()+int64(time.Minute), floor))
	assert.Equal(t, waits, clock.waits.Load(), "no wait for the clock")
	id, err := svc.GenId(bg)
	require.NoError(t, err)
	assert.Greater(t, l.Time.Get(uint64(id)), (floor-intf.DefaultEpochMillis)/1000, "above the floor, ahead of the clock")

	h.Lost()
	floor = clock.Now().Add(2 * time.Second).UnixMilli()
	require.NoError(t, h.Hold(bg, 5, h.Now()+int64(2*time.Second), floor))
	assert.Equal(t, waits+1, clock.waits.Load(), "a validity ending sooner: waited for the clock to pass the floor")
	assert.Greater(t, clock.Now().UnixMilli(), floor)
}

// A hold whose floor lies within the lead (now + 3 s + MaxBorrow, what a
// resumed or a new claim starts above) is waited for, never refused as the
// clock behind, even when its validity is too short to hand out the next
// units at once and the lead exceeds MaxClockBackwardWait.
func TestLeaseHoldWaitsForAFloorWithinTheLead(t *testing.T) {
	clock := newFakeClock(testStart)
	lease := newFakeLease()
	done := make(chan error, 1)
	go func() {
		svc, err := service.New(bg, service.Settings{Lease: lease, Clock: clock, NoDataDir: true, Logger: discardLog,
			MaxBorrow: 3 * time.Second, MaxClockBackwardWait: 5 * time.Second})
		if err == nil {
			t.Cleanup(func() { _ = svc.Close() })
		}
		done <- err
	}()
	h := <-lease.holders
	require.Equal(t, 6*time.Second, h.Lead())
	floor := clock.Now().Add(6 * time.Second).UnixMilli()
	require.NoError(t, h.Hold(bg, 4, h.Now()+int64(4*time.Second), floor), "a floor within the lead is waited for")
	require.NoError(t, <-done)
	assert.GreaterOrEqual(t, clock.Now().UnixMilli(), floor, "waited until the unit after the floor began")
}
