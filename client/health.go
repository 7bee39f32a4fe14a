package client

import (
	"context"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcapi"
)

// healthLoop re-checks the down servers whose back-off has passed, so that
// calls find them up again without paying for the attempt.
func (c *Client) healthLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.opts.healthInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		for _, ep := range c.eps {
			if ep.down.Load() && ep.usable(time.Now) {
				c.probe(ep)
			}
		}
	}
}

// probe makes one cheap call (ExpId) to ep.
func (c *Client) probe(ep *endpoint) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.dialTimeout)
	defer cancel()
	_, err := callOn(ctx, ep, func(ctx context.Context, cn *rpcapi.Conn) (intf.Id, error) { return cn.ExpId(ctx, 0) })
	switch {
	case c.ctx.Err() != nil:
	case err == nil:
		if ep.recovered() {
			c.opts.logger.Info("vesta client: server back", "addr", ep.addr)
		}
	default:
		c.markDown(ep, err)
	}
}
