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

// VerifyInterval is how often a holder reads that its claim is still its
// own: a claim deleted by hand or taken over stops issuing within it.
const VerifyInterval = time.Second

// hold is one claim and what the engine knows of it.
type hold struct {
	machine, token int64
	cluster        uint64
	prevMark       int64 // the floor the hold started above: every stored mark is at least it
	// validUntil is when the claim is surely still ours (service clock).
	validUntil atomic.Int64
	// storedMark is a mark known to be stored for machine.
	storedMark atomic.Int64
	// offline: resumed without reaching the coordinator; no renewal since.
	offline atomic.Bool
	// held: the service holds machine (Hold returned); its state is saved.
	held atomic.Bool

	lost     chan struct{} // closed once the claim is known gone
	loseOnce sync.Once
	reason   string // why it was lost; read after lost is closed

	stateMu  sync.Mutex // orders saveState calls
	released bool       // given up (under stateMu)

	stop func()
	done sync.WaitGroup // the renewer and the verifier
}

func newHold(machine, token int64) *hold {
	return &hold{machine: machine, token: token, lost: make(chan struct{}), stop: func() {}}
}

func (hd *hold) claim() Claim {
	return Claim{Machine: hd.machine, Token: hd.token, Cluster: hd.cluster}
}

func (hd *hold) lose(why string) {
	hd.loseOnce.Do(func() {
		hd.reason = why
		close(hd.lost)
	})
}

func (hd *hold) isLost() bool {
	select {
	case <-hd.lost:
		return true
	default:
		return false
	}
}

// startRenewing keeps hd alive and checks it in the background until
// release.
func (e *Engine) startRenewing(ctx context.Context, h service.LeaseHolder, hd *hold) {
	rctx, cancel := context.WithCancel(ctx)
	hd.stop = sync.OnceFunc(func() { cancel(); hd.done.Wait() })
	hd.done.Add(2)
	go e.renew(rctx, h, hd)
	go e.verify(rctx, hd)
}

// renew renews hd every RenewInterval (every RetryInterval while failing,
// or offline). Each success extends the fence to t0 + Validity, t0 being
// the service clock read before the request was sent: the coordinator
// cannot let the claim lapse before its own receipt + TTL. A renewal that
// fails leaves the fence to take effect by itself; a claim known gone
// closes hd.lost.
func (e *Engine) renew(ctx context.Context, h service.LeaseHolder, hd *hold) {
	defer hd.done.Done()
	interval := RenewInterval(e.c.TTL)
	wait := interval
	if hd.offline.Load() {
		wait = RetryInterval
	}
	rl := RenewLog{Log: e.c.Logger, Provider: e.c.Provider}
	for {
		if ctxtime.Sleep(ctx, wait) != nil {
			return
		}
		t0 := h.Now()
		// One member that hangs must not eat the slack: a short bound,
		// then the retry goes to another.
		rctx, cancel := context.WithTimeout(ctx, min(e.c.DialTimeout, max(e.c.TTL/10, RetryInterval)))
		ttl, err := e.b.Renew(rctx, hd.claim())
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrNotHeld):
			hd.lose(err.Error())
			return
		case err != nil:
			rl.Failed(h.Now(), hd.validUntil.Load(), hd.machine, err)
			wait = RetryInterval
			continue
		}
		v := t0 + int64(Validity(min(ttl, e.c.TTL)))
		hd.validUntil.Store(max(v, hd.validUntil.Load()))
		hd.offline.Store(false)
		if hd.isLost() {
			return
		}
		h.Renewed(v)
		rl.Renewed(h.Now(), hd.machine)
		wait = interval
		if hd.held.Load() {
			_ = e.saveState(h, hd) // logged
		}
		if w, ok := e.b.(interface{ Renewed(context.Context, Claim) }); ok {
			w.Renewed(ctx, hd.claim())
		}
	}
}

// verify reads every VerifyInterval whether hd's claim is still its own,
// so that a claim deleted or taken over stops issuing within a second,
// not at the next renewal. A coordinator that does not answer is the
// renewals' and the fence's business.
func (e *Engine) verify(ctx context.Context, hd *hold) {
	defer hd.done.Done()
	for ctxtime.Sleep(ctx, VerifyInterval) == nil {
		if !hd.held.Load() {
			continue
		}
		vctx, cancel := context.WithTimeout(ctx, min(e.c.DialTimeout, VerifyInterval))
		_, err := e.b.Held(vctx, hd.claim())
		cancel()
		if errors.Is(err, ErrNotHeld) && ctx.Err() == nil {
			hd.lose(err.Error())
			return
		}
	}
}
