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

// Flood holds perIP idle connections to addr from each of ips loopback
// addresses (127.0.1.1, 127.0.1.2, ...), never sending a byte, and opens a
// new one whenever the server closes one, until ctx ends: the descriptor
// flood of a hostile network. It returns once ctx has ended and every
// connection is closed.
func Flood(ctx context.Context, addr string, ips, perIP int) FloodStats {
	var dials, closed, dialErrs atomic.Int64
	var wg sync.WaitGroup
	for i := range ips {
		from := &net.TCPAddr{IP: net.IPv4(127, 0, 1+byte(i/250), 1+byte(i%250))}
		for range perIP {
			wg.Go(func() {
				d := net.Dialer{LocalAddr: from, Timeout: time.Second}
				for ctx.Err() == nil {
					c, err := d.DialContext(ctx, "tcp", addr)
					if err != nil {
						dialErrs.Add(1)
						sleep(ctx, 10*time.Millisecond)
						continue
					}
					dials.Add(1)
					stop := context.AfterFunc(ctx, func() { c.Close() })
					_, _ = c.Read(make([]byte, 1)) // the server closes it, or ctx ends
					stop()
					c.Close()
					if ctx.Err() == nil {
						closed.Add(1)
						sleep(ctx, 50*time.Millisecond)
					}
				}
			})
		}
	}
	wg.Wait()
	return FloodStats{Dials: dials.Load(), Closed: closed.Load(), DialErrors: dialErrs.Load()}
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
