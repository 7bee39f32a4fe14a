package leasekit

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// hangingBackend holds every id at once; its renewals hang (until their
// context ends) as often as hang says, as on a member that stopped.
type hangingBackend struct {
	mu      sync.Mutex
	hang    int             // renewals still to hang
	renews  []time.Duration // how long each renewal took
	started []time.Time
}

func (b *hangingBackend) Open(context.Context, func() int64) error { return nil }
func (b *hangingBackend) Close()                                   {}
func (b *hangingBackend) CheckClock(context.Context) error         { return nil }
func (b *hangingBackend) SwapLayout(_ context.Context, _, rec []byte) ([]byte, error) {
	return rec, nil
}
func (b *hangingBackend) NewToken(context.Context) (int64, time.Duration, error) {
	return 1, 10 * time.Second, nil
}
func (b *hangingBackend) TryClaim(context.Context, int64, int64) (Claimed, error) {
	return Claimed{OK: true}, nil
}
func (b *hangingBackend) Held(context.Context, Claim) (int64, error)    { return 0, nil }
func (b *hangingBackend) StoreMark(context.Context, Claim, int64) error { return nil }
func (b *hangingBackend) Release(context.Context, Claim) error          { return nil }
func (b *hangingBackend) Renew(ctx context.Context, _ Claim) (time.Duration, error) {
	start := time.Now()
	b.mu.Lock()
	hang := b.hang > 0
	b.hang--
	b.mu.Unlock()
	if hang {
		<-ctx.Done()
	}
	b.mu.Lock()
	b.renews, b.started = append(b.renews, time.Since(start)), append(b.started, start)
	b.mu.Unlock()
	if hang {
		return 0, outage.Error{Err: ctx.Err()}
	}
	return 10 * time.Second, nil
}

// holder is a machineid.Holder that accepts every hold and keeps the fence.
type holder struct {
	mu    sync.Mutex
	valid int64
	held  chan struct{}
}

func (h *holder) Now() int64          { return time.Now().UnixNano() }
func (h *holder) Lead() time.Duration { return 3 * time.Second }
func (h *holder) Layout() machineid.Layout {
	return machineid.Layout{EpochMillis: intf.DefaultEpochMillis, Type: intf.MaxPeak, GenMethod: 2}
}
func (h *holder) Hold(context.Context, int64, int64, int64) error {
	close(h.held)
	return nil
}
func (h *holder) Renewed(v int64)             { h.mu.Lock(); h.valid = max(h.valid, v); h.mu.Unlock() }
func (h *holder) Lost()                       {}
func (h *holder) LeaseState() []byte          { return nil }
func (h *holder) SaveLeaseState([]byte) error { return nil }

// A renewal sent to a member that hangs gives up after a small part of
// the TTL (attempt: max(TTL/20, 500 ms), at most the dial timeout) and is retried at
// once, so that two hung renewals in a row still leave the fence far off.
func TestRenewalNeverWaitsLongOnAHungMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &hangingBackend{hang: 2}
		e := NewEngine(Config{
			Provider: "test",
			Common:   lease.Common{TTL: 10 * time.Second, DialTimeout: 5 * time.Second, MachineRange: &machineid.Range{First: 1, Last: 1}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		}, b)
		h := &holder{held: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- e.Run(ctx, h) }()
		// The first renewal, its two hung attempts and the retry that
		// succeeds, and not the renewal after it; from the claim, as the
		// renewals start there, while the hold waits for its floor.
		time.Sleep(RenewInterval(10*time.Second) + time.Second + RenewInterval(10*time.Second)/2)
		synctest.Wait()
		cancel()
		<-done
		require.GreaterOrEqual(t, len(b.renews), 3)
		assert.Equal(t, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 0}, b.renews[:3], "each hung renewal gives up after max(TTL/20, 500 ms)")
		assert.Equal(t, b.started[0].Add(500*time.Millisecond), b.started[1], "retried at once, not after a pause")
		h.mu.Lock()
		defer h.mu.Unlock()
		assert.Equal(t, b.started[2].Add(Validity(10*time.Second)).UnixNano(), h.valid, "the fence moves from the retry that succeeded")
	})
}

// stateHolder is a holder whose data dir holds st, recording the hold.
type stateHolder struct {
	holder
	st    []byte
	floor chan int64
}

func (h *stateHolder) LeaseState() []byte { return h.st }
func (h *stateHolder) Hold(_ context.Context, _, _, prevMarkMs int64) error {
	h.floor <- prevMarkMs
	return nil
}

// markBackend holds every id, its mark at mark (Unix ms).
type markBackend struct {
	hangingBackend
	mark int64
}

func (b *markBackend) Held(context.Context, Claim) (int64, error) { return b.mark, nil }

// lostMarkBackend's claims find their id held before but no mark left.
type lostMarkBackend struct{ hangingBackend }

func (b *lostMarkBackend) TryClaim(context.Context, int64, int64) (Claimed, error) {
	return Claimed{OK: true, MarkLost: true}, nil
}

// A claim whose mark was lost starts above now + TTL + lead (the furthest
// its last holder may have issued), waiting until that is within the lead.
func TestLostMarkFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := Config{
			Provider: "test",
			Common:   lease.Common{Prefix: "/p", TTL: 10 * time.Second, DialTimeout: 5 * time.Second, MachineRange: &machineid.Range{First: 1, Last: 1}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		}
		h := &stateHolder{holder: holder{held: make(chan struct{})}, floor: make(chan int64, 1)}
		e := NewEngine(c, &lostMarkBackend{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- e.Run(ctx, h) }()
		floor := <-h.floor
		assert.Equal(t, start.Add(13*time.Second).UnixMilli(), floor, "now + TTL + lead")
		assert.Equal(t, start.Add(10*time.Second), time.Now(), "held once the floor was within the lead")
		cancel()
		<-done
	})
}
