package leasekit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/service"
)

// VerifyInterval is how often a holder reads that its claim is its own.
const VerifyInterval = time.Second

// hold is one claim and what the engine knows of it.
type hold struct {
	machine, token int64
	cluster        uint64
	prevMark       int64        // the floor the hold started above: every stored mark is at least it
	validUntil     atomic.Int64 // when the claim is surely still ours (service clock)
	storedMark     atomic.Int64 // a mark known stored for machine
	offline        atomic.Bool  // resumed without reaching the coordinator; no renewal since
	held           atomic.Bool  // the service holds machine (Hold returned)

	lost context.Context         // done once the claim is known gone; its cause says why
	lose context.CancelCauseFunc // (the first cause stays)

	stateMu  sync.Mutex // orders saveState calls
	released bool       // given up (under stateMu)

	stop func() // stops the renewer and the verifier, and waits for them
}

func newHold(machine, token int64) *hold {
	hd := &hold{machine: machine, token: token, stop: func() {}}
	hd.lost, hd.lose = context.WithCancelCause(context.Background())
	return hd
}

func (hd *hold) claim() Claim {
	return Claim{Machine: hd.machine, Token: hd.token, Cluster: hd.cluster}
}

// startRenewing renews and verifies hd in the background until release.
func (e *Engine) startRenewing(ctx context.Context, h service.LeaseHolder, hd *hold) {
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	hd.stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	go func() { defer wg.Done(); e.renew(rctx, h, hd) }()
	go func() { defer wg.Done(); e.verify(rctx, hd) }()
}

// attempt bounds one request of a holder: a small part of the TTL, so
// that a member that hangs cannot eat the fence's slack (the retry goes to
// another).
func (e *Engine) attempt() time.Duration {
	return min(e.c.DialTimeout, max(e.c.TTL/20, RetryInterval))
}

// renew renews hd every RenewInterval (RetryInterval while failing, or
// offline), each success extending the fence to t0 + Validity, t0 read
// before the request was sent. A failure leaves the fence to take effect
// by itself (logged as failures begin, at the fence, and when over).
func (e *Engine) renew(ctx context.Context, h service.LeaseHolder, hd *hold) {
	interval := RenewInterval(e.c.TTL)
	wait := interval
	if hd.offline.Load() {
		wait = RetryInterval
	}
	var failedAt int64 // service clock of the first failure; 0 while renewing
	fenced := false
	for ctxtime.Sleep(ctx, wait) == nil {
		t0 := h.Now()
		rctx, cancel := context.WithTimeout(ctx, e.attempt())
		ttl, err := e.b.Renew(rctx, hd.claim())
		cancel()
		now := h.Now()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrNotHeld):
			hd.lose(err)
			return
		case err != nil:
			// A hang is retried at once (another member), a refusal later.
			if wait = max(RetryInterval-time.Duration(now-t0), 0); failedAt == 0 {
				failedAt = now
				e.c.Logger.Warn(e.c.Provider+": cannot renew the machine id lease; retrying", "machine", hd.machine,
					"fencedIn", time.Duration(hd.validUntil.Load()-now).Round(time.Millisecond), "err", err)
			}
			if !fenced && now >= hd.validUntil.Load() {
				fenced = true
				e.c.Logger.Error(e.c.Provider+": machine id fenced: the lease was not renewed in time; no IDs until it is",
					"machine", hd.machine, "failingFor", time.Duration(now-failedAt).Round(time.Millisecond))
			}
			continue
		}
		v := t0 + int64(Validity(min(ttl, e.c.TTL)))
		hd.validUntil.Store(max(v, hd.validUntil.Load()))
		hd.offline.Store(false)
		if hd.lost.Err() != nil {
			return
		}
		h.Renewed(v)
		if failedAt != 0 {
			e.c.Logger.Info(e.c.Provider+": machine id lease renewed again", "machine", hd.machine,
				"failedFor", time.Duration(now-failedAt).Round(time.Millisecond), "wasFenced", fenced)
			failedAt, fenced = 0, false
		}
		wait = interval
		if hd.held.Load() {
			_ = e.saveState(h, hd) // logged
		}
		if w, ok := e.b.(interface{ Renewed(context.Context, Claim) }); ok {
			w.Renewed(ctx, hd.claim())
		}
	}
}

// verify reads every VerifyInterval whether hd's claim is still its own:
// a claim deleted or taken over stops issuing within a second, not at the
// next renewal. No answer is the fence's business.
func (e *Engine) verify(ctx context.Context, hd *hold) {
	for ctxtime.Sleep(ctx, VerifyInterval) == nil {
		if !hd.held.Load() {
			continue
		}
		vctx, cancel := context.WithTimeout(ctx, e.attempt())
		_, err := e.b.Held(vctx, hd.claim())
		cancel()
		if errors.Is(err, ErrNotHeld) && ctx.Err() == nil {
			hd.lose(err)
			return
		}
	}
}
