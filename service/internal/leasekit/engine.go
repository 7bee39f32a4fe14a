package leasekit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// Engine is the one machine-id lease over a Backend: it implements
// service.MachineLease for one service.
type Engine struct {
	c       Config
	b       Backend
	running atomic.Bool

	mu  sync.Mutex
	cur *hold               // the hold whose id the service holds or is taking
	h   service.LeaseHolder // set by Run

	claims, claimTxns, markRefusals, resumes atomic.Uint64
}

// NewEngine makes the lease of c over b.
func NewEngine(c Config, b Backend) *Engine { return &Engine{c: c, b: b} }

// Stats returns the lease's counters, with the backend's own.
func (e *Engine) Stats() service.LeaseStats {
	st := service.LeaseStats{MarkRefusals: e.markRefusals.Load(), Claims: e.claims.Load(), ClaimTxns: e.claimTxns.Load(), Resumes: e.resumes.Load()}
	if s, ok := e.b.(interface{ AddStats(*service.LeaseStats) }); ok {
		s.AddStats(&st)
	}
	return st
}

// Run holds a machine id (the saved claim resumed, else one claimed) until
// ctx is done, then releases it. A failure to hold the first id is
// returned unless a saved claim waits for its coordinator; later ones are
// retried while the service is fenced, the lost id preferred.
func (e *Engine) Run(ctx context.Context, h service.LeaseHolder) error {
	if !e.running.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: %w", e.c.Provider, ErrRunning)
	}
	if err := e.b.Open(ctx, h.Now); err != nil {
		return err
	}
	defer e.b.Close()
	e.mu.Lock()
	e.h = h
	e.mu.Unlock()
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
		var err error
		if st != nil && st.Lease != 0 {
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
			if first && (st == nil || !IsUnreachable(err)) {
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
			e.release(h, hd)
			return ctx.Err()
		case <-hd.lost.Done():
		}
		e.c.Logger.Warn(e.c.Provider+": machine id lost; claiming one again", "machine", hd.machine, "why", context.Cause(hd.lost))
		h.Lost()
		e.release(h, hd)
		prefer, own = hd.machine, hd
	}
}

// take claims an id and has the service hold it; an id whose mark the
// service refuses as too far ahead is given back and another claimed.
func (e *Engine) take(ctx context.Context, h service.LeaseHolder, prefer int64, skip map[int64]bool, own *hold) (*hold, error) {
	if err := e.b.CheckClock(ctx); err != nil {
		return nil, err
	}
	skip = maps.Clone(skip)
	if skip == nil {
		skip = map[int64]bool{}
	}
	ahead := &MarksAheadError{Marks: e.c.Marks, Provider: e.c.Provider}
	for {
		hd, c, err := e.claim(ctx, h, prefer, skip)
		if errors.Is(err, ErrAllTaken) && len(ahead.Refused) > 0 {
			ahead.Exhausted = true
			return nil, ahead
		}
		if err != nil {
			return nil, err
		}
		prefer = -1
		now, lead := h.Now(), h.Lead()
		switch hd.prevMark = c.Mark; {
		case c.MarkLost:
			hd.prevMark = max(c.Mark, (now+int64(e.c.TTL+lead))/int64(time.Millisecond))
			e.c.Logger.Warn(e.c.Provider+": the id claimed was held but has no mark left; starting above the furthest its last holder may have issued",
				"machine", hd.machine, "above", time.UnixMilli(hd.prevMark).UTC())
		case own != nil && own.machine == hd.machine && c.Mark <= own.storedMark.Load():
			// Nobody stored a mark since we lost it: the IDs above our
			// floor were ours, below now + lead.
			hd.prevMark = max(own.prevMark, min(c.Mark, (now+int64(lead))/int64(time.Millisecond)))
		}
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
		r, full := ahead.refuse(hd.machine, hd.prevMark, h.Now(), err, skip)
		e.c.Logger.Warn(e.c.Provider+": the mark of the machine id claimed is too far ahead; trying another id",
			"machine", hd.machine, "ahead", r.Ahead.Round(time.Millisecond), "err", err)
		if full {
			return nil, ahead
		}
	}
}

// claim takes a free id under a new token (prefer first, else a random
// one the latest listing shows free) and starts renewing it. A failed
// attempt lists the ids held, so only races make the next fail.
func (e *Engine) claim(ctx context.Context, h service.LeaseHolder, prefer int64, skip map[int64]bool) (*hold, Claimed, error) {
	t0 := h.Now()
	token, ttl, err := e.b.NewToken(ctx)
	if err != nil {
		return nil, Claimed{}, err
	}
	hd := newHold(-1, token)
	hd.validUntil.Store(t0 + int64(Validity(min(ttl, e.c.TTL))))
	r := e.c.Range
	var taken map[int64]bool // nil until an attempt lists the ids held
	err = fmt.Errorf("%s: 64 claims in a row lost the race for a free id of %s: %w", e.c.Provider, r, ErrAllTaken)
	for range 64 {
		id, ok := Pick(r, prefer, skip, taken, e.c.LowestFirst)
		if !ok {
			err = fmt.Errorf("%s: all %d machine ids of %s under %s are held by live nodes: %w", e.c.Provider, r.Size(), r, e.c.Claims, ErrAllTaken)
			if taken == nil {
				err = fmt.Errorf("%s: every free machine id of %s was refused for its mark: %w", e.c.Provider, r, ErrAllTaken)
			}
			break
		}
		prefer = -1
		e.claimTxns.Add(1)
		c, cerr := e.b.TryClaim(ctx, token, id)
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

// hold has the service hold hd above hd.prevMark, first waiting out a
// mark ahead by no more than a holder may run (its validity): the service
// refuses one further than MaxClockBackwardWait. On error hd is released.
func (e *Engine) hold(ctx context.Context, h service.LeaseHolder, hd *hold) error {
	lead := h.Lead()
	if ahead := time.Duration(hd.prevMark*int64(time.Millisecond) - h.Now()); ahead > lead && ahead <= e.c.TTL+2*lead {
		e.c.Logger.Info(e.c.Provider+": waiting for the clock to near the mark of the machine id claimed",
			"machine", hd.machine, "wait", (ahead - lead).Round(time.Millisecond))
		if err := ctxtime.Sleep(ctx, ahead-lead); err != nil {
			e.release(h, hd)
			return err
		}
	}
	e.mu.Lock()
	e.cur = hd // Hold stores a mark through StoreMark
	e.mu.Unlock()
	if err := h.Hold(ctx, hd.machine, hd.validUntil.Load(), hd.prevMark); err != nil {
		e.release(h, hd)
		return err
	}
	hd.held.Store(true)
	h.Renewed(hd.validUntil.Load()) // Hold may have waited for the clock meanwhile
	_ = e.saveState(h, hd)          // logged
	return nil
}

// resume takes up the previous run's claim (st). Online it is renewed and
// checked, and the hold starts above the coordinator's mark capped at now
// + lead — the IDs above the claim's floor were that run's, which stopped
// before now — so a data dir restored from a backup cannot repeat IDs.
// Offline (no answer, not a refusal) it resumes within the saved validity
// above the data dir's mark. nil, nil: claim anew.
func (e *Engine) resume(ctx context.Context, h service.LeaseHolder, st *State) (*hold, error) {
	hd := newHold(st.Machine, st.Lease)
	hd.cluster, hd.prevMark = st.Cluster, st.ClaimMarkMs
	hd.storedMark.Store(st.StoredMarkMs)
	t0, lead := h.Now(), max(h.Lead(), time.Duration(st.LeadNs))
	ttl, err := e.b.Renew(ctx, hd.claim())
	var mark int64
	if err == nil {
		mark, err = e.b.Held(ctx, hd.claim())
	}
	switch {
	case errors.Is(err, ErrNotHeld):
		e.giveUp(hd)
		return e.gone(st, err)
	case err == nil:
		hd.validUntil.Store(t0 + int64(Validity(min(ttl, e.c.TTL))))
		hd.storedMark.Store(max(st.StoredMarkMs, mark))
		hd.prevMark = max(st.ClaimMarkMs, min(mark, (t0+int64(lead))/int64(time.Millisecond)))
	case !IsUnreachable(err):
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
	e.startRenewing(ctx, h, hd)
	if err := e.hold(ctx, h, hd); errors.Is(err, ErrNotHeld) {
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

// release stops renewing and gives the id up, its mark kept. A held id is
// first saved as released (no restart may resume it), else left to lapse.
func (e *Engine) release(h service.LeaseHolder, hd *hold) {
	e.mu.Lock()
	if e.cur == hd {
		e.cur = nil
	}
	e.mu.Unlock()
	hd.stop()
	if hd.held.Load() {
		hd.stateMu.Lock()
		hd.released = true
		hd.stateMu.Unlock()
		if err := e.saveState(h, hd); err != nil {
			e.c.Logger.Warn(e.c.Provider+": not releasing the machine id, as its release cannot be recorded in the data dir; it is free once its claim lapses",
				"machine", hd.machine, "ttl", e.c.TTL, "err", err)
			return
		}
	}
	e.giveUp(hd)
}

// giveUp releases hd's claim in the coordinator.
func (e *Engine) giveUp(hd *hold) {
	hd.stop()
	ctx, cancel := context.WithTimeout(context.Background(), e.c.DialTimeout)
	defer cancel()
	if err := e.b.Release(ctx, hd.claim()); err != nil {
		e.c.Logger.Warn(e.c.Provider+": cannot release the machine id; it is free once its claim lapses", "machine", hd.machine, "ttl", e.c.TTL, "err", err)
	}
}

// StoreMark stores machine's mark, never below the hold's floor and only
// while the claim holds machine (a claim found gone fences at once). A
// store that fails still succeeds when a mark >= ms is known stored.
func (e *Engine) StoreMark(ctx context.Context, machine int64, ms int64) error {
	e.mu.Lock()
	hd, h := e.cur, e.h
	e.mu.Unlock()
	if hd == nil || hd.machine != machine {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, ErrNotHeld)
	}
	ms = max(ms, hd.prevMark)
	if hd.offline.Load() && ms <= hd.storedMark.Load() {
		return nil // covered; the coordinator has not answered since the resume
	}
	sctx, cancel := context.WithTimeout(ctx, e.c.DialTimeout)
	defer cancel()
	err := context.DeadlineExceeded
	for errors.Is(err, context.DeadlineExceeded) && sctx.Err() == nil { // a hung attempt: again, to another member
		actx, cancel := context.WithTimeout(sctx, e.attempt())
		err = e.b.StoreMark(actx, hd.claim(), ms)
		cancel()
	}
	switch {
	case errors.Is(err, ErrNotHeld):
		hd.lose(err)
		return fmt.Errorf("storing the mark of machine %d: %w", machine, err)
	case err != nil && ms <= hd.storedMark.Load():
		hd.storedMark.Store(ms)
		return nil
	case err != nil:
		return err
	}
	hd.storedMark.Store(ms)
	if hd.held.Load() {
		_ = e.saveState(h, hd) // logged
	}
	return nil
}
