package nettest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// FloodStats says what a Flood did: connections opened and connections the
// server closed (refused at accept, or evicted).
type FloodStats struct {
	Dials, Closed, DialErrors int64
}

// A Flood holds perIP idle connections to an address from each of ips
// loopback addresses (127.0.1.1, 127.0.1.2, ...), never sending a byte, and
// opens a new one whenever the server closes one, until Stop: the
// descriptor flood of a hostile network. Stats reads its counts while it
// runs, so that a test waits for the flood to reach what it needs rather
// than for a length of time.
type Flood struct {
	dials, closed, dialErrs atomic.Int64
	stop                    context.CancelFunc
	wg                      sync.WaitGroup
}

// StartFlood starts a Flood on addr; the test's Stop ends it.
func StartFlood(addr string, ips, perIP int) *Flood {
	ctx, stop := context.WithCancel(context.Background())
	f := &Flood{stop: stop}
	for i := range ips {
		from := &net.TCPAddr{IP: net.IPv4(127, 0, 1+byte(i/250), 1+byte(i%250))}
		for range perIP {
			f.wg.Go(func() { f.hold(ctx, from, addr) })
		}
	}
	return f
}

// hold keeps one connection open from from to addr until ctx ends.
func (f *Flood) hold(ctx context.Context, from *net.TCPAddr, addr string) {
	d := net.Dialer{LocalAddr: from, Timeout: time.Second}
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			f.dialErrs.Add(1)
			sleep(ctx, 10*time.Millisecond)
			continue
		}
		f.dials.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		_, _ = c.Read(make([]byte, 1)) // the server closes it, or ctx ends
		stop()
		c.Close()
		if ctx.Err() == nil {
			f.closed.Add(1)
			sleep(ctx, 50*time.Millisecond)
		}
	}
}

// Stats is what the flood has done so far.
func (f *Flood) Stats() FloodStats {
	return FloodStats{Dials: f.dials.Load(), Closed: f.closed.Load(), DialErrors: f.dialErrs.Load()}
}

// Stop ends the flood, closes every connection and returns what it did.
func (f *Flood) Stop() FloodStats {
	f.stop()
	f.wg.Wait()
	return f.Stats()
}

func (s FloodStats) String() string {
	return fmt.Sprintf("%d connections opened, %d closed by the server, %d dials failed", s.Dials, s.Closed, s.DialErrors)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
