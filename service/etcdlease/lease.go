package etcdlease

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
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

	markRefusals atomic.Uint64 // ids given back because their mark was too far ahead
}

// MaxMarkRefusals bounds how many claimed ids one attempt gives back
// because the service refused their mark (too far ahead of its clock):
// the attempt then fails with a *MarksAheadError. A running node retries,
// skipping the ids refused so far, so that a free id beyond them is found.
const MaxMarkRefusals = 16

// Stats are the lease's counters.
type Stats struct {
	// MarkRefusals counts the claimed ids given back because their
	// high-water mark was further ahead of the clock than the service
	// waits (maxClockBackwardWait).
	MarkRefusals uint64
}

// Stats returns the lease's counters.
func (l *Lease) Stats() Stats { return Stats{MarkRefusals: l.markRefusals.Load()} }

// MarkRefusals is Stats().MarkRefusals, for service.Stats (which cannot
// import this package).
func (l *Lease) MarkRefusals() uint64 { return l.markRefusals.Load() }

var _ service.MachineLease = (*Lease)(nil)

// New validates o (an *OptionError names the wrong field) and loads the TLS
// files. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) {
	o, cfg, err := o.withDefaults(true)
	if err != nil {
		return nil, err
	}
	return &Lease{o: o, tls: cfg, keys: Keys{Prefix: o.Prefix}}, nil
}

// NewWithClient is New for an etcd client the caller made, as etcd's own
// concurrency.NewSession takes one: Run uses cli and never closes it (the
// caller owns it and closes it after Run returns). o's connection fields
// (Endpoints, the TLS files, Username, Password) are not used; DialTimeout
// still bounds each etcd request made while claiming an id.
func NewWithClient(cli *clientv3.Client, o Options) (*Lease, error) {
	if cli == nil {
		return nil, &OptionError{Option: "client", Want: "a *clientv3.Client"}
	}
	o, _, err := o.withDefaults(false)
	if err != nil {
		return nil, err
	}
	o.Endpoints = cli.Endpoints()
	return &Lease{o: o, keys: Keys{Prefix: o.Prefix}, given: cli}, nil
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
	first, failing := true, false
	for {
		s, err := l.take(ctx, h, next)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if first {
				return err
			}
			skip := next.skip
			next = choice{prefer: -1}
			var ahead *MarksAheadError
			if errors.As(err, &ahead) && !ahead.Exhausted {
				next.skip = map[int64]bool{}
				for id := range skip {
					next.skip[id] = true
				}
				for _, r := range ahead.Refused {
					next.skip[r.Machine] = true
				}
			} // else start over: marks once ahead may be passed by now
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
			l.release(s)
			return ctx.Err()
		case <-s.lost:
		}
		l.setCurrent(nil)
		l.o.Logger.Warn("etcdlease: machine id lost; claiming one again", "machine", s.machine, "why", s.why())
		h.Lost()
		l.release(s)
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
	skip := map[int64]bool{}
	for id := range c.skip {
		skip[id] = true
	}
	var refused []MarkRefusal
	for {
		l.setCurrent(s) // Hold stores a mark through StoreMark
		err := h.Hold(ctx, s.machine, s.validUntil.Load(), s.prevMark)
		if err == nil {
			break
		}
		l.setCurrent(nil)
		if !errors.Is(err, intf.ErrClockBehind) || ctx.Err() != nil {
			l.release(s)
			return nil, fmt.Errorf("machine %d: %w", s.machine, err)
		}
		l.markRefusals.Add(1)
		refused = append(refused, MarkRefusal{Machine: s.machine, MarkMillis: s.prevMark,
			Ahead: time.Duration(s.prevMark*int64(time.Millisecond) - h.Now())})
		l.o.Logger.Warn("etcdlease: the mark of the machine id claimed is too far ahead; trying another id",
			"machine", s.machine, "ahead", refused[len(refused)-1].Ahead.Round(time.Millisecond), "err", err)
		skip[s.machine] = true
		ahead := &MarksAheadError{Refused: refused, Marks: l.keys.Marks(), Err: err}
		if gerr := l.giveBack(ctx, s); gerr != nil {
			l.release(s)
			return nil, gerr
		}
		if len(refused) >= MaxMarkRefusals {
			l.release(s)
			return nil, ahead
		}
		if s.machine, s.prevMark, err = l.claim(ctx, s, choice{prefer: -1, skip: skip}); err != nil {
			l.release(s)
			if errors.Is(err, ErrAllTaken) {
				ahead.Exhausted = true
				return nil, ahead
			}
			return nil, err
		}
		if s.isLost() {
			l.release(s)
			return nil, fmt.Errorf("%w: the lease was lost while claiming machine %d: %s", ErrNotHeld, s.machine, s.why())
		}
	}
	// Hold may have waited for the clock while renewals went on: extend
	// the fence to the latest one.
	h.Renewed(s.validUntil.Load())
	l.o.Logger.Info("etcdlease: machine id held", "machine", s.machine, "node", l.o.NodeName,
		"lease", fmt.Sprintf("%x", int64(s.lease)), "prevMark", s.prevMark)
	return s, nil
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
// the id can never lower its new holder's mark. A failed
// guard is ErrNotHeld and makes the node give the id up and claim again.
func (l *Lease) StoreMark(ctx context.Context, machine int64, ms int64) error {
	s, cli := l.current()
	if s == nil || s.machine != machine {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, ErrNotHeld)
	}
	// Never below the mark this hold started from: the previous holder
	// may have issued up to it (service.MachineLease.StoreMark).
	ms = max(ms, s.prevMark)
	ctx, cancel := l.timeout(ctx)
	defer cancel()
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(l.keys.Machine(machine)), "=", s.lease)).
		Then(clientv3.OpPut(l.keys.Mark(machine), strconv.FormatInt(ms, 10))).
		Commit()
	if err != nil {
		return l.unavailable(ctx, "storing the mark of machine "+strconv.FormatInt(machine, 10), err)
	}
	if !resp.Succeeded {
		s.lose("the key " + l.keys.Machine(machine) + " is gone or belongs to another lease")
		return fmt.Errorf("storing the mark of machine %d: %s is not attached to our lease: %w", machine, l.keys.Machine(machine), ErrNotHeld)
	}
	return nil
}
