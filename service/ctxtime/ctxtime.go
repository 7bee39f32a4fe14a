// Package ctxtime holds the time helpers of the doors and the leases: waits
// that honour a context (Sleep), call deadlines whose timer is made only
// when a call waits (Deadline), and a cheap monotonic reading (Monotonic).
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or returns ctx's error as soon as ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
