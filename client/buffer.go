package client

import (
	"errors"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// buffer is a stock of IDs for GenId. Only refillLoop puts IDs in, and
// never more than the free room.
type buffer struct {
	ids  chan intf.Id
	low  int           // refill below this: half the size
	kick chan struct{} // asks refillLoop for a refill
}

func newBuffer(size int) *buffer {
	b := &buffer{ids: make(chan intf.Id, size), low: (size + 1) / 2, kick: make(chan struct{}, 1)}
	b.signal() // fill at start
	return b
}

// take returns a buffered ID, asking for a refill when the stock is low.
func (b *buffer) take() (intf.Id, bool) {
	select {
	case id := <-b.ids:
		if len(b.ids) < b.low {
			b.signal()
		}
		return id, true
	default:
		b.signal()
		return 0, false
	}
}

func (b *buffer) signal() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// Buffered is the number of IDs in the stock (always 0 without
// WithBuffer), for monitoring.
func (c *Client) Buffered() int {
	if c.buf == nil {
		return 0
	}
	return len(c.buf.ids)
}

// refillLoop tops the buffer up whenever asked, in GenIds calls of at most
// bufferRefill IDs (less when a server says its maxBatch is lower). After
// a failure it waits (the back-off minimum, doubling) before the next try.
func (c *Client) refillLoop() {
	defer c.wg.Done()
	b := c.buf
	refill := c.opts.bufferRefill
	wait := time.Duration(0)
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-b.kick:
		}
		for room := cap(b.ids) - len(b.ids); room > 0 && c.ctx.Err() == nil; room = cap(b.ids) - len(b.ids) {
			ids, err := c.GenIds(c.ctx, min(room, refill))
			if err != nil && c.ctx.Err() != nil {
				return // Close: not a failure worth a word
			}
			if err != nil {
				if limit := batchCap(err); limit > 0 && limit < refill {
					c.opts.logger.Warn("vesta client: buffer refill above the server's maxBatch; refilling in smaller batches",
						"refill", refill, "maxBatch", limit)
					refill = limit
					continue
				}
				wait = min(max(2*wait, c.opts.backoffMin), c.opts.backoffMax)
				level := slog.LevelWarn
				if errors.Is(err, intf.ErrUnavailable) {
					level = slog.LevelDebug // already logged as a fail-over
				}
				c.opts.logger.Log(c.ctx, level, "vesta client: buffer refill failed", "err", err, "retryIn", wait)
				if ctxtime.Sleep(c.ctx, wait) != nil {
					return
				}
				continue
			}
			wait = 0
			for _, id := range ids { // len(ids) <= room: rpcapi checks the count
				select {
				case b.ids <- id:
				case <-c.ctx.Done():
					return
				}
			}
		}
	}
}

// batchCap is the server's maxBatch when err refuses a GenIds count as out
// of range, else 0.
func batchCap(err error) int {
	var fe *intf.FieldError
	if errors.As(err, &fe) && fe.Field == "count" {
		return int(fe.Max)
	}
	return 0
}
