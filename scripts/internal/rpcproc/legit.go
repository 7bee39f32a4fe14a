package rpcproc

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/vesta-go/vesta/client"
)

// Stats are a client's GenId latencies over a time.
type Stats struct {
	Lat    []time.Duration // of the calls that succeeded
	Errors int
	First  error // the first error, if any
}

// Percentiles sorts s.Lat and returns its 50th and 99th percentiles and
// its maximum rounded to round, each "n/a" when no call succeeded.
func (s Stats) Percentiles(round time.Duration) (p50, p99, maximum string) {
	slices.Sort(s.Lat)
	q := func(p float64) string {
		if len(s.Lat) == 0 {
			return "n/a"
		}
		return s.Lat[min(len(s.Lat)-1, int(p*float64(len(s.Lat))))].Round(round).String()
	}
	return q(0.5), q(0.99), q(1)
}

// Legit calls GenId from callers goroutines of one client.New client of
// addr for d, each call with a 5 s timeout.
func Legit(addr string, callers int, d time.Duration) Stats {
	c, err := client.New([]string{addr})
	if err != nil {
		return Stats{Errors: 1, First: err}
	}
	defer c.Close()
	var mu sync.Mutex
	var all Stats
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range callers {
		wg.Go(func() {
			var mine Stats
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				t0 := time.Now()
				_, err := c.GenId(ctx)
				el := time.Since(t0)
				cancel()
				if err != nil {
					mine.Errors++
					if mine.First == nil {
						mine.First = err
					}
					continue
				}
				mine.Lat = append(mine.Lat, el)
			}
			mu.Lock()
			all.Lat = append(all.Lat, mine.Lat...)
			all.Errors += mine.Errors
			if all.First == nil {
				all.First = mine.First
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}
