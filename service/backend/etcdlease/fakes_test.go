package etcdlease_test

import (
	"context"
	"sync"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/service/machineid"
)

// offsetClock is the system clock shifted by off.
type offsetClock = leasetest.OffsetClock

// gatedLease wraps a machineid.Lease so that, once its holder is told the id
// is lost, claiming one again waits until the test opens the gate.
type gatedLease struct {
	machineid.Lease
	gate chan struct{}
	lost chan struct{} // closed at the first Lost
	once sync.Once
}

func newGatedLease(l machineid.Lease) *gatedLease {
	return &gatedLease{Lease: l, gate: make(chan struct{}), lost: make(chan struct{})}
}

func (g *gatedLease) Run(ctx context.Context, h machineid.Holder) error {
	return g.Lease.Run(ctx, gatedHolder{h, g, ctx})
}

type gatedHolder struct {
	machineid.Holder
	g   *gatedLease
	ctx context.Context
}

func (h gatedHolder) Lost() {
	h.Holder.Lost()
	h.g.once.Do(func() { close(h.g.lost) })
	select {
	case <-h.g.gate:
	case <-h.ctx.Done():
	}
}
