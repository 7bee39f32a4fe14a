package etcdlease

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Lease leases a machine id from etcd. It implements service.MachineLease;
// one Lease serves one service.
type Lease struct {
	o       Options
	tls     *tls.Config
	keys    Keys
	running atomic.Bool

	given *clientv3.Client // the caller's client (NewWithClient), never closed here

	mu  sync.Mutex
	cli *clientv3.Client // set by Run
	cur *session         // the session whose id the service holds or is taking

	h service.LeaseHolder // set by Run

	counters  leasekit.Counters
	noSpace   atomic.Bool // the last mark store met etcd's NOSPACE alarm
	noSpaceMu sync.Mutex  // orders noteNoSpace's transitions

	historyEvery time.Duration
	historyWarn  int64
	histChecked  atomic.Int64 // service clock of the last history check
	histOldest   atomic.Int64 // the oldest revision seen and still readable
	uncompacted  atomic.Int64 // revisions since histOldest
}

// MaxMarkRefusals bounds how many claimed ids one attempt gives back
// because the service refused their mark (too far ahead of its clock):
// the attempt then fails with a *MarksAheadError. A running node retries,
// skipping the ids refused so far, so that a free id beyond them is found.
const MaxMarkRefusals = leasekit.MaxMarkRefusals

// Stats returns the lease's counters (service.Stats.Lease).
func (l *Lease) Stats() service.LeaseStats {
	st := l.counters.Stats()
	st.UncompactedRevisions, st.NoSpace = l.uncompacted.Load(), l.noSpace.Load()
	return st
}

var _ service.MachineLease = (*Lease)(nil)

// New validates o (an *OptionError names the wrong field) and loads the TLS
// files. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) {
	o, cfg, err := o.withDefaults(true)
	if err != nil {
		return nil, err
	}
	return newLease(o, cfg, nil), nil
}

func newLease(o Options, cfg *tls.Config, cli *clientv3.Client) *Lease {
	return &Lease{o: o, tls: cfg, keys: Keys{Prefix: o.Prefix}, given: cli, historyEvery: historyEvery, historyWarn: historyWarn}
}

// NewWithClient is New for an etcd client the caller made, as etcd's own
// concurrency.NewSession takes one: Run uses cli and never closes it (the
// caller owns it and closes it after Run returns). o's connection fields
// (Endpoints, the TLS files, Username, Password) are not used; DialTimeout
// still bounds each etcd request made while claiming an id.
func NewWithClient(cli *clientv3.Client, o Options) (*Lease, error) {
	if cli == nil {
		return nil, &OptionError{Provider: "etcdlease", Option: "client", Want: "a *clientv3.Client"}
	}
	o, _, err := o.withDefaults(false)
	if err != nil {
		return nil, err
	}
	o.Endpoints = cli.Endpoints()
	return newLease(o, nil, cli), nil
}

// Options returns the options in force, defaults filled in.
func (l *Lease) Options() Options { return l.o }

// Keys returns the layout of the keys this lease uses.
func (l *Lease) Keys() Keys { return l.keys }

// Run connects to etcd, claims a machine id and keeps it until ctx is done,
// telling h of every change (see the package comment). A failure to claim
// the first id (etcd unreachable within the dial timeout, every id taken,
// the clock out of line, more than MaxMarkRefusals free ids whose marks
// are too far ahead: a *MarksAheadError) is returned. Once
// running, every failure is retried every retryInterval while the service
// answers ErrFenced: ending Run then would leave the process up and fenced
// for good. After ctx is done it revokes the lease, which frees the id, and
// returns ctx.Err().
func (l *Lease) Run(ctx context.Context, h service.LeaseHolder) error {
	if !l.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	cli := l.given
	if cli == nil {
		var err error
		if cli, err = l.dial(); err != nil {
			return err
		}
		defer cli.Close()
	}
	l.mu.Lock()
	l.cli = cli
	l.h = h
	l.mu.Unlock()
	return l.loop(ctx, h)
}

// choice steers a claim: prefer is tried first when free (the id just
// lost; -1 for none); the ids in skip are not tried (refused for their
// marks in earlier attempts).
type choice struct {
	prefer int64
	skip   map[int64]bool
}

// loop claims an id, holds it until it is lost, and claims again. Failing
// to take the first id is fatal; later failures are retried every
// retryInterval. Ids refused for their marks are skipped by the next
// attempts until every free id has been tried, so that ids far ahead
// cannot starve a free one beyond them.
func (l *Lease) loop(ctx context.Context, h service.LeaseHolder) error {
	next := choice{prefer: -1}
	st := l.loadState(h)
	if st != nil {
		next.prefer = st.Machine // resumed, or else preferred
	}
	first, failing := true, false
	for {
		var s *session
		var err error
		if first && st != nil && st.Lease != 0 {
			s, err = l.resume(ctx, h, st)
		}
		if s == nil && err == nil {
			s, err = l.take(ctx, h, next)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if first {
				return err
			}
			next = choice{prefer: -1, skip: leasekit.NextSkip(next.skip, err)}
			if !failing {
				l.o.Logger.Error("etcdlease: cannot claim a machine id; retrying", "every", retryInterval, "err", err)
				failing = true
			}
			if err := ctxtime.Sleep(ctx, retryInterval); err != nil {
				return err
			}
			continue
		}
		if failing {
			l.o.Logger.Info("etcdlease: claimed a machine id again", "machine", s.machine)
		}
		first, failing = false, false
		select {
		case <-ctx.Done():
			l.setCurrent(nil)
			l.release(h, s)
			return ctx.Err()
		case <-s.lost:
		}
		l.setCurrent(nil)
		l.o.Logger.Warn("etcdlease: machine id lost; claiming one again", "machine", s.machine, "why", s.why())
		h.Lost()
		l.release(h, s)
		next = choice{prefer: s.machine}
	}
}

// take claims an id and has the service hold it. An id whose mark the
// service refuses as too far ahead (intf.ErrClockBehind) is given back
// and the next free one claimed, up to MaxMarkRefusals times. On error
// nothing is held.
func (l *Lease) take(ctx context.Context, h service.LeaseHolder, c choice) (*session, error) {
	s, err := l.acquire(ctx, h, c)
	if err != nil {
		return nil, err
	}
	skip := maps.Clone(c.skip)
	if skip == nil {
		skip = map[int64]bool{}
	}
	ahead := &MarksAheadError{Marks: l.keys.Marks(), Provider: "etcdlease"}
	for {
		l.setCurrent(s) // Hold stores a mark through StoreMark
		err := h.Hold(ctx, s.machine, s.validUntil.Load(), s.prevMark)
		if err == nil {
			break
		}
		l.setCurrent(nil)
		if !errors.Is(err, intf.ErrClockBehind) || ctx.Err() != nil {
			l.release(h, s)
			return nil, fmt.Errorf("machine %d: %w", s.machine, err)
		}
		l.counters.MarkRefusals.Add(1)
		r, full := ahead.Refuse(s.machine, s.prevMark, h.Now(), err, skip)
		l.o.Logger.Warn("etcdlease: the mark of the machine id claimed is too far ahead; trying another id",
			"machine", s.machine, "ahead", r.Ahead.Round(time.Millisecond), "err", err)
		if gerr := l.giveBack(ctx, s); gerr != nil {
			l.release(h, s)
			return nil, gerr
		}
		if full {
			l.release(h, s)
			return nil, ahead
		}
		if s.machine, s.prevMark, err = l.claim(ctx, s, choice{prefer: -1, skip: skip}); err != nil {
			l.release(h, s)
			if errors.Is(err, ErrAllTaken) {
				ahead.Exhausted = true
				return nil, ahead
			}
			return nil, err
		}
		if s.isLost() {
			l.release(h, s)
			return nil, fmt.Errorf("%w: the lease was lost while claiming machine %d: %s", ErrNotHeld, s.machine, s.why())
		}
	}
	l.counters.Claims.Add(1)
	l.held(h, s)
	l.o.Logger.Info("etcdlease: machine id held", "machine", s.machine, "node", l.o.NodeName,
		"lease", fmt.Sprintf("%x", int64(s.lease)), "prevMark", s.prevMark)
	return s, nil
}

// held finishes a hold the service accepted: the fence extended to the
// latest renewal (Hold may have waited for the clock meanwhile), and the
// state saved for a restart.
func (l *Lease) held(h service.LeaseHolder, s *session) {
	s.held.Store(true)
	h.Renewed(s.validUntil.Load())
	_ = l.saveState(h, s) // logged
}

// giveBack deletes the key of s's machine id, if it is still attached to
// s's lease, and keeps the lease for the next claim.
func (l *Lease) giveBack(ctx context.Context, s *session) error {
	ctx, cancel := l.timeout(ctx)
	defer cancel()
	key := l.keys.Machine(s.machine)
	if _, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", s.lease)).
		Then(clientv3.OpDelete(key)).
		Commit(); err != nil {
		return l.unavailable(ctx, "giving machine "+strconv.FormatInt(s.machine, 10)+" back", err)
	}
	return nil
}

func (l *Lease) setCurrent(s *session) {
	l.mu.Lock()
	l.cur = s
	l.mu.Unlock()
}

func (l *Lease) current() (*session, *clientv3.Client) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur, l.cli
}

// StoreMark stores ms as machine's time high-water mark, never below the
// mark found when the id was claimed, in a transaction that succeeds only
// while machine's key is attached to this node's lease: a node that lost
// the id can never lower its new holder's mark. A failed guard is
// ErrNotHeld and makes the node give the id up and claim again. The same
// transaction refreshes this node's clock report, so that a fleet writes
// one revision per node per renewal.
//
// A store that cannot reach etcd still succeeds when a mark of at least
// ms is known to be stored (by this hold, or by the run a resumed hold
// continues): what StoreMark promises is that etcd holds a mark covering
// ms, and lowering one is only a courtesy to the next holder.
func (l *Lease) StoreMark(ctx context.Context, machine int64, ms int64) error {
	s, cli := l.current()
	if s == nil || s.machine != machine {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, ErrNotHeld)
	}
	// Never below the mark this hold started from: the previous holder
	// may have issued up to it (service.MachineLease.StoreMark).
	ms = max(ms, s.prevMark)
	if s.offline.Load() && ms <= s.storedMark.Load() {
		return nil // covered; etcd has not answered since the resume
	}
	ctx, cancel := l.timeout(ctx)
	defer cancel()
	key := l.keys.Machine(machine)
	ops := []clientv3.Op{clientv3.OpPut(l.keys.Mark(machine), strconv.FormatInt(ms, 10)), l.clockOp(s, time.Duration(s.now()))}
	renaming := s.rename.Load()
	if renaming {
		ops = append(ops, clientv3.OpPut(key, l.o.NodeName, clientv3.WithLease(s.lease)))
	}
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", s.lease)).Then(ops...).Commit()
	if err != nil {
		if errors.Is(err, rpctypes.ErrNoSpace) {
			l.noteNoSpace(true, machine)
		}
		// Applied or not, etcd now holds ms or the mark before: a
		// lower bound of it is the lower of the two.
		if known := s.storedMark.Load(); ms <= known {
			s.storedMark.Store(ms)
			return nil
		}
		return l.unavailable(ctx, "storing the mark of machine "+strconv.FormatInt(machine, 10), err)
	}
	if !resp.Succeeded {
		s.lose("the key " + key + " is gone or belongs to another lease")
		return fmt.Errorf("storing the mark of machine %d: %s is not attached to our lease: %w", machine, key, ErrNotHeld)
	}
	l.noteNoSpace(false, machine)
	if renaming {
		s.rename.Store(false)
	}
	s.storedMark.Store(ms)
	if s.held.Load() {
		_ = l.saveState(l.h, s) // logged
	}
	return nil
}

// noteNoSpace says loudly, once per episode, that etcd refuses writes
// because its quota is full, and when it accepts them again.
func (l *Lease) noteNoSpace(full bool, machine int64) {
	l.noSpaceMu.Lock()
	defer l.noSpaceMu.Unlock()
	if l.noSpace.Load() == full {
		return
	}
	// The line is logged before the flag (Stats().Lease.NoSpace) changes,
	// so that whoever sees the flag finds the line that explains it.
	defer l.noSpace.Store(full)
	if full {
		l.o.Logger.Error("etcdlease: etcd is out of space (NOSPACE alarm) and refuses writes: this node issues IDs up to the mark already stored, then stops until space is freed; compact and defragment etcd, then `etcdctl alarm disarm` (docs/operations.md)",
			"machine", machine)
		return
	}
	l.o.Logger.Info("etcdlease: etcd accepts writes again (NOSPACE cleared)", "machine", machine)
}
