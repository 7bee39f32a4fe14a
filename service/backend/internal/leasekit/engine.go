// Package leasekit is the machine-id lease engine of service/backend/etcdlease and
// service/backend/pglease: the choice of an id, the fence, the floors, the saved state.
package leasekit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/ctxtime"
	"github.com/vesta-go/vesta/service/machineid"
)

// Engine implements machineid.Lease for one service over a Backend.
type Engine struct {
	c       Config
	b       Backend
	running atomic.Bool
	cur     atomic.Pointer[hold] // the hold whose id the service holds or is taking
	lead    atomic.Int64         // fleetLead, ns

	claims, claimTxns, markRefusals, resumes atomic.Uint64
}

var _ machineid.Lease = (*Engine)(nil)

func NewEngine(c Config, b Backend) *Engine {
	c.MachineRange = cmp.Or(c.MachineRange, &machineid.FullRange)
	return &Engine{c: c, b: b}
}

func (e *Engine) Stats() machineid.LeaseStats {
	st := machineid.LeaseStats{MarkRefusals: e.markRefusals.Load(), Claims: e.claims.Load(), ClaimTxns: e.claimTxns.Load(), Resumes: e.resumes.Load()}
	if s, ok := e.b.(interface{ AddStats(*machineid.LeaseStats) }); ok {
		s.AddStats(&st)
	}
	return st
}

// Run holds a machine id (the saved claim, else a new one) until ctx is done. A
// failure to hold the first is returned unless a saved claim waits for its
// coordinator; later ones are retried while fenced, the lost id first.
func (e *Engine) Run(ctx context.Context, h machineid.Holder) error {
	if !e.running.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: %w", e.c.Provider, lease.ErrRunning)
	}
	if err := e.b.Open(ctx, h.Now); err != nil {
		return err
	}
	defer e.b.Close()
	st := e.loadState(h)
	prefer := int64(-1)
	if st != nil {
		prefer = st.Machine
	}
	var skip map[int64]bool
	var own *hold // the hold this process lost last
	first, failing := true, false
	for {
		var hd *hold
		err := e.checkLayout(ctx, h, st != nil && st.Lease != 0)
		if err == nil && st != nil && st.Lease != 0 {
			if hd, err = e.resume(ctx, h, st); hd == nil && err == nil {
				st = nil // not resumable: claim anew
			}
		}
		if hd == nil && err == nil {
			hd, err = e.take(ctx, h, prefer, skip, own)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if first && (st == nil || !outage.Is(err)) {
				return err
			}
			prefer, skip = -1, NextSkip(skip, err)
			if !failing {
				e.c.Logger.Error(e.c.Provider+": cannot hold a machine id; retrying", "every", RetryInterval, "err", err)
				failing = true
			}
			if err := ctxtime.Sleep(ctx, RetryInterval); err != nil {
				return err
			}
			continue
		}
		if failing {
			e.c.Logger.Info(e.c.Provider+": holding a machine id again", "machine", hd.machine)
		}
		first, failing, skip, st = false, false, nil, nil
		select {
		case <-ctx.Done():
			e.release(hd)
			return ctx.Err()
		case <-hd.lost.Done():
		}
		e.c.Logger.Warn(e.c.Provider+": machine id lost; claiming one again", "machine", hd.machine, "why", context.Cause(hd.lost))
		h.Lost()
		e.release(hd)
		prefer, own = hd.machine, hd
	}
}

// take claims an id and has the service hold it; an id whose mark is refused as
// too far ahead is given back and another claimed.
func (e *Engine) take(ctx context.Context, h machineid.Holder, prefer int64, skip map[int64]bool, own *hold) (*hold, error) {
	if err := e.b.CheckClock(ctx); err != nil {
		return nil, err
	}
	skip = maps.Collect(maps.All(skip)) // a copy, never nil
	ahead := &machineid.MarksAheadError{Marks: e.c.Marks, Provider: e.c.Provider}
	for {
		hd, c, err := e.claim(ctx, h, prefer, skip)
		if errors.Is(err, lease.ErrAllTaken) && len(ahead.Refused) > 0 {
			ahead.Exhausted = true
			return nil, ahead
		}
		if err != nil {
			return nil, err
		}
		prefer = -1
		hd.prevMark = e.claimFloor(h, hd.machine, c, own)
		if err = e.hold(ctx, h, hd); err == nil {
			e.claims.Add(1)
			e.c.Logger.Info(e.c.Provider+": machine id held", "machine", hd.machine, "node", e.c.NodeName,
				"lease", fmt.Sprintf("%x", hd.token), "prevMark", hd.prevMark)
			return hd, nil
		}
		if !errors.Is(err, intf.ErrClockBehind) || ctx.Err() != nil {
			return nil, fmt.Errorf("machine %d: %w", hd.machine, err)
		}
		e.markRefusals.Add(1)
		r, full := refuse(ahead, hd.machine, hd.prevMark, h.Now(), err, skip)
		e.c.Logger.Warn(e.c.Provider+": the mark of the machine id claimed is too far ahead; trying another id",
			"machine", hd.machine, "ahead", r.Ahead.Round(time.Millisecond), "err", err)
		if full {
			return nil, ahead
		}
	}
}

// claim takes a free id under a new token (prefer first) and starts renewing it.
func (e *Engine) claim(ctx context.Context, h machineid.Holder, prefer int64, skip map[int64]bool) (*hold, Claimed, error) {
	t0 := h.Now()
	nctx, cancel := e.bound(ctx)
	token, ttl, err := e.b.NewToken(nctx)
	cancel()
	if err != nil {
		return nil, Claimed{}, err
	}
	hd := newHold(h, -1, token)
	hd.validUntil.Store(t0 + int64(Validity(min(ttl, e.c.TTL))))
	r := *e.c.MachineRange
	var taken map[int64]bool // nil until an attempt lists the ids held
	err = fmt.Errorf("%s: 64 claims in a row lost the race for a free id of %s: %w", e.c.Provider, r, lease.ErrAllTaken)
	for range 64 {
		id, ok := Pick(r, prefer, skip, taken, e.c.LowestFirst)
		if !ok {
			err = fmt.Errorf("%s: all %d machine ids of %s under %s are held by live nodes: %w", e.c.Provider, r.Size(), r, e.c.Claims, lease.ErrAllTaken)
			if taken == nil {
				err = fmt.Errorf("%s: every free machine id of %s was refused for its mark: %w", e.c.Provider, r, lease.ErrAllTaken)
			}
			break
		}
		prefer = -1
		e.claimTxns.Add(1)
		cctx, cancel := e.bound(ctx)
		c, cerr := e.b.TryClaim(cctx, token, id)
		cancel()
		if cerr == nil && !c.OK {
			taken = c.Taken
			continue
		}
		hd.machine, hd.cluster, err = id, c.Cluster, cerr
		if cerr == nil {
			hd.storedMark.Store(c.Mark)
			e.startRenewing(ctx, h, hd)
			return hd, c, nil
		}
		break
	}
	e.giveUp(hd)
	return nil, Claimed{}, err
}

// hold has the service hold hd above hd.prevMark, first waiting out a mark ahead
// by no more than a holder may run (TTL + the fleet's lead); on error hd is released.
func (e *Engine) hold(ctx context.Context, h machineid.Holder, hd *hold) error {
	lead := h.Lead()
	if ahead := time.Duration(hd.prevMark*int64(time.Millisecond) - h.Now()); ahead > lead && ahead <= e.c.TTL+lead+e.fleetLead() {
		e.c.Logger.Info(e.c.Provider+": waiting for the clock to near the mark of the machine id claimed",
			"machine", hd.machine, "wait", (ahead - lead).Round(time.Millisecond))
		if err := ctxtime.Sleep(ctx, ahead-lead); err != nil {
			e.release(hd)
			return err
		}
	}
	e.cur.Store(hd) // Hold stores a mark through StoreMark
	if err := h.Hold(ctx, hd.machine, hd.validUntil.Load(), hd.prevMark); err != nil {
		e.release(hd)
		return err
	}
	hd.held.Store(true)
	h.Renewed(hd.validUntil.Load()) // Hold may have waited for the clock meanwhile
	_ = e.saveState(hd)             // logged
	return nil
}

// resume takes up the saved claim (nil, nil: claim anew) above resumeFloor:
// online, or offline (no answer, not a refusal) within the saved validity.
func (e *Engine) resume(ctx context.Context, h machineid.Holder, st *State) (*hold, error) {
	hd := newHold(h, st.Machine, st.Lease)
	hd.cluster = st.Cluster
	hd.storedMark.Store(st.StoredMarkMs)
	t0, lead := h.Now(), max(h.Lead(), time.Duration(st.LeadNs))
	rctx, cancel := e.bound(ctx)
	ttl, err := e.b.Renew(rctx, hd.claim())
	var mark int64 // the coordinator's: a mark known stored, not a floor
	if err == nil {
		mark, err = e.b.Held(rctx, hd.claim())
	}
	cancel()
	switch {
	case errors.Is(err, lease.ErrNotHeld):
		e.giveUp(hd)
		return e.gone(st, err)
	case err == nil:
		hd.validUntil.Store(t0 + int64(Validity(min(ttl, e.c.TTL))))
		hd.storedMark.Store(max(st.StoredMarkMs, mark))
	case !outage.Is(err):
		e.c.Logger.Warn(e.c.Provider+": cannot check the claim saved in the data dir; claiming anew", "machine", st.Machine, "err", err)
		return nil, nil
	default:
		valid := st.OfflineValidity(h.Now(), e.c.Logger, e.c.Provider, e.c.Coordinator, err)
		if valid == 0 { // the loop waits for the coordinator
			return nil, fmt.Errorf("%s: the claim of machine %d saved in the data dir is no longer surely valid, and %s does not answer: %w",
				e.c.Provider, st.Machine, e.c.Coordinator, err)
		}
		hd.validUntil.Store(valid)
		hd.offline.Store(true)
	}
	hd.prevMark = resumeFloor(h.Now(), lead, st)
	e.startRenewing(ctx, h, hd)
	if err := e.hold(ctx, h, hd); errors.Is(err, lease.ErrNotHeld) {
		return e.gone(st, err)
	} else if err != nil {
		return nil, fmt.Errorf("resuming machine %d: %w", hd.machine, err)
	}
	e.resumes.Add(1)
	e.c.Logger.Info(e.c.Provider+": machine id resumed from the data dir", "machine", hd.machine, "node", e.c.NodeName,
		"lease", fmt.Sprintf("%x", st.Lease), "offline", hd.offline.Load(), "prevMark", hd.prevMark)
	return hd, nil
}

func (e *Engine) gone(st *State, why error) (*hold, error) {
	e.c.Logger.Info(e.c.Provider+": the claim saved in the data dir is gone; claiming anew (the same id preferred)", "machine", st.Machine, "why", why)
	return nil, nil
}

// release stops renewing and gives the id up, first saved as released if held
// (no restart may resume it; else it is left to lapse).
func (e *Engine) release(hd *hold) {
	e.cur.CompareAndSwap(hd, nil)
	hd.stop()
	if hd.held.Load() {
		hd.stateMu.Lock()
		hd.released = true
		hd.stateMu.Unlock()
		if err := e.saveState(hd); err != nil {
			e.c.Logger.Warn(e.c.Provider+": not releasing the machine id, as its release cannot be recorded in the data dir; it is free once its claim lapses",
				"machine", hd.machine, "ttl", e.c.TTL, "err", err)
			return
		}
	}
	e.giveUp(hd)
}

func (e *Engine) giveUp(hd *hold) {
	hd.stop()
	ctx, cancel := e.bound(context.Background())
	defer cancel()
	if err := e.b.Release(ctx, hd.claim()); err != nil {
		e.c.Logger.Warn(e.c.Provider+": cannot release the machine id; it is free once its claim lapses", "machine", hd.machine, "ttl", e.c.TTL, "err", err)
	}
}

// StoreMark stores machine's mark, never below the hold's floor, while the claim
// holds machine; a failed store succeeds if a mark >= ms is known stored.
func (e *Engine) StoreMark(ctx context.Context, machine int64, ms int64) error {
	hd := e.cur.Load()
	if hd == nil || hd.machine != machine {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, lease.ErrNotHeld)
	}
	ms = max(ms, hd.prevMark)
	if hd.offline.Load() && ms <= hd.storedMark.Load() {
		return nil // covered; the coordinator has not answered since the resume
	}
	sctx, cancel := context.WithTimeout(ctx, e.c.DialTimeout)
	defer cancel()
	err := context.DeadlineExceeded
	for errors.Is(err, context.DeadlineExceeded) && sctx.Err() == nil { // a hung attempt: again, to another member
		actx, cancel := context.WithTimeout(sctx, attempt(e.c.TTL, e.c.DialTimeout))
		err = e.b.StoreMark(actx, hd.claim(), ms)
		cancel()
	}
	switch {
	case errors.Is(err, lease.ErrNotHeld):
		hd.lose(err)
		return fmt.Errorf("storing the mark of machine %d: %w", machine, err)
	case err != nil && ms > hd.storedMark.Load():
		return err
	}
	hd.storedMark.Store(ms)
	if err == nil && hd.held.Load() {
		_ = e.saveState(hd) // logged
	}
	return nil
}

type hold struct {
	h              machineid.Holder // whose lease state saveState writes
	machine, token int64
	cluster        uint64
	prevMark       int64        // the floor the hold started above: every stored mark is at least it
	validUntil     atomic.Int64 // when the claim is surely still ours (service clock)
	storedMark     atomic.Int64 // a mark known stored for machine
	offline        atomic.Bool  // resumed without reaching the coordinator; no renewal since
	held           atomic.Bool  // the service holds machine (Hold returned)
	savedValid     atomic.Int64 // the validity last saved in the data dir

	lost context.Context         // done once the claim is known gone; its cause says why
	lose context.CancelCauseFunc // (the first cause stays)

	stateMu  sync.Mutex // orders saveState calls
	released bool       // given up (under stateMu)

	stop func() // stops the renewer and the verifier, and waits for them
}

func newHold(h machineid.Holder, machine, token int64) *hold {
	hd := &hold{h: h, machine: machine, token: token, stop: func() {}}
	hd.lost, hd.lose = context.WithCancelCause(context.Background())
	return hd
}

func (hd *hold) claim() Claim {
	return Claim{Machine: hd.machine, Token: hd.token, Cluster: hd.cluster}
}

func (e *Engine) startRenewing(ctx context.Context, h machineid.Holder, hd *hold) {
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	hd.stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	wg.Go(func() { e.renew(rctx, h, hd) })
	wg.Go(func() { e.verify(rctx, hd) })
}

// bound bounds one backend call by the dial timeout (TimedOut then says so).
func (e *Engine) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return outage.Bound(ctx, e.c.DialTimeout)
}

// attempt bounds one request of a holder, a small part of the TTL: a member that
// hangs cannot eat the fence's slack.
func attempt(ttl, dial time.Duration) time.Duration { return min(dial, max(ttl/20, RetryInterval)) }

// MarkSpan is machineid.MarkSpan: see MarkSpan.
func (e *Engine) MarkSpan() (keep, step time.Duration) { return MarkSpan(e.c.TTL) }

// renew renews hd every RenewInterval (RetryInterval while failing or offline),
// each success extending the fence to t0 + Validity, t0 read first.
func (e *Engine) renew(ctx context.Context, h machineid.Holder, hd *hold) {
	interval := RenewInterval(e.c.TTL)
	wait := interval
	if hd.offline.Load() {
		wait = RetryInterval
	}
	var failedAt int64 // service clock of the first failure; 0 while renewing
	fenced := false
	for ctxtime.Sleep(ctx, wait) == nil {
		t0 := h.Now()
		rctx, cancel := context.WithTimeout(ctx, attempt(e.c.TTL, e.c.DialTimeout))
		ttl, err := e.b.Renew(rctx, hd.claim())
		cancel()
		now := h.Now()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, lease.ErrNotHeld):
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
		recovered := hd.offline.Swap(false) || failedAt != 0
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
		// Saved about as often as the marks, and after an outage: an older
		// validity only shortens an offline resume.
		if hd.held.Load() && (recovered || v-hd.savedValid.Load() >= int64(MarkInterval(e.c.TTL))) {
			_ = e.saveState(hd) // logged
		}
		if w, ok := e.b.(interface{ Renewed(context.Context, Claim) }); ok {
			wctx, cancel := context.WithTimeout(ctx, attempt(e.c.TTL, e.c.DialTimeout)) // on the renewer: bounded as a renewal
			w.Renewed(wctx, hd.claim())
			cancel()
		}
	}
}

// verify reads every VerifyInterval that hd's claim is its own, so that one deleted
// or taken over stops within noticeBound. No answer is the fence's business.
func (e *Engine) verify(ctx context.Context, hd *hold) {
	tick := time.NewTicker(VerifyInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !hd.held.Load() {
			continue
		}
		vctx, cancel := context.WithTimeout(ctx, e.verifyAttempt())
		_, err := e.b.Held(vctx, hd.claim())
		cancel()
		if errors.Is(err, lease.ErrNotHeld) && ctx.Err() == nil {
			hd.lose(err)
			return
		}
	}
}
