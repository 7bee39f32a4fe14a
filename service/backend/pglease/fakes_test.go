package pglease_test

import (
	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/service/backend/pglease"
)

// offsetClock is the system clock shifted by off.
type offsetClock = leasetest.OffsetClock

// withoutLowestFirst undoes newLease's predictable claims.
func withoutLowestFirst(o pglease.Options) pglease.Options {
	return pglease.Options{DSN: o.DSN, Common: pglease.Common{TTL: o.TTL, NodeName: o.NodeName, Logger: o.Logger, MachineRange: o.MachineRange, Prefix: o.Prefix}}
}
