package pglease_test

import (
	"context"
	"time"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/pglease"
)

// offsetClock is the system clock shifted by off.
type offsetClock struct {
	base *service.SystemClock
	off  time.Duration
}

func (c offsetClock) NowNanos() int64 { return c.base.NowNanos() + int64(c.off) }

func (c offsetClock) WaitUntil(ctx context.Context, t int64) error {
	return c.base.WaitUntil(ctx, t-int64(c.off))
}

// withoutLowestFirst undoes newLease's predictable claims.
func withoutLowestFirst(o pglease.Options) pglease.Options {
	return pglease.Options{DSN: o.DSN, TTL: o.TTL, NodeName: o.NodeName, Logger: o.Logger, MachineRange: o.MachineRange, Prefix: o.Prefix}
}
