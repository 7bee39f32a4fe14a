package intf

import (
	"context"
	"time"
)

// IdService issues and explains IDs. Every mode implements it: the embedded
// service in package service, and the clients of the RPC server and plugin.
// Implementations are safe for concurrent use.
type IdService interface {
	// GenId issues one new ID.
	GenId(ctx context.Context) (Id, error)
	// GenIds issues n new IDs, 1 <= n <= MaxBatch, in increasing order.
	GenIds(ctx context.Context, n int) ([]Id, error)
	// ExpId splits an ID into its fields, decoding it by its own type bit.
	ExpId(ctx context.Context, id Id) (IdFields, error)
	// MakeId packs fields into an ID. Every field is range-checked: a value
	// that does not fit is an error naming the field, never masked.
	MakeId(ctx context.Context, req MakeIdRequest) (Id, error)
	// TransTime turns the time field of an ID of type t into a time.
	TransTime(ctx context.Context, timeField int64, t IdType) (time.Time, error)
}
