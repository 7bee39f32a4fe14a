package client

import (
	"context"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
)

var _ intf.SegmentNumberer = (*Client)(nil)

// NextNumber returns the next number of the period tag tag, formatted by
// the server (the server's SegmentNextNumber): {Text:
// "ORD20261127000123", Period: "20261127", Seq: 123}. It fails over
// between the servers as NextIds does; a number is never served from
// ranges the client holds (WithSegmentRanges does not apply). A period
// whose numbers are used up is an answer, returned as is: an error
// matching intf.ErrPeriodExhausted, with its *intf.PeriodExhaustedError.
func (c *Client) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	return call(c, ctx, segmentVerdict, func(ctx context.Context, cn *rpcapi.Conn) (intf.SegmentNumber, error) {
		return cn.NextNumber(ctx, tag)
	})
}
