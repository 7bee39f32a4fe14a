package segopen

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// Get says why segment mode is not open, in the order both servers
// answer: not open yet, down while retried, off; then the store once open.
func TestGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &store{}
		o := &opener{start: time.Now(), failures: 1, err: func(int) error { return intf.ErrUnavailable }, st: st}
		m := New(o.open, Options{Logger: slog.New(slog.DiscardHandler)})
		_, err := m.Get()
		require.ErrorIs(t, err, ErrNotOpen)
		assert.ErrorIs(t, err, intf.ErrUnavailable)

		require.NoError(t, m.Start(context.Background()))
		_, err = m.Get()
		var down *DownError
		require.ErrorAs(t, err, &down)
		assert.ErrorIs(t, err, intf.ErrUnavailable)

		time.Sleep(DefaultRetryMin)
		synctest.Wait()
		got, err := m.Get()
		require.NoError(t, err)
		assert.Same(t, st, got)
		require.NoError(t, m.Close())

		off := New(func(context.Context) (*store, error) { return nil, nil }, Options{})
		require.NoError(t, off.Start(context.Background()))
		_, err = off.Get()
		assert.ErrorIs(t, err, ErrOff)
	})
}
