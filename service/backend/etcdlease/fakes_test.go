package etcdlease_test

import (
	"context"
	"sync"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/service"
)

// offsetClock is the system clock shifted by off.
type offsetClock = leasetest.OffsetClock

// gatedLease wraps a MachineLease so that, once its holder is told the id
// is lost, claiming one again waits until the test opens the gate.
type gatedLease struct {
	service.MachineLease
	gate chan struct{}
	lost chan struct{} // closed at the first Lost
	once sync.Once
}

func newGatedLease(l service.MachineLease) *gatedLease {
	return &gatedLease{MachineLease: l, gate: make(chan struct{}), lost: make(chan struct{})}
}

func (g *gatedLease) Run(ctx context.Context, h service.LeaseHolder) error {
	return g.MachineLease.Run(ctx, gatedHolder{h, g, ctx})
}

type gatedHolder struct {
	service.LeaseHolder
	g   *gatedLease
	ctx context.Context
}

func (h gatedHolder) Lost() {
	h.LeaseHolder.Lost()
	h.g.once.Do(func() { close(h.g.lost) })
	select {
	case <-h.g.gate:
	case <-h.ctx.Done():
	}
}
