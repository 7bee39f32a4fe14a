package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/vesta-go/vesta/internal/rpcapi"
)

// Health of a server, as calls and probes see it.
//
// An outage is counted once, however many calls it fails at the same time:
// every attempt notes the endpoint's generation (gen) when it starts, and a
// failure counts only if nothing (another failure, a recovery) changed the
// endpoint since. A counted failure marks the endpoint down for a back-off
// in the manner of gRPC's connection back-off: backoffMin, times
// backoffGrowth for each further failure in a row, at most backoffMax,
// ±20% jitter; a success resets it. The back-off spaces the background
// probes of a down server; calls use a down server only when no server
// that is up could serve them, and a success of such a call or of a probe
// brings it back at once.

const (
	backoffGrowth = 1.6
	backoffJitter = 0.2
	// fairTime is the time a call must have given a server before its
	// timeout counts against the server (less when the call timeout is
	// less): a caller's own short deadline says nothing about the server.
	fairTime = 100 * time.Millisecond
	// slowLimit is how many fair timeouts in a row mark down a server
	// that still sends something (a silent one goes down at the first).
	slowLimit = 3
)

// probeDue says whether a down e's back-off has passed, so that the
// health check probes it. Calls do not retry a down server while another
// is up: each retry of a hung server would cost a caller a call timeout.
func (e *endpoint) probeDue(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !now.Before(e.retryAt)
}

// failed records that an attempt begun at generation gen failed with err.
// counted is false for an attempt on a server known down (a call's last
// resort: only its last error changes; probes count) and
// for one the endpoint's state overtook (the same outage, counted by
// another attempt). marked says the failure was counted; wasUp that e was
// up before.
func (e *endpoint) failed(err error, gen uint64, counted bool) (backoff time.Duration, marked, wasUp bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if !e.down.Load() && gen != e.gen.Load() {
		return 0, false, false // stale: e recovered after this attempt began
	}
	e.lastErr, e.lastErrAt = err, now
	if !counted || gen != e.gen.Load() {
		return 0, false, false
	}
	e.gen.Add(1)
	wasUp = !e.down.Load()
	if wasUp {
		e.failures, e.downSince = 0, now
	}
	e.failures++
	b := float64(e.opts.backoffMin)
	for i := 1; i < e.failures && b < float64(e.opts.backoffMax); i++ {
		b *= backoffGrowth
	}
	b = min(b, float64(e.opts.backoffMax))
	backoff = time.Duration(b * (1 - backoffJitter + 2*backoffJitter*rand.Float64()))
	e.retryAt = now.Add(backoff)
	e.slow.Store(0)
	e.down.Store(true)
	return backoff, true, wasUp
}

// succeeded records a success of an attempt begun at gen; it returns
// whether it brought e back up. A success the endpoint's state overtook
// (e was marked down after the attempt began) does not: the probe decides.
func (e *endpoint) succeeded(gen uint64) bool {
	if e.slow.Load() != 0 {
		e.slow.Store(0)
	}
	if !e.down.Load() {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if gen != e.gen.Load() || !e.down.Load() {
		return false
	}
	e.gen.Add(1)
	e.failures, e.lastErr = 0, nil
	e.down.Store(false)
	return true
}

// slowTimeout counts a fair timeout of a server that still sends
// something; it says when slowLimit of them came in a row.
func (e *endpoint) slowTimeout() bool {
	return e.slow.Add(1) >= slowLimit
}

// markDown counts a failure of ep (see failed) and logs a new outage.
// suspect says ep's connections are no good (no answer came on them):
// they are closed, which also frees the calls pending on them.
func (c *Client) markDown(ep *endpoint, err error, gen uint64, counted, suspect bool) {
	backoff, marked, wasUp := ep.failed(err, gen, counted)
	if !marked {
		return
	}
	if suspect {
		ep.dropAll()
	}
	if wasUp {
		c.opts.logger.Warn("vesta client: server down; failing over", "addr", ep.addr, "err", err, "retryIn", backoff)
	} else {
		c.opts.logger.Debug("vesta client: server still down", "addr", ep.addr, "err", err, "retryIn", backoff)
	}
}

func (c *Client) succeeded(ep *endpoint, gen uint64) {
	if ep.succeeded(gen) {
		c.opts.logger.Info("vesta client: server back", "addr", ep.addr)
	}
}

// healthLoop probes the down servers whose back-off has passed, each on
// its own goroutine (a probe of a hung server takes the whole probe
// timeout), so that calls find them up again without paying for it.
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
		now := time.Now()
		for _, ep := range c.eps {
			if ep.down.Load() && ep.probeDue(now) && !ep.probing.Swap(true) {
				c.wg.Add(1) // Close waits for probes too; its ctx ends them
				go c.probe(ep)
			}
		}
	}
}

// probe asks ep for one ID: a server that answers but cannot issue
// (fenced, clock behind its mark, closing) must stay down with its
// back-off growing, so the probe is the call that fails then. The probe's
// ID is thrown away: a gap, never a duplicate. A probe that succeeds
// resets the back-off, and its connection stays in the pool.
func (c *Client) probe(ep *endpoint) {
	defer c.wg.Done()
	defer ep.probing.Store(false)
	ctx, cancel := context.WithTimeout(c.ctx, c.probeTimeout())
	defer cancel()
	gen := ep.gen.Load()
	start := time.Now()
	_, _, _, err := callOn(ctx, ep, genId)
	switch {
	case c.ctx.Err() != nil:
	case err == nil, refusedAccess(err):
		// A refusal of the probe's token, scope or quota is an answer:
		// the server is up.
		c.succeeded(ep, gen)
	case ctx.Err() != nil:
		c.markDown(ep, fmt.Errorf("health probe: no answer in %v", time.Since(start).Round(time.Millisecond)), gen, true, true)
	default:
		c.markDown(ep, err, gen, true, isTransport(err))
	}
}

// probeTimeout is the call timeout, or its default when calls have none.
func (c *Client) probeTimeout() time.Duration {
	if c.opts.callTimeout > 0 {
		return c.opts.callTimeout
	}
	return defaultCallTimeout
}

// refusedAccess says whether err is a server's refusal of the caller's
// token, scope or quota.
func refusedAccess(err error) bool {
	switch codeOf(err) {
	case rpcapi.CodeUnauthenticated, rpcapi.CodePermissionDenied, rpcapi.CodeRateLimited:
		return true
	}
	return false
}
