package reload_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/reload"
	"github.com/vesta-go/vesta/internal/syncbuf"
)

func TestDigest(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("one"), 0o600))
	require.NoError(t, os.WriteFile(b, []byte("two"), 0o600))
	var d reload.Digest
	data, changed, err := d.Read(a, b)
	require.NoError(t, err)
	assert.True(t, changed, "the first read is a change")
	assert.Equal(t, [][]byte{[]byte("one"), []byte("two")}, data)
	_, changed, err = d.Read(a, b)
	require.NoError(t, err)
	assert.False(t, changed)
	// The same bytes split differently between the files are a change.
	require.NoError(t, os.WriteFile(a, []byte("onet"), 0o600))
	require.NoError(t, os.WriteFile(b, []byte("wo"), 0o600))
	_, changed, err = d.Read(a, b)
	require.NoError(t, err)
	assert.True(t, changed)
	require.NoError(t, os.Remove(b))
	_, _, err = d.Read(a, b)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// fake is a Reloader whose outcomes the test sets: each Reload takes the
// next of script, or the last one when it is used up.
type fake struct {
	mu     sync.Mutex
	script []outcome
	calls  int
	forced int
}

type outcome struct {
	changed bool
	err     error
}

func (f *fake) Reload(force bool) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.script[min(f.calls, len(f.script)-1)]
	f.calls++
	if force {
		f.forced++
	}
	return o.changed, o.err
}

func (f *fake) Name() string { return "fake file" }

func (f *fake) set(o ...outcome) {
	f.mu.Lock()
	f.script, f.calls = o, 0
	f.mu.Unlock()
}

func (f *fake) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.forced
}

func TestWatchOnSignalOnly(t *testing.T) {
	var logs syncbuf.Buffer
	broken := errors.New("line 3: broken")
	f := &fake{script: []outcome{{changed: true}, {err: broken}, {err: broken}, {err: broken}}}
	hup := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		reload.Watch(ctx, 0, hup, slog.New(slog.NewTextHandler(&logs, nil)), f)
		close(done)
	}()
	for range 4 {
		hup <- os.Interrupt
	}
	hup <- os.Interrupt // taken once the fourth reload is over
	cancel()
	<-done
	calls, forced := f.counts()
	assert.Equal(t, 5, calls, "no ticks with interval 0")
	assert.Equal(t, 5, forced)
	assert.Equal(t, 1, strings.Count(logs.String(), "msg=\"vesta: reloaded\""), logs.String())
	assert.Equal(t, 4, strings.Count(logs.String(), "line 3: broken"), "a forced reload logs the same failure again")
}

func TestWatchLogsAFailureOnce(t *testing.T) {
	var logs syncbuf.Buffer
	f := &fake{script: []outcome{{err: errors.New("line 3: broken")}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		reload.Watch(ctx, time.Millisecond, nil, slog.New(slog.NewTextHandler(&logs, nil)), f)
		close(done)
	}()
	require.Eventually(t, func() bool { c, _ := f.counts(); return c >= 20 }, 10*time.Second, time.Millisecond)
	f.set(outcome{err: errors.New("line 4: broken")})
	c0 := 0
	require.Eventually(t, func() bool { c, _ := f.counts(); return c >= c0+20 }, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	assert.Equal(t, 1, strings.Count(logs.String(), "line 3: broken"), "a broken file is logged once, not every tick")
	assert.Equal(t, 1, strings.Count(logs.String(), "line 4: broken"), "a new failure is logged")
}

// A configuration file replaced by a FIFO, a device or a huge file is an
// error at once, never a read that blocks or fills memory.
func TestReadFileRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	huge := filepath.Join(dir, "huge")
	require.NoError(t, os.WriteFile(huge, make([]byte, reload.MaxFileBytes+1), 0o600))
	for _, p := range []string{fifo, zero, huge} {
		done := make(chan error, 1)
		go func() { _, err := reload.ReadFile(p); done <- err }()
		select {
		case err := <-done:
			assert.Error(t, err, p)
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s blocked", p)
		}
	}
	ok := filepath.Join(dir, "ok")
	require.NoError(t, os.WriteFile(ok, []byte("cert"), 0o600))
	b, err := reload.ReadFile(ok)
	require.NoError(t, err)
	assert.Equal(t, "cert", string(b))
}
