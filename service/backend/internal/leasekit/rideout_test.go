package leasekit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// outageBackend holds every id. Its outage begins phase after the first
// renewal answered at or after from (phase 0: the mark write that follows
// that renewal fails) and lasts length: meanwhile every call hangs until
// its context ends, as on an etcd cluster that lost its quorum.
type outageBackend struct {
	hangingBackend
	from          time.Time
	phase, length time.Duration

	mu       sync.Mutex
	down, up time.Time   // the outage, once it is set
	renewals int         // answered
	marks    []time.Time // when each mark was stored
}

func (b *outageBackend) hang(ctx context.Context) error {
	b.mu.Lock()
	now := time.Now()
	in := !b.down.IsZero() && !now.Before(b.down) && now.Before(b.up)
	b.mu.Unlock()
	if !in {
		return nil
	}
	<-ctx.Done()
	return outage.Error{Err: ctx.Err()}
}

func (b *outageBackend) Renew(ctx context.Context, _ Claim) (time.Duration, error) {
	if err := b.hang(ctx); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.renewals++
	if now := time.Now(); b.down.IsZero() && !now.Before(b.from) {
		b.down = now.Add(b.phase)
		b.up = b.down.Add(b.length)
	}
	return 10 * time.Second, nil
}

func (b *outageBackend) StoreMark(ctx context.Context, _ Claim, _ int64) error {
	if err := b.hang(ctx); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.marks = append(b.marks, time.Now())
	return nil
}

// bubbleClock is the system time of a synctest bubble.
type bubbleClock struct{}

func (bubbleClock) NowNanos() int64 { return time.Now().UnixNano() }
func (bubbleClock) WaitUntil(ctx context.Context, t int64) error {
	select {
	case <-time.After(time.Until(time.Unix(0, t))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A coordinator outage shorter than RideOut, less a time unit (the fence
// is the last unit that ends before the validity), stops no node of either
// type, wherever in the renewal cycle it begins — just after a renewal, so that the mark
// write after it fails (the node must go on to its fence on the mark
// stored before), up to just before the next renewal; while the marks,
// kept ahead of the validity by at most MarkSpan, cost one write per
// MarkInterval however often the claim is renewed.
func TestOutageShorterThanTheRideOutStopsNoNode(t *testing.T) {
	const ttl, dial = 10 * time.Second, 5 * time.Second
	r := RenewInterval(ttl)
	keep, step := MarkSpan(ttl)
	for _, phase := range []time.Duration{0, r / 4, r / 2, 3 * r / 4, r - time.Millisecond} {
		for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
			layout, _ := typ.Layout()
			length := RideOut(ttl, dial) - layout.Unit
			t.Run(fmt.Sprintf("%s, phase %s, outage %s", typ, phase, length), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					time.Sleep(time.Until(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))) // past the default epoch
					const steady = 30 * time.Second
					b := &outageBackend{from: time.Now().Add(steady), phase: phase, length: length}
					e := NewEngine(Config{
						Provider: "test",
						Common:   lease.Common{TTL: ttl, DialTimeout: dial, MachineRange: &machineid.Range{First: 1, Last: 1}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
					}, b)
					svc, err := service.New(t.Context(), service.Settings{Lease: e, Type: typ, NoDataDir: true, Clock: bubbleClock{},
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
					require.NoError(t, err)
					defer svc.Close()
					start := time.Now()
					var failed []string
					for time.Now().Before(start.Add(steady + r + length + 3*time.Second)) {
						synctest.Wait() // each call and read between the steps of the lease and the service
						if _, err := svc.GenId(t.Context()); err != nil {
							failed = append(failed, fmt.Sprintf("%s: %v", time.Since(start), err))
						}
						st := svc.Stats()
						// The mark is also kept the lead (3 s) ahead of the clock:
						// further than keep past the validity in its last 3 s.
						valid := time.Now().Add(time.Duration(st.LeaseLeftMillis) * time.Millisecond)
						ahead := time.UnixMilli(st.LeaseMarkMillis).Sub(valid)
						bound := max(keep, 3*time.Second-time.Until(valid)) + step
						require.LessOrEqual(t, ahead, bound+10*time.Millisecond, "the mark runs at most MarkSpan ahead of the validity, or of the clock plus the lead")
						time.Sleep(100 * time.Millisecond)
					}
					b.mu.Lock()
					defer b.mu.Unlock()
					require.False(t, b.down.IsZero(), "the outage happened")
					assert.Empty(t, failed, "calls refused through an outage of %s beginning %s after a renewal", length, phase)
					// The steady part, before the outage: a renewal every
					// RenewInterval, a mark every MarkInterval or so.
					var marks int
					for _, at := range b.marks {
						if at.Before(b.down) {
							marks++
						}
					}
					assert.LessOrEqual(t, marks, int(b.down.Sub(start)/MarkInterval(ttl))+2, "marks stored before the outage")
					assert.GreaterOrEqual(t, b.renewals, int(b.down.Sub(start)/(r+time.Millisecond)), "renewals")
				})
			})
		}
	}
}
