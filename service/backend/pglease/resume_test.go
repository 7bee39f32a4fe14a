package pglease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/service/backend/pglease"
)

// run runs l with h until the test ends; the returned function stops it
// and returns Run's error.
func run(t *testing.T, l *pglease.Lease, h *fakeHolder) (stop func() error) {
	h.lease = l
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, h) }()
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// held waits for h's next hold.
func held(t *testing.T, h *fakeHolder) int64 {
	t.Helper()
	select {
	case m := <-h.held:
		return m
	case <-time.After(10 * testTTL):
		t.Fatal("no hold")
		return -1
	}
}

// crash holds an id with a new lease on dsn and stops it as a crash
// would: its release cannot be recorded, so it is not made (the claim
// stays live). It returns the state the lease saved and the id.
func crash(t *testing.T, dsn string, edit ...func(*pglease.Options)) ([]byte, int64) {
	t.Helper()
	h := newFakeHolder(nil)
	stop := run(t, newLease(t, dsn, "first", edit...), h)
	m := held(t, h)
	eventually(t, testTTL, "the hold is saved", func() bool { return h.lastSaved() != nil })
	state := h.lastSaved()
	h.mu.Lock()
	h.failSaves = true
	h.mu.Unlock()
	require.ErrorIs(t, stop(), context.Canceled)
	return state, m
}

func TestResumeAfterRestartKeepsTheIdWithoutWaiting(t *testing.T) {
	t.Parallel()
	dsn := newDSN(t)
	state, m := crash(t, dsn, withRange(6, 7), func(o *pglease.Options) { o.TTL = time.Minute })
	c := db(t, dsn)
	before, ok := rowOf(t, c, m)
	require.True(t, ok)
	require.True(t, before.live, "a crash releases nothing")

	l := newLease(t, dsn, "second", withRange(6, 7), func(o *pglease.Options) { o.TTL = time.Minute })
	h := newFakeHolder(state)
	start := time.Now()
	run(t, l, h)
	assert.Equal(t, m, held(t, h), "the same id")
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second, "no wait for the minute-long claim to lapse")
	eventually(t, testTTL, "counted as a resume, not a claim", func() bool {
		return l.Stats().Resumes == 1 && l.Stats().Claims == 0
	})
	after, _ := rowOf(t, c, m)
	assert.Equal(t, before.token, after.token, "the same claim")
	assert.Equal(t, "second", after.holder, "renamed by the first mark stored")
	t.Logf("resumed machine %d in %s", m, took.Round(time.Millisecond))
}

func TestResumeRefusedWhenTheIdWasTakenOver(t *testing.T) {
	t.Parallel()
	dsn := newDSN(t)
	state, m := crash(t, dsn, withRange(6, 7))
	_, err := db(t, dsn).Exec(bg, `UPDATE vesta_machines SET token = token + 1, holder = 'thief' WHERE machine = $1`, m)
	require.NoError(t, err)
	l := newLease(t, dsn, "second", withRange(6, 7))
	h := newFakeHolder(state)
	run(t, l, h)
	got := held(t, h)
	assert.NotEqual(t, m, got, "another id: the saved one belongs to another node now")
	eventually(t, testTTL, "counted as a claim, not a resume", func() bool {
		return l.Stats().Claims == 1 && l.Stats().Resumes == 0
	})
}

// While PostgreSQL is unreachable, a restart resumes on the claim saved
// (Leaf's weak dependency), within its validity, and renews once the
// database answers again.
func TestResumeWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	dsn := newDSN(t)
	p := nettest.NewProxy(t, hostOf(t, dsn))
	via := viaProxy(t, dsn, p.Addr())
	// The default DialTimeout (5 s), which also bounds every statement:
	// 500 ms failed the first claim now and then on a loaded machine. The
	// cut proxy refuses at once, so the offline resume waits for no
	// timeout.
	long := func(o *pglease.Options) { o.TTL = 30 * time.Second }
	state, m := crash(t, via, long)
	before, _ := rowOf(t, db(t, dsn), m)

	p.Cut()
	l := newLease(t, via, "second", long)
	h := newFakeHolder(state)
	run(t, l, h)
	assert.Equal(t, m, held(t, h), "resumed offline")
	eventually(t, testTTL, "counted as a resume", func() bool { return l.Stats().Resumes == 1 })

	p.Restore()
	eventually(t, 10*time.Second, "renewed once the database answers", func() bool {
		r, _ := rowOf(t, db(t, dsn), m)
		return r.holder == "second" && r.live && r.token == before.token && savedValidity(t, h.lastSaved()) > savedValidity(t, state)
	})
}
