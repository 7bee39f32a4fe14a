package service_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
)

// The lease state a MachineLease keeps in the data dir
// (LeaseHolder.SaveLeaseState) is trusted only with the mark beside it:
// these tests run a lease that saves a state and read what the next start
// on the same dir hands back.

// leaseStateFile is where the service keeps the lease state in its data dir.
const leaseStateFile = "lease.state"

// stateLease is a MachineLease that, in Run, reads the state of the
// previous run (sent on got), holds machine 7, saves save (when set; the
// result goes to saved) and, once ctx is done, saves atStop (when set; the
// result goes to savedAtStop), as etcdlease saves a revoked lease at stop.
type stateLease struct {
	save, atStop       []byte
	got                chan []byte
	saved, savedAtStop chan error
}

func newStateLease(save, atStop []byte) *stateLease {
	return &stateLease{save: save, atStop: atStop,
		got: make(chan []byte, 1), saved: make(chan error, 1), savedAtStop: make(chan error, 1)}
}

func (l *stateLease) Run(ctx context.Context, h machineid.Holder) error {
	l.got <- h.LeaseState()
	if err := h.Hold(ctx, 7, h.Now()+int64(time.Hour), 0); err != nil {
		return err
	}
	if l.save != nil {
		l.saved <- h.SaveLeaseState(l.save)
	}
	<-ctx.Done()
	if l.atStop != nil {
		l.savedAtStop <- h.SaveLeaseState(l.atStop)
	}
	return ctx.Err()
}

func (l *stateLease) StoreMark(context.Context, int64, int64) error { return nil }

// startStateLease starts a service with lease on dir ("" for none) and
// returns it with the state the lease found.
func startStateLease(t *testing.T, dir string, lease *stateLease, reset bool) (*service.Service, []byte) {
	t.Helper()
	s := service.Settings{Lease: lease, DataDir: dir, NoDataDir: dir == "", ResetDataDir: reset, Logger: discardLog}
	svc, err := service.New(bg, s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	return svc, <-lease.got
}

// runSaving runs a lease that saves state on dir, issues an ID (so that
// the dir keeps its mark) and closes the service.
func runSaving(t *testing.T, dir string, state []byte) {
	t.Helper()
	lease := newStateLease(state, nil)
	svc, got := startStateLease(t, dir, lease, false)
	assert.Nil(t, got, "a first start finds no lease state")
	require.NoError(t, <-lease.saved)
	b, err := os.ReadFile(filepath.Join(dir, leaseStateFile))
	require.NoError(t, err, "the state is in the data dir while the service runs")
	assert.True(t, bytes.HasPrefix(b, []byte("vesta lease state, dir ")) && bytes.HasSuffix(b, append([]byte("\n"), state...)),
		"the state, after a line naming the directory it was saved in: %q", b)
	_, err = svc.GenId(bg)
	require.NoError(t, err)
	require.NoError(t, svc.Close())
}

func TestLeaseStateIsKeptAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	runSaving(t, dir, []byte(`{"lease":42}`))

	lease := newStateLease(nil, nil)
	_, got := startStateLease(t, dir, lease, false)
	assert.Equal(t, []byte(`{"lease":42}`), got, "the restart on the same dir gets the state back")
}

// A copy of a data dir (a second instance started from it, say, while
// the original runs) must not resume the original's lease: the state names
// the directory it was saved in, and a copy is another directory.
func TestLeaseStateIsNotTakenByACopyOfTheDir(t *testing.T) {
	dir := t.TempDir()
	runSaving(t, dir, []byte(`{"lease":46}`))
	cp := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(cp, os.DirFS(dir)))

	var logs syncbuf.Buffer
	lease := newStateLease(nil, nil)
	svc, err := service.New(bg, service.Settings{Lease: lease, DataDir: cp, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	assert.Nil(t, <-lease.got, "the copy gets no lease state")
	assert.Contains(t, logs.String(), "was saved in another directory", "and says why")

	require.NoError(t, svc.Close())
	lease = newStateLease(nil, nil)
	_, got := startStateLease(t, dir, lease, false)
	assert.Equal(t, []byte(`{"lease":46}`), got, "the original still gets it")
}

func TestLeaseStateIsDroppedWithALostMark(t *testing.T) {
	dir := t.TempDir()
	runSaving(t, dir, []byte(`{"lease":43}`))
	require.NoError(t, os.Remove(filepath.Join(dir, "highwater")))

	// The mark is gone: without a reset the dir is refused, lease state
	// or not; with one, the state that relied on the mark is not handed
	// back and its file is removed before the lease runs.
	_, err := service.New(bg, service.Settings{Lease: newStateLease(nil, nil), DataDir: dir, Logger: discardLog})
	require.ErrorIs(t, err, service.ErrMarkMissing)
	require.FileExists(t, filepath.Join(dir, leaseStateFile), "a refused start leaves the state alone")

	lease := newStateLease(nil, nil)
	_, got := startStateLease(t, dir, lease, true)
	assert.Nil(t, got, "a start with resetDataDir gets no lease state")
	assert.NoFileExists(t, filepath.Join(dir, leaseStateFile), "and the state file is removed")
}

func TestIdleRunOnAFreshDirLeavesNoLeaseState(t *testing.T) {
	dir := t.TempDir()
	// The lease saves a state while it holds, and again after the stop
	// (as etcdlease records a revoked lease); nothing is issued.
	lease := newStateLease([]byte(`{"lease":44}`), []byte(`{"lease":0}`))
	svc, _ := startStateLease(t, dir, lease, false)
	require.NoError(t, <-lease.saved)
	require.FileExists(t, filepath.Join(dir, leaseStateFile), "saved while running")
	require.NoError(t, svc.Close())
	require.NoError(t, <-lease.savedAtStop, "a save after the mark was removed is a no-op, not an error")
	assert.NoFileExists(t, filepath.Join(dir, leaseStateFile), "a run that issued nothing on a fresh dir leaves no state")
	assert.NoFileExists(t, filepath.Join(dir, "highwater"))

	// The dir is still fresh: the next start is a first start, not a
	// dir that lost its mark.
	next := newStateLease(nil, nil)
	_, got := startStateLease(t, dir, next, false)
	assert.Nil(t, got)
}

func TestLeaseStateAloneIsATraceOfARun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, leaseStateFile), []byte(`{"lease":45}`), 0o600))
	lease := newStateLease(nil, nil)
	_, err := service.New(bg, service.Settings{Lease: lease, DataDir: dir, Logger: discardLog})
	require.ErrorIs(t, err, service.ErrMarkMissing, "a dir holding a lease state but no mark was used before")
	assert.Contains(t, err.Error(), leaseStateFile, "the error names the trace found")
	assert.Empty(t, lease.got, "the lease never ran")
}

func TestLeaseStateWithoutADataDir(t *testing.T) {
	lease := newStateLease([]byte(`{"lease":46}`), nil)
	svc, got := startStateLease(t, "", lease, false)
	assert.Nil(t, got)
	require.NoError(t, <-lease.saved, "SaveLeaseState without a data dir does nothing and succeeds")
	require.NoError(t, svc.Close())

	// Nothing was kept anywhere the next run could find it.
	next := newStateLease(nil, nil)
	_, got = startStateLease(t, "", next, false)
	assert.Nil(t, got, "no state without a data dir")
}
