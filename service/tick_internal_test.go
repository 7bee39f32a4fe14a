package service

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// On the real clock, a saturated min-granularity service of each populator
// keeps the present unit in its gate's sleeper (no clock read per ID):
// the IDs stay unique and increasing per goroutine, none carries a unit
// ahead of the clock's when it is returned, and once the callers stop, the
// kept unit is withdrawn. Run under -race.
func TestSaturatedServiceKeepsThePresentUnit(t *testing.T) {
	l, _ := intf.MinGranularity.Layout()
	for _, pop := range Populators() {
		t.Run(pop, func(t *testing.T) {
			svc, err := New(context.Background(), Settings{Type: intf.MinGranularity, Populator: pop, NoDataDir: true,
				Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer svc.Close()
			u := svc.units
			clk := u.clock
			const goroutines, perG = 4, 8000
			ids := make([][]intf.Id, goroutines)
			var kept sync.Once
			sawKept := false
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := 0; len(ids[g]) < perG; i++ {
						// Batches saturate it even under -race; single
						// IDs between them take the fast path.
						batch, err := svc.GenIds(context.Background(), 1+i%2*300)
						if err != nil {
							t.Error(err)
							return
						}
						unit := l.Time.Get(uint64(batch[len(batch)-1]))
						if now := (clk.NowNanos() - u.epochNanos) / u.unitNanos; unit > now {
							t.Errorf("unit %d issued at clock unit %d: ahead", unit, now)
							return
						}
						if u.current.Load() >= 0 {
							kept.Do(func() { sawKept = true })
						}
						ids[g] = append(ids[g], batch...)
					}
				})
			}
			wg.Wait()
			seen := make(map[intf.Id]bool, goroutines*perG)
			for g, list := range ids {
				for i, id := range list {
					require.False(t, seen[id], "duplicate %d", id)
					seen[id] = true
					if i > 0 {
						require.Greater(t, id, list[i-1], "goroutine %d not increasing", g)
					}
				}
			}
			assert.True(t, sawKept, "the sleeper never kept the present unit (32,000 IDs, mostly in batches: some 30 units used up)")
			// Idle now: at the next unit nobody waits, and the unit is withdrawn.
			deadline := time.Now().Add(5 * time.Second)
			for u.current.Load() >= 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			assert.EqualValues(t, -1, u.current.Load(), "the kept unit outlived the saturation")
		})
	}
}
