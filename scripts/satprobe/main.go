// Command satprobe measures the embedded service at saturation with nothing
// else in the process: goroutines call GenId in a loop for a window, and it
// prints the share of the bit budget reached and the process's CPU per wall
// second (rusage), so the cost of waiting for the next unit can be read
// apart from a harness's own work.
//
//	go run ./scripts/satprobe -type min-granularity -goroutines 1 -window 2s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	typeName := flag.String("type", "min-granularity", "max-peak or min-granularity")
	pop := flag.String("populator", service.DefaultPopulator, "lock, sync, atomic or packed")
	goroutines := flag.Int("goroutines", 1, "callers")
	window := flag.Duration("window", 2*time.Second, "how long to call")
	flag.Parse()
	typ, err := intf.ParseIdType(*typeName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	svc, err := service.New(ctx, service.Settings{Type: typ, Populator: *pop, NoDataDir: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer svc.Close()
	l, _ := typ.Layout()
	budget := float64(l.Seq.Max()+1) * float64(time.Second/l.Unit)
	var n, errs atomic.Int64
	deadline := time.Now().Add(*window)
	c0, t0 := cpu(), time.Now()
	var wg sync.WaitGroup
	for range *goroutines {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if _, err := svc.GenId(ctx); err != nil {
					errs.Add(1)
					continue
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	el, c := time.Since(t0).Seconds(), cpu()-c0
	fmt.Printf("%s/%s goroutines=%d ids/s=%.0f budget=%.1f%% cores=%.2f errors=%d\n",
		typ, *pop, *goroutines, float64(n.Load())/el, 100*float64(n.Load())/el/budget, c.Seconds()/el, errs.Load())
}
