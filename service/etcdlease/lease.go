package etcdlease

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

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
}

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
// the clock out of line, the id's mark too far ahead) is returned. Once
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
// lost), skip is not tried (an id the service just refused); -1 for none.
type choice struct{ prefer, skip int64 }

// loop claims an id, holds it until it is lost, and claims again. Failing
// to take the first id is fatal; later failures are retried every
// retryInterval. An id refused for its clock or mark is skipped at the next
// attempt, so that another free id can be taken meanwhile.
func (l *Lease) loop(ctx context.Context, h service.LeaseHolder) error {
	next := choice{prefer: -1, skip: -1}
	first, failing := true, false
	for {
		s, tried, err := l.take(ctx, h, next)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if first {
				return err
			}
			next = choice{prefer: -1, skip: -1}
			if errors.Is(err, intf.ErrClockBehind) {
				next.skip = tried
			}
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
		next = choice{prefer: s.machine, skip: -1}
	}
}

// take claims an id and has the service hold it. On error nothing is held;
// tried is the id claimed and then refused, or -1.
func (l *Lease) take(ctx context.Context, h service.LeaseHolder, c choice) (_ *session, tried int64, _ error) {
	s, err := l.acquire(ctx, h, c)
	if err != nil {
		return nil, -1, err
	}
	l.setCurrent(s) // Hold stores a mark through StoreMark
	if err := h.Hold(ctx, s.machine, s.validUntil.Load(), s.prevMark); err != nil {
		l.setCurrent(nil)
		l.release(s)
		return nil, s.machine, fmt.Errorf("machine %d: %w", s.machine, err)
	}
	// Hold may have waited for the clock while renewals went on: extend
	// the fence to the latest one.
	h.Renewed(s.validUntil.Load())
	l.o.Logger.Info("etcdlease: machine id held", "machine", s.machine, "node", l.o.NodeName,
		"lease", fmt.Sprintf("%x", int64(s.lease)), "prevMark", s.prevMark)
	return s, -1, nil
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
