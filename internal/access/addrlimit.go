package access

import (
	"net"
	"sync"
	"time"
)

// sweepEvery spaces the sweeps that forget the full buckets of addresses,
// so that the map holds only addresses seen lately.
const sweepEvery = 10 * time.Second

// addrLimiter holds one bucket per remote address.
type addrLimiter struct {
	rate  float64
	burst int64

	mu        sync.Mutex
	m         map[string]*bucket
	lastSweep time.Time
}

// get returns host's bucket, forgetting full ones every sweepEvery.
func (a *addrLimiter) get(host string, now time.Time) *bucket {
	a.mu.Lock()
	defer a.mu.Unlock()
	if now.Sub(a.lastSweep) >= sweepEvery {
		a.lastSweep = now
		for h, b := range a.m {
			if b.full(now) {
				delete(a.m, h)
			}
		}
	}
	b := a.m[host]
	if b == nil {
		b = newBucket(a.rate, a.burst, now)
		a.m[host] = b
	}
	return b
}

// size is the number of addresses held.
func (a *addrLimiter) size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}

// hostOf is the address without its port: the unit of the quota.
func hostOf(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}
