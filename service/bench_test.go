package service_test

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/sysclock"
)

// Benchmarks of the core, per populator × type. scripts/bench.sh runs them
// and turns the output into the table in docs/benchmarks.md.
//
//   - BenchmarkSustained: the real system clock, for a fixed window of
//     wall time: how many IDs per second the service sustains against the
//     bit budget of the layout (budget% = ids/s ÷ budget).
//   - BenchmarkCPU: a counting fake clock that moves one unit every
//     cpuClockPerUnit reads, so a unit's sequence never runs out: the CPU
//     cost of one GenId (ns/op, allocs/op) without the budget's waits.
//   - BenchmarkGenIds1000: one GenIds(1000) batch, same kind of clock.

var sustainFor = flag.Duration("vesta.sustain", 2*time.Second,
	"wall time of the measured window of each BenchmarkSustained run (rounded to whole time units)")

// budgetPerSecond is the bit budget of one machine id: 2^20 per second for
// max-peak, 2^10 per millisecond for min-granularity.
func budgetPerSecond(typ intf.IdType) float64 {
	if typ == intf.MaxPeak {
		return 1 << 20
	}
	return 1024 * 1000
}

func benchSvc(b *testing.B, pop string, typ intf.IdType, clk service.Clock) *service.Service {
	b.Helper()
	svc, err := service.New(bg, service.Settings{Populator: pop, Type: typ, Clock: clk, NoDataDir: true, Logger: discardLog})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = svc.Close() })
	return svc
}

// BenchmarkSustained ignores b.N: each run measures one window of
// -vesta.sustain wall time (run it with -benchtime=1x). The window starts
// and ends on time-unit boundaries of the service's clock, and only IDs
// whose time field lies inside it count, so the rate can be compared with
// the budget exactly: a run that started in the middle of a second could
// otherwise spend that whole second's sequence in part of it. The
// goroutines are already issuing when the window opens. ns/op is reported
// as wall time per ID at the measured rate.
func BenchmarkSustained(b *testing.B) {
	for _, pop := range service.Populators() {
		for _, typ := range bothTypes {
			for _, g := range []int{1, 64} {
				b.Run(fmt.Sprintf("%s/%s/g=%d", pop, typ, g), func(b *testing.B) { sustained(b, pop, typ, g) })
			}
		}
	}
}

func sustained(b *testing.B, pop string, typ intf.IdType, g int) {
	clk := sysclock.New()
	svc := benchSvc(b, pop, typ, clk)
	l, _ := typ.Layout()
	unit := int64(l.Unit)
	units := max(1, int64(*sustainFor)/unit)
	epochNanos := intf.DefaultEpochMillis * int64(time.Millisecond)
	// Open the window at the first unit boundary at least 50 ms away, so
	// that the goroutines are running by then.
	first := (clk.NowNanos()-epochNanos+int64(50*time.Millisecond))/unit + 1
	end := first + units
	var (
		counted atomic.Int64
		stop    atomic.Bool
		errOnce sync.Once
		runErr  error
		wg      sync.WaitGroup
	)
	b.ResetTimer()
	for range g {
		wg.Go(func() {
			var n int64
			for !stop.Load() {
				id, err := svc.GenId(bg)
				if err != nil {
					errOnce.Do(func() { runErr = err })
					stop.Store(true)
					break
				}
				u := l.Time.Get(uint64(id))
				if u >= end {
					stop.Store(true)
					break
				}
				if u >= first {
					n++
				}
			}
			counted.Add(n)
		})
	}
	wg.Wait()
	b.StopTimer()
	if runErr != nil {
		b.Fatal(runErr)
	}
	seconds := float64(units*unit) / 1e9
	rate := float64(counted.Load()) / seconds
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(100*rate/budgetPerSecond(typ), "budget%")
	b.ReportMetric(1e9/rate, "ns/op")
}

// cpuClockPerUnit is how many clock reads the counting clock takes to move
// one unit: below the 1,024 sequence numbers of a min-granularity unit, so
// GenId never waits (each GenId reads the clock at least once).
const cpuClockPerUnit = 1000

// BenchmarkCPU is the CPU cost of GenId with a clock that costs one atomic
// add. serial is one goroutine; parallel is b.RunParallel with GOMAXPROCS
// goroutines on one service (the clock's counter is shared too).
func BenchmarkCPU(b *testing.B) {
	for _, pop := range service.Populators() {
		for _, typ := range bothTypes {
			l, _ := typ.Layout()
			b.Run(fmt.Sprintf("%s/%s/serial", pop, typ), func(b *testing.B) {
				svc := benchSvc(b, pop, typ, newCountingClock(testStart, l.Unit, cpuClockPerUnit))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := svc.GenId(bg); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/%s/parallel", pop, typ), func(b *testing.B) {
				svc := benchSvc(b, pop, typ, newCountingClock(testStart, l.Unit, cpuClockPerUnit))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := svc.GenId(bg); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkGenIds1000 is the cost of one GenIds(1000) batch, with a clock
// that moves one unit per read so that every batch fits one unit; ns/id is
// the cost per ID.
func BenchmarkGenIds1000(b *testing.B) {
	for _, pop := range service.Populators() {
		for _, typ := range bothTypes {
			l, _ := typ.Layout()
			b.Run(fmt.Sprintf("%s/%s", pop, typ), func(b *testing.B) {
				svc := benchSvc(b, pop, typ, newCountingClock(testStart, l.Unit, 1))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					ids, err := svc.GenIds(bg, 1000)
					if err != nil || len(ids) != 1000 {
						b.Fatal(len(ids), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/id")
			})
		}
	}
}

// BenchmarkSystemClockNowNanos is the cost of one read of the system clock,
// which every GenId pays at least once outside BenchmarkCPU.
func BenchmarkSystemClockNowNanos(b *testing.B) {
	c := sysclock.New()
	var sink int64
	for range b.N {
		sink += c.NowNanos()
	}
	if sink == 0 {
		b.Log(sink)
	}
}

// BenchmarkBorrowBurst is a burst of max-peak GenIds(100,000) batches with
// MaxBorrow 30s on the real clock: the rate a bulk import gets (one op is
// one batch; ids/s is reported). Without borrowing it would be capped at
// 2^20 IDs per second.
func BenchmarkBorrowBurst(b *testing.B) {
	svc, err := service.New(bg, service.Settings{MaxBorrow: 30 * time.Second, NoDataDir: true, Logger: discardLog})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	start := time.Now()
	for b.Loop() {
		if _, err := svc.GenIds(bg, intf.MaxBatch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*intf.MaxBatch/time.Since(start).Seconds(), "ids/s")
}
