package rpcserver

import (
	"time"

	"github.com/vesta-go/vesta/internal/connlimit"
)

// Refusal reasons, as logged.
const (
	refusedPerIP = "too many connections from this address"
	refusedFull  = "too many connections"
)

// admit counts c in when the limits allow, evicting the longest-idle
// connection when the server is full; else it counts and logs the
// refusal. On true the caller serves c (s.served is added to).
func (s *Server) admit(c *conn) bool {
	s.mu.Lock()
	reason := ""
	var victim *conn
	switch {
	case s.closing:
		s.ctr.refused.Add(1)
		s.mu.Unlock()
		return false
	case c.ip.IsValid() && s.perIP[c.ip] >= s.opts.MaxConnsPerIP:
		reason = refusedPerIP
		s.ctr.refusedPerIP.Add(1)
	case s.live >= s.opts.MaxConns:
		// The share kept for newcomers: a connection waiting for a call
		// costs its client a redial at most, so it makes room; only when
		// every connection is reading a call is the newcomer refused.
		if victim = s.victimLocked(); victim == nil {
			reason = refusedFull
			s.ctr.refusedFull.Add(1)
		}
	}
	if reason != "" {
		s.ctr.refused.Add(1)
		logIt, unlogged := s.refusalLog.logIt(time.Now(), warnInterval)
		s.mu.Unlock()
		if logIt {
			s.log.Warn("vesta: connection refused: "+reason, "remote", c.RemoteAddr(),
				"maxConns", s.opts.MaxConns, "maxConnsPerIP", s.opts.MaxConnsPerIP,
				"refusedTotal", s.ctr.refused.Load(), "refusedSinceLastWarning", unlogged)
		}
		return false
	}
	closeVictim := false // decided once: a call starting meanwhile must not leave it neither stopped nor closed
	if victim != nil {
		s.releaseLocked(victim)
		if closeVictim = !victim.started.Load(); !closeVictim {
			victim.stop() // net/rpc answers the calls it read, then closes it
		}
		s.ctr.evicted.Add(1)
	}
	s.conns[c] = struct{}{}
	c.counted = true
	s.live++
	if c.ip.IsValid() {
		s.perIP[c.ip]++
	}
	s.ctr.accepted.Add(1)
	s.served.Add(1)
	s.mu.Unlock()
	if closeVictim {
		connlimit.CloseSocket(victim.Conn) // frees its descriptor now: under a flood, stopped ones would pile up
	}
	if victim != nil {
		s.log.Debug("vesta rpc: idle connection evicted for a newcomer", "remote", victim.RemoteAddr(),
			"newcomer", c.RemoteAddr())
	}
	return true
}

// victimLocked is the counted connection to evict for a newcomer, by
// connlimit's rule (the longest idle of the address holding the most
// connections), nil when none waits for a call. A linear scan: it runs
// only when the server is full, and keeps the per-call path free of
// shared state.
func (s *Server) victimLocked() *conn {
	var best *conn
	var bestSeq uint64
	bestHeld := 0
	for c := range s.conns {
		seq := c.idleSince.Load()
		if !c.counted || seq == 0 {
			continue
		}
		held := s.perIP[c.ip]
		if best == nil || connlimit.EvictBefore(held, seq, bestHeld, bestSeq) {
			best, bestSeq, bestHeld = c, seq, held
		}
	}
	return best
}

// releaseLocked stops counting c against the limits; an evicted
// connection is released at once, before it has finished closing.
func (s *Server) releaseLocked(c *conn) {
	if !c.counted {
		return
	}
	c.counted = false
	s.live--
	if c.ip.IsValid() {
		if s.perIP[c.ip]--; s.perIP[c.ip] == 0 {
			delete(s.perIP, c.ip)
		}
	}
}
