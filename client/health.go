package client

import (
	"context"
	"time"
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

// probe asks ep for one ID: a server that answers but cannot issue
// (fenced, clock behind its mark, closing) must stay down with its
// back-off growing, so the probe is the call that fails then. The probe's
// ID is thrown away: a gap, never a duplicate.
func (c *Client) probe(ep *endpoint) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.dialTimeout)
	defer cancel()
	_, err := callOn(ctx, ep, genId)
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
