package pglease

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/internal/leasekit"
	"github.com/vesta-go/vesta/service/internal/pgrepl"
)

// backend is the Lease as the engine's leasekit.Backend: a claim is a row
// of the table carrying a fencing token.
type backend Lease

func (b *backend) l() *Lease { return (*Lease)(b) }

func (b *backend) Open(ctx context.Context, now func() int64) error {
	if b.now, b.pool = now, b.given; b.pool != nil {
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, b.cfg) // connects lazily
	b.pool = pool
	return b.l().dbError(ctx, "connecting", err)
}

func (b *backend) Close() {
	if b.given == nil && b.pool != nil {
		b.pool.Close()
	}
}

// CheckClock checks the server's replication (a pool given by the caller
// has no check at connect), then compares this node's clock with the
// server's: its reading lies between ours around the statement, and only
// the distance outside them counts.
func (b *backend) CheckClock(ctx context.Context) error {
	if err := b.l().ensureTable(ctx); err != nil {
		return err
	}
	cctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	var dbMs, sent int64
	err := b.pool.AcquireFunc(cctx, func(c *pgxpool.Conn) error {
		if err := b.repl.Check(cctx, c.Conn()); err != nil {
			return err
		}
		sent = b.now()
		return c.QueryRow(cctx, b.sql.clock).Scan(&dbMs)
	})
	if re := new(pgrepl.Error); errors.As(err, &re) {
		return re
	} else if err != nil {
		return b.l().dbError(cctx, "reading the server's clock", err)
	}
	var skew time.Duration
	switch got, db := b.now(), dbMs*int64(time.Millisecond); {
	case got < db:
		skew = time.Duration(got - db)
	case sent > db+int64(time.Millisecond): // the server reads whole ms
		skew = time.Duration(sent - db - int64(time.Millisecond))
	}
	if skew.Abs() > b.o.MaxClockSkew {
		return &ClockSkewError{Skew: skew, Bound: b.o.MaxClockSkew, Provider: "pglease", Against: "the PostgreSQL server's"}
	}
	return nil
}

// NewToken draws a random positive fencing token: every claim writes a
// new one, so a holder whose id was taken over (even after its row was
// deleted and inserted again) never matches the row.
func (b *backend) NewToken(ctx context.Context) (int64, time.Duration, error) {
	var r [8]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return int64(binary.BigEndian.Uint64(r[:])>>1) | 1, b.o.TTL, b.l().ensureTable(ctx)
}

// TryClaim takes id with token when free or lapsed, in one statement that
// otherwise lists the live ids. A claim row with no mark left is a lost
// mark (deleted by hand, a restored backup).
func (b *backend) TryClaim(ctx context.Context, token, id int64) (leasekit.Claimed, error) {
	cctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	var existed *bool
	var rowMark, marksMark *int64
	var live []int32
	err := b.pool.QueryRow(cctx, b.sql.claim, b.o.Prefix, id, b.o.NodeName, token, b.o.TTL.Milliseconds()).Scan(&existed, &rowMark, &marksMark, &live)
	if err != nil {
		return leasekit.Claimed{}, b.l().dbError(cctx, fmt.Sprintf("claiming machine %d", id), err)
	}
	if existed == nil {
		c := leasekit.Claimed{Taken: map[int64]bool{id: true}}
		for _, m := range live {
			c.Taken[int64(m)] = true
		}
		return c, nil
	}
	c := leasekit.Claimed{OK: true, Mark: *rowMark, MarkLost: *existed && marksMark == nil && *rowMark == 0}
	if marksMark != nil {
		c.Mark = max(c.Mark, *marksMark)
	}
	return c, nil
}

// Renew extends the claim to now() + TTL while its row carries the token.
func (b *backend) Renew(ctx context.Context, c leasekit.Claim) (time.Duration, error) {
	return b.o.TTL, b.exec(ctx, "renewing", b.sql.renew, c, b.o.TTL.Milliseconds(), b.o.NodeName)
}

func (b *backend) Held(ctx context.Context, c leasekit.Claim) (mark int64, err error) {
	hctx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	if err = b.pool.QueryRow(hctx, b.sql.held, b.o.Prefix, c.Machine, c.Token).Scan(&mark); errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("the row of machine %d is gone or carries another token: %w", c.Machine, ErrNotHeld)
	}
	return mark, b.l().dbError(hctx, fmt.Sprintf("checking machine %d", c.Machine), err)
}

func (b *backend) StoreMark(ctx context.Context, c leasekit.Claim, ms int64) error {
	return b.exec(ctx, "storing the mark of", b.sql.storeMark, c, ms, b.o.NodeName)
}

// Release lets the claim lapse at once (expires_at = -infinity).
func (b *backend) Release(ctx context.Context, c leasekit.Claim) error {
	_, err := b.pool.Exec(ctx, b.sql.release, b.o.Prefix, c.Machine, c.Token)
	return b.l().dbError(ctx, "releasing", err)
}

// exec runs a write of c's holder, naming c's token: no row changed means
// the id is no longer c's.
func (b *backend) exec(ctx context.Context, doing, sql string, c leasekit.Claim, args ...any) error {
	ectx, cancel := leasekit.Timeout(ctx, b.o.DialTimeout)
	defer cancel()
	tag, err := b.pool.Exec(ectx, sql, append([]any{b.o.Prefix, c.Machine, c.Token}, args...)...)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("the row of machine %d is gone or carries another token: the id was taken over: %w", c.Machine, ErrNotHeld)
	}
	return b.l().dbError(ectx, fmt.Sprintf("%s machine %d", doing, c.Machine), err)
}
