package pglease

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vesta-go/vesta/internal/ctxtime"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/leasekit"
)

// hold is one claim: a machine id and the token its row carries.
type hold struct {
	machine  int64
	token    int64
	prevMark int64 // the earlier holders' mark: the floor of every mark stored
	// validUntil is when the claim is surely still ours, in service clock
	// nanoseconds; the renewer raises it.
	validUntil atomic.Int64
	// storedMark is a mark known to be stored in the row (see StoreMark).
	storedMark atomic.Int64
	// offline: resumed without reaching the database; no renewal has
	// succeeded since.
	offline atomic.Bool
	// held: the service holds machine (Hold returned); its state is saved.
	held atomic.Bool

	lost     chan struct{} // closed once the id is known taken over
	loseOnce sync.Once
	reason   string // why it was lost; read after lost is closed

	stateMu  sync.Mutex // orders saveState calls
	released bool       // the id was given up (under stateMu)

	stopRenew context.CancelFunc
	renewDone chan struct{}
}

func newHold(machine, token, prevMark int64) *hold {
	return &hold{machine: machine, token: token, prevMark: prevMark, lost: make(chan struct{}), renewDone: make(chan struct{})}
}

func (hd *hold) lose(why string) {
	hd.loseOnce.Do(func() {
		hd.reason = why
		close(hd.lost)
	})
}

// newToken is a random positive fencing token: every claim writes a new
// one, so a holder whose id was taken over (even after its row was
// deleted and inserted again) never matches the row.
func newToken() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return int64(binary.BigEndian.Uint64(b[:])>>1) | 1
}

// maxClaims bounds the statements of one claim: each failed one lists
// the ids live at that moment, so only ids taken by others at the same
// time make the next fail again.
const maxClaims = 64

// claim takes a free id of the range with a new token, and starts
// renewing it: prefer first when it may be free, else a random id the
// latest listing shows free (never one in skip).
func (l *Lease) claim(ctx context.Context, h service.LeaseHolder, prefer int64, skip map[int64]bool) (*hold, error) {
	r := l.claimRange()
	var taken map[int64]bool // nil until a statement lists the ids held
	for range maxClaims {
		id, ok := leasekit.Pick(r, prefer, skip, taken, l.o.lowestFirst)
		if !ok {
			if taken == nil {
				return nil, fmt.Errorf("pglease: every free machine id of %s was refused for its mark: %w", r, ErrAllTaken)
			}
			return nil, fmt.Errorf("pglease: all %d machine ids of %s of fleet %s in %s are held by live nodes: %w", r.Size(), r, l.o.Prefix, l.o.Table, ErrAllTaken)
		}
		prefer = -1
		token := newToken()
		t0 := h.Now()
		cctx, cancel := l.timeout(ctx)
		var mark *int64
		var live []int32
		l.counters.ClaimTxns.Add(1)
		err := l.pool.QueryRow(cctx, l.sql.claim, l.o.Prefix, id, l.o.NodeName, token, l.o.TTL.Milliseconds()).Scan(&mark, &live)
		cancel()
		if err != nil {
			return nil, l.dbError(cctx, fmt.Sprintf("claiming machine %d", id), err)
		}
		if mark != nil {
			hd := newHold(id, token, *mark)
			hd.storedMark.Store(*mark)
			hd.validUntil.Store(t0 + int64(leasekit.Validity(l.o.TTL)))
			l.startRenewing(ctx, h, hd)
			return hd, nil
		}
		taken = map[int64]bool{id: true}
		for _, m := range live {
			taken[int64(m)] = true
		}
	}
	return nil, fmt.Errorf("pglease: %d claims in a row lost the race for a free id of %s: %w", maxClaims, r, ErrAllTaken)
}

// renewRow extends hd's claim to now() + TTL if its row still carries
// hd's token, returning the row's mark. ok false: the id was taken over.
func (l *Lease) renewRow(ctx context.Context, hd *hold) (mark int64, ok bool, err error) {
	rctx, cancel := l.timeout(ctx)
	defer cancel()
	err = l.pool.QueryRow(rctx, l.sql.renew, l.o.Prefix, hd.machine, hd.token, l.o.TTL.Milliseconds(), l.o.NodeName).Scan(&mark)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, l.dbError(rctx, fmt.Sprintf("renewing machine %d", hd.machine), err)
	}
	return mark, true, nil
}

// startRenewing keeps hd's claim alive in the background until release.
func (l *Lease) startRenewing(ctx context.Context, h service.LeaseHolder, hd *hold) {
	rctx, stop := context.WithCancel(ctx)
	hd.stopRenew = stop
	go l.renew(rctx, h, hd)
}

// renew renews hd every RenewInterval (every RetryInterval while failing);
// each success extends the fence to t0 + Validity(TTL), t0 being the
// service clock read before the statement was sent: the database cannot
// let the claim lapse before its own now() + TTL, and its now() is later
// than t0. A renewal that fails leaves the fence to take effect by
// itself; a row found with another token closes hd.lost.
func (l *Lease) renew(ctx context.Context, h service.LeaseHolder, hd *hold) {
	defer close(hd.renewDone)
	interval := leasekit.RenewInterval(l.o.TTL)
	wait := interval
	if hd.offline.Load() {
		wait = leasekit.RetryInterval
	}
	rl := leasekit.RenewLog{Log: l.o.Logger, Provider: "pglease"}
	for {
		if ctxtime.Sleep(ctx, wait) != nil {
			return
		}
		t0 := h.Now()
		_, ok, err := l.renewRow(ctx, hd)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && !ok:
			hd.lose("its row carries another token: the id was taken over")
			return
		case err != nil:
			rl.Failed(h.Now(), hd.validUntil.Load(), hd.machine, err)
			wait = leasekit.RetryInterval
			continue
		}
		v := t0 + int64(leasekit.Validity(l.o.TTL))
		hd.validUntil.Store(max(v, hd.validUntil.Load()))
		hd.offline.Store(false)
		h.Renewed(v)
		rl.Renewed(h.Now(), hd.machine)
		wait = interval
		if hd.held.Load() {
			_ = l.saveState(h, hd) // logged
		}
	}
}

// release stops renewing and gives the id up (expires_at = -infinity,
// the mark kept). A held id is first saved as released, so that no
// restart can resume it; when that cannot be saved, the claim is left to
// lapse instead.
func (l *Lease) release(h service.LeaseHolder, hd *hold) {
	l.setCurrent(nil)
	hd.stopRenew()
	<-hd.renewDone
	if hd.held.Load() {
		hd.stateMu.Lock()
		hd.released = true
		hd.stateMu.Unlock()
		if err := l.saveState(h, hd); err != nil {
			l.o.Logger.Warn("pglease: not releasing the machine id, as its release cannot be recorded in the data dir; it is free once its claim lapses",
				"machine", hd.machine, "ttl", l.o.TTL, "err", err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.o.DialTimeout)
	defer cancel()
	if _, err := l.pool.Exec(ctx, l.sql.release, l.o.Prefix, hd.machine, hd.token); err != nil {
		l.o.Logger.Warn("pglease: cannot release the machine id; it is free once its claim lapses",
			"machine", hd.machine, "ttl", l.o.TTL, "err", l.dbError(ctx, "releasing", err))
	}
}

// checkClock compares this node's clock with the database server's and
// refuses, with a *ClockSkewError, a skew larger than MaxClockSkew. The
// server's reading lies between the two readings of ours around the
// statement; only the distance outside them counts.
func (l *Lease) checkClock(ctx context.Context, h service.LeaseHolder) error {
	cctx, cancel := l.timeout(ctx)
	defer cancel()
	var dbMs int64
	sent := h.Now()
	if err := l.pool.QueryRow(cctx, l.sql.clock).Scan(&dbMs); err != nil {
		return l.dbError(cctx, "reading the server's clock", err)
	}
	got := h.Now()
	db := dbMs * int64(time.Millisecond)
	var skew time.Duration
	switch {
	case got < db:
		skew = time.Duration(got - db)
	case sent > db+int64(time.Millisecond): // the server reads whole ms
		skew = time.Duration(sent - db - int64(time.Millisecond))
	}
	if skew.Abs() > l.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Bound: l.o.MaxClockSkew}
	}
	return nil
}
