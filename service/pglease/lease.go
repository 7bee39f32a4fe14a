package pglease

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// Lease leases a machine id from a PostgreSQL table. It implements
// service.MachineLease; one Lease serves one service.
type Lease struct {
	o       Options
	cfg     *pgxpool.Config
	server  string // host:port/database, for logs and errors
	sql     statements
	running atomic.Bool

	pool       *pgxpool.Pool // set by Run
	tableReady atomic.Bool

	mu  sync.Mutex
	cur *hold               // the hold whose id the service holds or is taking
	h   service.LeaseHolder // set by Run

	counters leasekit.Counters
}

var _ service.MachineLease = (*Lease)(nil)

// New validates o (an *OptionError names the wrong field) and parses the
// DSN. It does no network I/O: Run connects.
func New(o Options) (*Lease, error) {
	o, cfg, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = o.DialTimeout
	}
	cfg.MaxConns = 4 // a renewal, a mark store and Close's at once at most
	return &Lease{o: o, cfg: cfg, server: server(cfg.ConnConfig), sql: newStatements(o.Table)}, nil
}

// Options returns the options in force, defaults filled in (the DSN as
// given: do not log it).
func (l *Lease) Options() Options { return l.o }

// Stats returns the lease's counters (service.Stats.Lease).
func (l *Lease) Stats() service.LeaseStats {
	return l.counters.Stats()
}

// Run connects, claims a machine id (or resumes the one the data dir's
// state names) and keeps it until ctx is done, telling h of every change.
// A failure to hold the first id (the database unreachable, every id
// taken, the clock out of line, the marks too far ahead) is returned;
// later failures are retried every leasekit.RetryInterval while the
// service answers ErrFenced. After ctx is done it releases the id and
// returns ctx.Err().
func (l *Lease) Run(ctx context.Context, h service.LeaseHolder) error {
	if !l.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	pool, err := pgxpool.NewWithConfig(ctx, l.cfg) // connects lazily
	if err != nil {
		return l.dbError(ctx, "connecting", err)
	}
	defer pool.Close()
	l.pool = pool
	l.mu.Lock()
	l.h = h
	l.mu.Unlock()
	return l.loop(ctx, h)
}

// loop holds an id until it is lost, and claims again (the same id
// preferred). Failing to hold the first is fatal; later failures are
// retried, skipping the ids refused for their marks until every free id
// was tried.
func (l *Lease) loop(ctx context.Context, h service.LeaseHolder) error {
	st := leasekit.LoadState(h, l.o.Logger, "pglease", l.stateEndpoints(), l.o.Prefix, l.claimRange())
	prefer := int64(-1)
	if st != nil {
		prefer = st.Machine
	}
	var skip map[int64]bool
	first, failing := true, false
	for {
		var hd *hold
		var err error
		if first && st != nil && st.Lease != 0 {
			hd, err = l.resume(ctx, h, st)
		}
		if hd == nil && err == nil {
			hd, err = l.take(ctx, h, prefer, skip)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if first {
				return err
			}
			prefer, skip = -1, leasekit.NextSkip(skip, err)
			if !failing {
				l.o.Logger.Error("pglease: cannot claim a machine id; retrying", "every", leasekit.RetryInterval, "err", err)
				failing = true
			}
			if err := ctxtime.Sleep(ctx, leasekit.RetryInterval); err != nil {
				return err
			}
			continue
		}
		if failing {
			l.o.Logger.Info("pglease: claimed a machine id again", "machine", hd.machine)
		}
		first, failing, skip = false, false, nil
		select {
		case <-ctx.Done():
			l.release(h, hd)
			return ctx.Err()
		case <-hd.lost:
		}
		l.o.Logger.Warn("pglease: machine id lost; claiming one again", "machine", hd.machine, "why", hd.reason)
		h.Lost()
		l.release(h, hd)
		prefer = hd.machine
	}
}

// take claims an id and has the service hold it. An id whose mark the
// service refuses as too far ahead (intf.ErrClockBehind) is given back
// and another claimed, up to leasekit.MaxMarkRefusals times. On error
// nothing is held.
func (l *Lease) take(ctx context.Context, h service.LeaseHolder, prefer int64, skip map[int64]bool) (*hold, error) {
	if err := l.ensureTable(ctx); err != nil {
		return nil, err
	}
	if err := l.checkClock(ctx, h); err != nil {
		return nil, err
	}
	skip = maps.Clone(skip)
	if skip == nil {
		skip = map[int64]bool{}
	}
	ahead := &MarksAheadError{Marks: "the mark_ms column of " + l.o.Table, Provider: "pglease"}
	for {
		hd, err := l.claim(ctx, h, prefer, skip)
		if errors.Is(err, ErrAllTaken) && len(ahead.Refused) > 0 {
			ahead.Exhausted = true
			return nil, ahead
		}
		if err != nil {
			return nil, err
		}
		l.setCurrent(hd) // Hold stores a mark through StoreMark
		err = h.Hold(ctx, hd.machine, hd.validUntil.Load(), hd.prevMark)
		if err == nil {
			l.counters.Claims.Add(1)
			l.held(h, hd)
			l.o.Logger.Info("pglease: machine id held", "machine", hd.machine, "node", l.o.NodeName, "prevMark", hd.prevMark)
			return hd, nil
		}
		l.setCurrent(nil)
		l.release(h, hd) // the id is free again, its mark kept
		if !errors.Is(err, intf.ErrClockBehind) || ctx.Err() != nil {
			return nil, fmt.Errorf("machine %d: %w", hd.machine, err)
		}
		l.counters.MarkRefusals.Add(1)
		r, full := ahead.Refuse(hd.machine, hd.prevMark, h.Now(), err, skip)
		l.o.Logger.Warn("pglease: the mark of the machine id claimed is too far ahead; trying another id",
			"machine", hd.machine, "ahead", r.Ahead.Round(time.Millisecond), "err", err)
		if full {
			return nil, ahead
		}
		prefer = -1
	}
}

// held finishes a hold the service accepted: the fence extended to the
// latest renewal (Hold may have waited for the clock meanwhile), and the
// state saved for a restart.
func (l *Lease) held(h service.LeaseHolder, hd *hold) {
	hd.held.Store(true)
	h.Renewed(hd.validUntil.Load())
	_ = l.saveState(h, hd) // logged
}

func (l *Lease) setCurrent(hd *hold) {
	l.mu.Lock()
	l.cur = hd
	l.mu.Unlock()
}

func (l *Lease) holder() service.LeaseHolder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h
}

func (l *Lease) current() *hold {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// claimRange is the range the fleet claims from.
func (l *Lease) claimRange() Range {
	if l.o.MachineRange != nil {
		return *l.o.MachineRange
	}
	return leasekit.FullRange
}

// StoreMark stores ms as machine's time high-water mark, never below the
// mark found when the id was claimed, in a statement that changes the row
// only while it carries this hold's token: a node that lost the id can
// never lower its new holder's mark. No row changed is ErrNotHeld and
// makes the node give the id up and claim again.
//
// A store that cannot reach the database still succeeds when a mark of
// at least ms is known to be stored (by this hold, or by the run a
// resumed hold continues).
func (l *Lease) StoreMark(ctx context.Context, machine int64, ms int64) error {
	hd := l.current()
	if hd == nil || hd.machine != machine {
		return fmt.Errorf("storing the mark of machine %d: %w", machine, ErrNotHeld)
	}
	ms = max(ms, hd.prevMark)
	if hd.offline.Load() && ms <= hd.storedMark.Load() {
		return nil // covered; the database has not answered since the resume
	}
	sctx, cancel := l.timeout(ctx)
	defer cancel()
	tag, err := l.pool.Exec(sctx, l.sql.storeMark, l.o.Prefix, machine, hd.token, ms, l.o.NodeName)
	if err != nil {
		// Applied or not, the row now holds ms or the mark before: a
		// lower bound of it is the lower of the two.
		if ms <= hd.storedMark.Load() {
			hd.storedMark.Store(ms)
			l.o.Logger.Debug("pglease: cannot store a lower mark; the one stored covers it", "machine", machine, "err", err)
			return nil
		}
		return l.dbError(sctx, fmt.Sprintf("storing the mark of machine %d", machine), err)
	}
	if tag.RowsAffected() == 0 {
		hd.lose("its row carries another token: the id was taken over")
		return fmt.Errorf("storing the mark of machine %d: %w", machine, ErrNotHeld)
	}
	hd.storedMark.Store(ms)
	if hd.held.Load() {
		_ = l.saveState(l.holder(), hd) // logged
	}
	return nil
}
