package segopen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
)

// A store's failure reaches the caller as "segment store unavailable",
// matching intf.ErrUnavailable and nothing of the failure; the failure is
// logged, once for a burst of them. Every other error passes as it is.
func TestCallerError(t *testing.T) {
	var logs syncbuf.Buffer
	m := New(func(context.Context) (*store, error) { return nil, nil }, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cause := errors.New("failed to connect: 127.0.0.1:40231 (127.0.0.1): dial error")
	failed := fmt.Errorf("segment tag %q: allocating a range: %w (%w)", "order", intf.ErrUnavailable, cause)

	for range 3 {
		err := m.CallerError(failed)
		assert.Equal(t, "segment store unavailable: retry shortly", err.Error())
		assert.ErrorIs(t, err, ErrStoreUnavailable)
		assert.ErrorIs(t, err, intf.ErrUnavailable, "a client tries another server")
		assert.NotErrorIs(t, err, cause, "nothing built from the error can reach the cause")
		var se *StoreError
		if assert.ErrorAs(t, err, &se) {
			assert.Equal(t, failed, se.Cause)
		}
		assert.Same(t, err, m.CallerError(err), "worded once")
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "127.0.0.1:40231"), "one line for the burst:\n%s", logs.String())

	down := &DownError{Err: fmt.Errorf("dial tcp 10.0.0.5:5432: %w", intf.ErrUnavailable)}
	err := m.CallerError(down)
	assert.Equal(t, "segment store unavailable: retry shortly", err.Error())
	assert.NotContains(t, logs.String(), "10.0.0.5", "a DownError is logged where it is recorded, not per call")

	for _, keep := range []error{nil, ErrOff, ErrNotOpen, intf.ErrUnknownTag, context.Canceled, intf.ErrClosed,
		fmt.Errorf("%w: count 0", intf.ErrInvalidArgument), &intf.TagError{Tag: "a b", Reason: "space"}} {
		assert.Equal(t, keep, m.CallerError(keep), "%v", keep)
	}
}
