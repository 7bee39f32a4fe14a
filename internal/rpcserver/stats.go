package rpcserver

import (
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
)

// Stats are the server's connection counters, totals since New except
// Open.
type Stats struct {
	Open uint64 // connections served now
	// Idle counts the open connections waiting for a call: the ones a
	// newcomer may evict.
	Idle     uint64
	Accepted uint64
	// Refused counts every connection closed at accept: over MaxConnsPerIP,
	// over MaxConns with none to evict, or while shutting down.
	Refused      uint64
	RefusedPerIP uint64
	RefusedFull  uint64
	// Evicted counts idle connections closed to make room for a newcomer.
	Evicted uint64
	// The connections closed by a deadline, by kind.
	FirstByteTimeouts, IdleTimeouts, MessageTimeouts, WriteTimeouts uint64
	// TooBig counts connections closed for a message over MaxMessageBytes.
	TooBig uint64
	// BadTypes counts connections closed for the gob types they sent:
	// definitions over MaxTypeDefs or MaxTypeDefBytes, a malformed one, or
	// the interface type.
	BadTypes uint64
	// TLS are the handshake counters with Options.TLS (zero without).
	TLS tlsserve.Stats
}

// counters are the Stats updated outside Server.mu.
type counters struct {
	accepted, refused, refusedPerIP, refusedFull, evicted           atomic.Uint64
	firstByteTimeouts, idleTimeouts, messageTimeouts, writeTimeouts atomic.Uint64
	tooBig, badTypes                                                atomic.Uint64
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	open, idle := uint64(len(s.conns)), uint64(0)
	for c := range s.conns {
		if c.counted && c.idleSince.Load() != 0 {
			idle++
		}
	}
	s.mu.Unlock()
	c := &s.ctr
	return Stats{
		Open: open, Idle: idle, Accepted: c.accepted.Load(), Refused: c.refused.Load(),
		RefusedPerIP: c.refusedPerIP.Load(), RefusedFull: c.refusedFull.Load(), Evicted: c.evicted.Load(),
		FirstByteTimeouts: c.firstByteTimeouts.Load(), IdleTimeouts: c.idleTimeouts.Load(),
		MessageTimeouts: c.messageTimeouts.Load(), WriteTimeouts: c.writeTimeouts.Load(),
		TooBig: c.tooBig.Load(), BadTypes: c.badTypes.Load(), TLS: s.tlsStats(),
	}
}

func (s *Server) tlsStats() tlsserve.Stats {
	if l := s.tls.Load(); l != nil {
		return l.Stats()
	}
	return tlsserve.Stats{}
}

// rateLimit keeps a flood from becoming a log flood: one warning per
// interval at most, telling how many went unlogged. Guarded by Server.mu.
type rateLimit struct {
	last     time.Time
	unlogged uint64
}

// logIt says whether to log now, and how many were not logged since the
// last time.
func (r *rateLimit) logIt(now time.Time, interval time.Duration) (bool, uint64) {
	if now.Sub(r.last) < interval {
		r.unlogged++
		return false, 0
	}
	n := r.unlogged
	r.last, r.unlogged = now, 0
	return true, n
}
