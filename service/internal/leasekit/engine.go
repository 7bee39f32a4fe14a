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

// Engine is the one machine-id lease: it claims, holds, renews, fences,
// resumes and releases a machine id, and stores its marks, over a
// Backend. It implements service.MachineLease; one Engine serves one
// service.
type Engine struct {
	c       Config
	b       Backend
	running atomic.Bool

	mu  sync.Mutex
	cur *hold               // the hold whose id the service holds or is taking
	h   service.LeaseHolder // set by Run

	counters Counters
}

// NewEngine makes the lease of c over b.
func NewEngine(c Config, b Backend) *Engine { return &Engine{c: c, b: b} }

// Stats returns the lease's counters, with the backend's own when it
// keeps some.
func (e *Engine) Stats() service.LeaseStats {
	st := e.counters.Stats()
	if s, ok := e.b.(interface{ AddStats(*service.LeaseStats) }); ok {
		s.AddStats(&st)
	}
	return st
}

// Run connects, holds a machine id (resuming the one the data dir's
// state names, else claiming one) and keeps it until ctx is done, telling
// h of every change. A failure to hold the first id is returned, unless a
// claim saved in the data dir waits for its coordinator; later failures
// are retried every RetryInterval while the service answers ErrFenced.
// After ctx is done it releases the id and returns ctx.Err().
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
	return e.loop(ctx, h)
}

// loop holds an id until it is lost, and claims again, the same id
// preferred. Ids refused for their marks are skipped by the next attempts
// until every free id was tried, so that ids far ahead cannot starve a
// free one beyond them.
func (e *Engine) loop(ctx context.Context, h service.LeaseHolder) error {
	st := LoadState(h, e.c.Logger, e.c.Provider, e.c.Endpoints, e.c.Prefix, e.c.Range)
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
			// A claim saved in the data dir waits for its coordinator
			// rather than exit: its id is this node's.
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
		case <-hd.lost:
		}
		e.c.Logger.Warn(e.c.Provider+": machine id lost; claiming one again", "machine", hd.machine, "why", hd.reason)
		h.Lost()
		e.release(h, hd)
		prefer, own = hd.machine, hd
	}
}

// take claims an id and has the service hold it. An id whose mark the
// service refuses as too far ahead (intf.ErrClockBehind) is given back
// and another claimed, up to MaxMarkRefusals times. On error nothing is
// held.
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
		hd.prevMark = c.Mark
		switch {
		case c.MarkLost:
			hd.prevMark = max(c.Mark, (now+int64(e.c.TTL+lead))/int64(time.Millisecond))
			e.c.Logger.Warn(e.c.Provider+": the mark of the machine id claimed is gone though the id was held; starting above the longest lead its last holder may have had",
				"machine", hd.machine, "startAbove", time.UnixMilli(hd.prevMark).UTC())
		case own != nil && own.machine == hd.machine && c.Mark <= own.storedMark.Load():
			// Nobody stored a mark since we lost it: every ID above our
			// claim's floor was ours, and ours lie below now + lead.
			hd.prevMark = max(own.prevMark, min(c.Mark, (now+int64(lead))/int64(time.Millisecond)))
		}
		err = e.hold(ctx, h, hd)
		if err == nil {
			e.counters.Claims.Add(1)
			e.c.Logger.Info(e.c.Provider+": machine id held", "machine", hd.machine, "node", e.c.NodeName,
				"lease", fmt.Sprintf("%x", hd.token), "prevMark", hd.prevMark)
			return hd, nil
		}
		if !errors.Is(err, intf.ErrClockBehind) || ctx.Err() != nil {
			return nil, fmt.Errorf("machine %d: %w", hd.machine, err)
		}
		e.counters.MarkRefusals.Add(1)
		r, full := ahead.Refuse(hd.machine, hd.prevMark, h.Now(), err, skip)
		e.c.Logger.Warn(e.c.Provider+": the mark of the machine id claimed is too far ahead; trying another id",
			"machine", hd.machine, "ahead", r.Ahead.Round(time.Millisecond), "err", err)
		if full {
			return nil, ahead
		}
	}
}

// maxClaims bounds the attempts of one claim: each failed one lists the
// ids held at that moment, so only ids taken by others at the same time
// make the next fail again.
const maxClaims = 64

// claim takes a free id of the range under a new token and starts
// renewing it: prefer first when it may be free, else a random id the
// latest listing shows free (never one in skip). Random picks spread N
// nodes starting at once over the range.
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
	for range maxClaims {
		id, ok := Pick(r, prefer, skip, taken, e.c.LowestFirst)
		if !ok {
			err = fmt.Errorf("%s: all %d machine ids of %s under %s are held by live nodes: %w", e.c.Provider, r.Size(), r, e.c.Claims, ErrAllTaken)
			if taken == nil {
				err = fmt.Errorf("%s: every free machine id of %s was refused for its mark: %w", e.c.Provider, r, ErrAllTaken)
			}
			break
		}
		prefer = -1
		e.counters.ClaimTxns.Add(1)
		c, cerr := e.b.TryClaim(ctx, token, id)
		if cerr != nil || c.OK {
			hd.machine, hd.cluster = id, c.Cluster
			hd.storedMark.Store(c.Mark)
			if cerr == nil {
				e.startRenewing(ctx, h, hd)
				return hd, c, nil
			}
			err = cerr
			break
		}
		taken = c.Taken
		err = fmt.Errorf("%s: %d claims in a row lost the race for a free id of %s: %w", e.c.Provider, maxClaims, r, ErrAllTaken)
	}
	e.giveUp(hd)
	return nil, Claimed{}, err
}

// hold has the service hold hd above hd.prevMark. A mark ahead by no more
// than a live holder's lead (its validity) is waited out here, as a
// holder's own mark or a lost claim's may be; the service refuses a mark
// further ahead than its MaxClockBackwardWait. On error hd is released.
func (e *Engine) hold(ctx context.Context, h service.LeaseHolder, hd *hold) error {
	lead := h.Lead()
	ahead := time.Duration(hd.prevMark*int64(time.Millisecond) - h.Now())
	if ahead > lead && ahead <= e.c.TTL+2*lead {
		e.c.Logger.Info(e.c.Provider+": waiting for the clock to near the mark of the machine id claimed",
			"machine", hd.machine, "wait", (ahead - lead).Round(time.Millisecond))
		if err := ctxtime.Sleep(ctx, ahead-lead); err != nil {
			e.release(h, hd)
			return err
		}
	}
	e.setCurrent(hd) // Hold stores a mark through StoreMark
	if err := h.Hold(ctx, hd.machine, hd.validUntil.Load(), hd.prevMark); err != nil {
		e.release(h, hd)
		return err
	}
	hd.held.Store(true)
	h.Renewed(hd.validUntil.Load()) // Hold may have waited for the clock meanwhile
	_ = e.saveState(h, hd)          // logged
	return nil
}

// resume takes up the claim of the previous run on this data dir (st):
// the same id and token, without a new claim. Online, the claim is renewed
// and checked, and the hold starts above the coordinator's mark for the
// id — capped at now + lead, since every ID above the claim's floor was
// that run's, and it stopped before now — so a data dir restored from a
// backup cannot make it issue again below what it issued. Offline (a
// coordinator that does not answer, not one that refuses), it resumes on
// the validity and the mark it saved, while the clock shows them
// running. It returns nil, nil when st cannot be resumed.
func (e *Engine) resume(ctx context.Context, h service.LeaseHolder, st *State) (*hold, error) {
	hd := newHold(st.Machine, st.Lease)
	hd.cluster = st.Cluster
	hd.storedMark.Store(st.StoredMarkMs)
	hd.prevMark = st.ClaimMarkMs
	t0, lead := h.Now(), max(h.Lead(), time.Duration(st.LeadNs))
	ttl, err := e.b.Renew(ctx, hd.claim())
	var mark int64
	if err == nil {
		mark, err = e.b.Held(ctx, hd.claim())
	}
	switch {
	case errors.Is(err, ErrNotHeld):
		e.c.Logger.Info(e.c.Provider+": the claim saved in the data dir is gone; claiming anew (the same id preferred)",
			"machine", st.Machine, "why", err)
		e.giveUp(hd)
		return nil, nil
	case err == nil:
		hd.validUntil.Store(t0 + int64(Validity(min(ttl, e.c.TTL))))
		hd.storedMark.Store(max(st.StoredMarkMs, mark))
		hd.prevMark = max(st.ClaimMarkMs, min(mark, (t0+int64(lead))/int64(time.Millisecond)))
	case !IsUnreachable(err):
		e.c.Logger.Warn(e.c.Provider+": cannot check the claim saved in the data dir; claiming anew", "machine", st.Machine, "err", err)
		return nil, nil
	default:
		valid := st.OfflineValidity(t0, lead, e.c.Logger, e.c.Provider, e.c.Coordinator, err)
		if valid == 0 { // the loop waits for the coordinator
			return nil, fmt.Errorf("%s: the claim of machine %d saved in the data dir is no longer surely valid, and %s does not answer: %w",
				e.c.Provider, st.Machine, e.c.Coordinator, err)
		}
		hd.validUntil.Store(valid)
		hd.offline.Store(true)
	}
	e.startRenewing(ctx, h, hd)
	if err := e.hold(ctx, h, hd); err != nil {
		return nil, fmt.Errorf("resuming machine %d: %w", hd.machine, err)
	}
	e.counters.Resumes.Add(1)
	e.c.Logger.Info(e.c.Provider+": machine id resumed from the data dir", "machine", hd.machine, "node", e.c.NodeName,
		"lease", fmt.Sprintf("%x", st.Lease), "offline", hd.offline.Load(), "prevMark", hd.prevMark)
	return hd, nil
}

// release stops renewing and gives the id up, its mark kept. A held id is
// first saved as released, so that no restart can resume it; when that
// cannot be saved, the claim is left to lapse instead.
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
		e.c.Logger.Warn(e.c.Provider+": cannot release the machine id; it is free once its claim lapses",
			"machine", hd.machine, "ttl", e.c.TTL, "err", err)
	}
}

func (e *Engine) setCurrent(hd *hold) {
	e.mu.Lock()
	e.cur = hd
	e.mu.Unlock()
}

func (e *Engine) current() (*hold, service.LeaseHolder) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur, e.h
}

// StoreMark stores ms as machine's time high-water mark, never below the
// mark the hold started from, only while this hold's claim holds machine:
// a node that lost the id can never lower its new holder's mark. A claim
// found gone is ErrNotHeld and makes the node claim again.
//
// A store that cannot reach the coordinator still succeeds when a mark of
// at least ms is known to be stored (by this hold, or by the run a resumed
// hold continues): lowering one is only a courtesy to the next holder.
func (e *Engine) StoreMark(ctx context.Context, machine int64, ms int64) error {
	hd, h := e.current()
	if hd == nil || hd.machine != machine {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, ErrNotHeld)
	}
	ms = max(ms, hd.prevMark)
	if hd.offline.Load() && ms <= hd.storedMark.Load() {
		return nil // covered; the coordinator has not answered since the resume
	}
	sctx, cancel := context.WithTimeout(ctx, e.c.DialTimeout)
	defer cancel()
	err := e.b.StoreMark(sctx, hd.claim(), ms)
	switch {
	case errors.Is(err, ErrNotHeld):
		hd.lose(err.Error())
		return fmt.Errorf("storing the mark of machine %d: %w", machine, err)
	case err != nil && ms <= hd.storedMark.Load():
		// Applied or not, the coordinator now holds ms or the mark
		// before: a lower bound of it is the lower of the two.
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

// saveState stores what resumes hd after a restart.
func (e *Engine) saveState(h service.LeaseHolder, hd *hold) error {
	hd.stateMu.Lock()
	defer hd.stateMu.Unlock()
	st := State{
		Cluster: hd.cluster, Endpoints: e.c.Endpoints, Prefix: e.c.Prefix, Node: e.c.NodeName, Host: Hostname(),
		Lease: hd.token, Machine: hd.machine, ClaimMarkMs: hd.prevMark, StoredMarkMs: hd.storedMark.Load(),
		ValidUntil: hd.validUntil.Load(), Saved: h.Now(), LeadNs: int64(h.Lead()),
	}
	if hd.released {
		st = st.Released()
	}
	return SaveState(h, e.c.Logger, e.c.Provider, st)
}
